"""The search with a fake runner and a fake clock: K/M with early stops, the budget, the
log of every candidate, and the smallest variant that reproduced."""

from __future__ import annotations

import pytest
from shrink_fixtures import STEPS

from harness.shrink.search import RunResult, Search
from harness.shrink.timing import Variant

ORIGINAL = Variant(STEPS, 40.0)


class FakeRuns:
    """The failure needs steps 1 and 2 and a load phase of 20 s or more; every `flaky`-th
    run misses anyway. Each run takes `seconds` on the fake clock."""

    def __init__(self, seconds: float = 60.0, flaky: int = 0) -> None:
        self.now = 0.0
        self.seconds = seconds
        self.flaky = flaky
        self.count = 0

    def clock(self) -> float:
        return self.now

    def __call__(self, v: Variant) -> RunResult:
        self.now += self.seconds
        self.count += 1
        ids = {s.id for s in v.steps}
        hit = {1, 2} <= ids and v.time_limit_s >= 20
        if self.flaky and self.count % self.flaky == 0:
            hit = False
        return RunResult(f"runs/r{self.count}", ("lost-history",) if hit else ("unavailable",),
                         1, self.seconds)


def _search(runs: FakeRuns, times: int = 3, hits: int = 2, budget: float = 1e9) -> Search:
    return Search(runs, ("lost-history",), times, hits, budget, clock=runs.clock)


def test_shrinks_steps_then_timing() -> None:
    runs = FakeRuns()
    search = _search(runs)
    best = search.shrink(ORIGINAL)
    assert best is not None
    assert [s.id for s in best.steps] == [1, 2]
    assert 20 <= best.time_limit_s <= 25  # 40 -> 25 (halfway to the floor); 17.5 misses
    assert not search.stopped_by_budget
    assert search.candidates[0].phase == "baseline"
    assert {c.phase for c in search.candidates} == {"baseline", "steps", "timing"}


def test_reruns_stop_once_decided() -> None:
    runs = FakeRuns()
    search = _search(runs, times=3, hits=2)
    search.shrink(ORIGINAL)
    for c in search.candidates:
        # reproduces: 2 hits in 2 runs; does not: 2 misses settle it (2 > 3 - 2)
        assert len(c.runs) == 2, c.to_json()
        assert c.hits == (2 if c.reproduced else 0)


def test_flaky_candidates_need_m_of_k() -> None:
    runs = FakeRuns(flaky=3)  # every third run misses
    search = _search(runs, times=3, hits=2)
    best = search.shrink(ORIGINAL)
    assert best is not None and {s.id for s in best.steps} == {1, 2}
    assert any(c.reproduced and len(c.runs) - c.hits > 0 for c in search.candidates)


def test_the_budget_keeps_the_best_so_far() -> None:
    runs = FakeRuns(seconds=60.0)
    search = _search(runs, times=1, hits=1, budget=60.0 * 5)
    best = search.shrink(ORIGINAL)
    assert search.stopped_by_budget
    assert runs.now <= 60.0 * 5
    assert best is not None and len(best.steps) < len(STEPS)
    assert {1, 2} <= {s.id for s in best.steps}


def test_an_original_that_does_not_reproduce_shrinks_nothing() -> None:
    runs = FakeRuns()
    search = _search(runs)
    assert search.shrink(Variant(STEPS[:1], 40.0)) is None
    assert len(search.candidates) == 1 and search.candidates[0].reproduced is False


def test_a_candidate_is_never_run_twice() -> None:
    runs = FakeRuns()
    search = _search(runs, times=1, hits=1)
    search.shrink(ORIGINAL)
    keys = [c.variant.key() for c in search.candidates]
    assert len(keys) == len(set(keys))


def test_harness_errors_are_misses() -> None:
    def broken(v: Variant) -> RunResult:
        return RunResult("", ("lost-history",), 255, 1.0, error="broker did not start")

    search = Search(broken, ("lost-history",), 2, 1, 100.0)
    assert search.shrink(ORIGINAL) is None
    assert search.candidates[0].hits == 0


def test_m_above_k_is_refused() -> None:
    with pytest.raises(ValueError):
        Search(FakeRuns(), ("x",), 2, 3, 10.0)
