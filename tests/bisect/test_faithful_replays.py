"""A bisect replay that fell short of the plan it replays (a step skipped, or fired on its
timeout where the original's condition held) is not counted as "does not reproduce": the
release gets more replays, and one that never gets a faithful replay is undecided."""

from __future__ import annotations

import re
from typing import Any

import pytest

from harness.bisect.faithful import shortfalls
from harness.bisect.search import Bisection, Undecided
from harness.shrink.search import RunResult


def step(id: int, status: str = "healed", met: bool | None = True) -> dict[str, Any]:
    return {"id": id, "fault": "kill", "target": "pod-0", "status": status,
            "condition_met": met, "trigger": {"condition": "flushed-in-txn"}}


def test_a_replay_that_did_what_the_original_did_has_no_shortfall() -> None:
    assert shortfalls([step(0), step(1)], [step(0), step(1)]) == ()


def test_a_condition_that_held_in_the_original_and_timed_out_in_the_replay() -> None:
    assert shortfalls([step(0), step(1)], [step(0), step(1, met=False)]) == (
        "step 1 (kill pod-0): flushed-in-txn did not hold",)


def test_a_condition_that_timed_out_in_the_original_too_is_not_a_shortfall() -> None:
    # the legacy app traces no `cleaner-deleted`: its steps fire on their timeouts always
    assert shortfalls([step(0, met=False)], [step(0, met=False)]) == ()


def test_a_skipped_or_missing_step_is_a_shortfall() -> None:
    assert shortfalls([step(0), step(1)], [step(0, status="skipped")]) == (
        "step 0 (kill pod-0) skipped", "step 1 (kill pod-0) missing")


def replays(outcomes: list[str]) -> Any:
    """Each call the next outcome: 'hit', 'miss' or 'short' (a miss that fell short)."""
    calls = iter(outcomes)

    def replay(version: str) -> RunResult:
        outcome = next(calls)
        return RunResult(f"runs/{version}", ("dedup-skip",) if outcome == "hit" else (),
                         1 if outcome == "hit" else 0, 1.0,
                         shortfalls=("step 0 (kill pod-0): flushed-in-txn did not hold",)
                         if outcome == "short" else ())
    return replay


def test_a_miss_that_fell_short_is_replayed_not_counted() -> None:
    search = Bisection(["4.1.0", "4.2.0"], replays(["hit", "hit", "short", "miss", "miss"]),
                       ("dedup-skip",), 3, 2)
    answer = search.run()
    assert answer.sentence() == "last release that reproduces: 4.1.0; first that does not: 4.2.0"
    trial = search.trials["4.2.0"]
    assert (len(trial.runs), trial.unreached, trial.counted, trial.hits) == (3, 1, 2, 0)


def test_a_hit_counts_even_if_the_replay_fell_short() -> None:
    search = Bisection(["4.1.0"], replays([]), ("dedup-skip",), 3, 2)
    search.replay = lambda v: RunResult("r", ("dedup-skip",), 1, 1.0, shortfalls=("x",))
    assert search.judge("4.1.0") is True


def test_a_release_that_always_falls_short_is_undecided_not_fixed() -> None:
    search = Bisection(["4.1.0", "4.2.0"], replays(["hit", "hit"] + ["short"] * 6),
                       ("dedup-skip",), 3, 2)
    with pytest.raises(Undecided, match=re.escape("4.2.0: 6 of 6 replays fell short")):
        search.run()
    assert search.trials["4.2.0"].unreached == 6  # kept as evidence
