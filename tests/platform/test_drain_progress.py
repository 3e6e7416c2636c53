"""The drain's decision past its budget (harness/run/drain.py): it goes on only while the
group's lag keeps falling, never past its bound, and says how it ended (slow, stalled,
still draining), which `unavailable` then reads from meta.json."""

from __future__ import annotations

from harness.run.drain import DrainOutcome, ProgressWatch


def watch() -> ProgressWatch:
    return ProgressWatch(budget_s=60.0, bound_s=240.0, window_s=10.0)


def test_within_the_budget_the_drain_always_goes_on() -> None:
    w = watch()
    w.observe(1.0, 500)
    assert w.go_on(59.9)  # the lag has not moved, yet the budget is not spent


def test_past_the_budget_it_goes_on_while_the_lag_falls() -> None:
    w = watch()
    for t, lag in ((0.0, 900), (30.0, 600), (55.0, 400), (65.0, 200)):
        w.observe(t, lag)
    assert w.lag_at_budget == 200 and w.go_on(70.0)
    assert not w.go_on(75.0), "no fall for a whole window: stalled"


def test_a_lag_that_never_falls_ends_the_drain_at_the_budget() -> None:
    w = watch()
    for t in (0.0, 20.0, 40.0, 60.0):
        w.observe(t, 300)
    assert not w.go_on(60.0)


def test_never_past_the_bound_however_fast_it_falls() -> None:
    w = watch()
    w.observe(0.0, 10_000)
    for t in range(1, 241):
        w.observe(float(t), 10_000 - 10 * t)
    assert w.falling(240.0) and not w.go_on(240.0)


def test_a_lag_at_zero_from_the_start_is_settling_not_catching_up() -> None:
    """At 0 from the first read the drain waits for the pods to settle; past the budget
    that is no reason to go on, as before the drain could go past its budget."""
    w = watch()
    for t in (0.0, 30.0, 59.0):
        w.observe(t, 0)
    assert not w.go_on(61.0)


def test_a_fall_to_zero_past_the_budget_leaves_time_to_settle() -> None:
    """A 4.3.1 power-loss run (the windows matrix, seed 1) reached lag 0 at 75 s, past its
    60 s budget: the drain must wait for its offsets to stay put and its pods to settle,
    not end at the first read of 0 as a stall."""
    w = watch()
    w.observe(0.0, 5000)
    w.observe(60.0, 1402)
    w.observe(75.0, 0)
    assert w.go_on(75.5) and w.go_on(84.0)
    assert not w.go_on(85.5)


def test_unanswered_reads_are_no_news() -> None:
    w = watch()
    w.observe(0.0, 100)
    w.observe(62.0, 40)
    w.observe(65.0, None)
    assert w.last_lag == 40 and w.go_on(70.0)


def outcome(**kw: object) -> DrainOutcome:
    base: dict[str, object] = {"drained": False, "seconds": 75.0, "budget_s": 60.0,
                               "bound_s": 240.0}
    return DrainOutcome(**{**base, **kw})  # type: ignore[arg-type]


def test_the_verdicts() -> None:
    assert outcome(drained=True, seconds=12.0).verdict == "drained"
    assert outcome(drained=True, lag_at_budget=300).verdict == "slow"
    assert outcome(drained=True, lag_at_budget=0).verdict == "drained"  # only settling
    assert outcome(lag_at_budget=300, last_lag=290).verdict == "stalled"
    assert outcome(seconds=240.0, still_falling=True).verdict == "still-draining"
    assert outcome(gave_up=True, still_falling=True).verdict == "stalled"
    meta = outcome(drained=True, lag_at_budget=300).to_meta()
    assert meta["verdict"] == "slow" and meta["bound_s"] == 240.0
