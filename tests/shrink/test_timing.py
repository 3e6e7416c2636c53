"""The timing descent as pure functions: proposals only ever cut, and the descent keeps
what the (fake) oracle says still reproduces."""

from __future__ import annotations

from faults.model import Step, Trigger
from harness.shrink.timing import (
    MIN_CUT_S,
    MIN_HEAL_S,
    MIN_TIME_LIMIT_S,
    Proposal,
    Variant,
    proposals,
    shrink_timing,
)


def _variant() -> Variant:
    return Variant((
        Step(0, "kill", "pod-0", Trigger(12.0), heal_after_s=3.0),
        Step(1, "stop", "pod-1", Trigger(20.0, "commits", count=4, timeout_s=10)),
    ), 40.0)


def _size(v: Variant) -> float:
    return v.time_limit_s + sum(s.trigger.at_s + (s.heal_after_s or 0) for s in v.steps)


def test_every_proposal_cuts_and_keeps_the_steps() -> None:
    start = _variant()
    found = proposals(start)
    assert found
    for p in found:
        assert _size(p.variant) < _size(start), p.label
        assert [s.id for s in p.variant.steps] == [0, 1]
        assert [s.fault for s in p.variant.steps] == ["kill", "stop"]
        assert p.variant.steps[1].trigger.condition == "commits"
    assert found[0].variant.time_limit_s == MIN_TIME_LIMIT_S  # the biggest cut first


def test_descent_reaches_the_floors_when_timing_does_not_matter() -> None:
    end = shrink_timing(_variant(), lambda p: True)
    assert end.time_limit_s == MIN_TIME_LIMIT_S
    assert [s.trigger.at_s for s in end.steps] == [0.0, 0.0]
    assert end.steps[0].heal_after_s == MIN_HEAL_S
    assert proposals(end) == []


def test_descent_stops_at_what_the_oracle_needs() -> None:
    # The failure needs the load phase past 25 s and the kill after 6 s.
    def reproduces(p: Proposal) -> bool:
        return p.variant.time_limit_s >= 25 and p.variant.steps[0].trigger.at_s >= 6

    end = shrink_timing(_variant(), reproduces)
    assert 25 <= end.time_limit_s < 25 + 2 * MIN_CUT_S * 4
    assert 6 <= end.steps[0].trigger.at_s < 9
    assert end.steps[1].trigger.at_s == 0.0


def test_nothing_reproduces_keeps_the_start() -> None:
    start = _variant()
    assert shrink_timing(start, lambda p: False) == start


def test_keys_tell_variants_apart() -> None:
    a = _variant()
    b = proposals(a)[0].variant
    assert a.key() != b.key()
    assert a.key() == _variant().key()
