"""`kchaos bisect`'s search on fake replays: it finds the one boundary of any range in
about log2(n) judged releases, stops each release's replays once M of K is settled, and
says so when both ends agree."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.bisect.search import Bisection, ReplayFailed
from harness.errors import UsageError
from harness.kafka.releases import in_range, release_key, releases
from harness.shrink.search import RunResult

VERSIONS = [f"4.{minor}.{patch}" for minor in range(4) for patch in range(3)]


def fake(reproduces: dict[str, bool], calls: list[str]) -> object:
    def replay(version: str) -> RunResult:
        calls.append(version)
        found = ("dedup-skip",) if reproduces[version] else ()
        return RunResult(f"runs/{version}-{len(calls)}", found, 1 if found else 0, 1.0)
    return replay


@given(st.integers(2, 40), st.data(), st.booleans())
def test_finds_the_one_boundary_of_any_range(n: int, data: st.DataObject, fixed: bool) -> None:
    versions = [f"3.{i}.0" for i in range(n)]
    boundary = data.draw(st.integers(1, n - 1))  # index of the first release on the new side
    reproduces = {v: (i < boundary) == fixed for i, v in enumerate(versions)}
    calls: list[str] = []
    search = Bisection(versions, fake(reproduces, calls), ("dedup-skip",), 3, 2)  # type: ignore[arg-type]
    answer = search.run()
    assert (answer.older, answer.newer) == (versions[boundary - 1], versions[boundary])
    assert answer.older_reproduces is fixed
    assert len(search.trials) <= math.ceil(math.log2(n)) + 2
    assert len(calls) == 2 * len(search.trials)  # M of K settled after 2 agreeing replays


def test_both_ends_agreeing_is_no_boundary_and_says_which() -> None:
    calls: list[str] = []
    search = Bisection(VERSIONS, fake(dict.fromkeys(VERSIONS, False), calls), ("dedup-skip",),  # type: ignore[arg-type]
                       3, 2)
    answer = search.run()
    assert answer.older is None and not answer.older_reproduces
    assert answer.sentence() == "no release in the range reproduces"


def test_the_failing_run_counts_as_its_release_first_replay() -> None:
    calls: list[str] = []
    reproduces = {v: release_key(v) < (4, 2) for v in VERSIONS}
    original = RunResult("results/original", ("dedup-skip",), 1, 0.0)
    search = Bisection(VERSIONS, fake(reproduces, calls), ("dedup-skip",), 3, 2,  # type: ignore[arg-type]
                       known={VERSIONS[0]: original})
    answer = search.run()
    assert answer.sentence() == "last release that reproduces: 4.1.2; first that does not: 4.2.0"
    assert calls.count(VERSIONS[0]) == 1 and search.trials[VERSIONS[0]].runs[0] is original


def test_a_replay_that_cannot_run_stops_the_search() -> None:
    def broken(version: str) -> RunResult:
        return RunResult("", (), 255, 0.0, error="could not build the Kafka Streams app")
    with pytest.raises(ReplayFailed, match="could not build"):
        Bisection(VERSIONS, broken, ("dedup-skip",), 3, 2).run()


def test_releases_are_ordered_final_releases_from_the_metadata() -> None:
    xml = "".join(f"<version>{v}</version>" for v in
                  ["4.10.0", "4.2.0", "4.2.0-rc1", "0.10.0.0", "3.7.0", "4.1.12", "4.1.2"])
    assert releases(xml) == ["3.7.0", "4.1.2", "4.1.12", "4.2.0", "4.10.0"]


def test_ranges_are_inclusive_and_refused_when_empty_or_malformed() -> None:
    served = ["2.0.1", "2.1.1", "4.1.2", "4.2.0", "4.2.2"]
    assert in_range(served, "4.1.2..4.2.2", "4.1.2") == ["4.1.2", "4.2.0", "4.2.2"]
    assert in_range(served, "", "4.2.0") == ["4.2.0", "4.2.2"]
    assert in_range(served, "..4.1.2", "4.2.0") == ["2.1.1", "4.1.2"]  # the app's oldest
    for bad in ("4.2.2..4.2.2", "9.0.0..", "4.1", "4.1.x..4.2.0"):
        with pytest.raises(UsageError):
            in_range(served, bad, "4.1.2")
