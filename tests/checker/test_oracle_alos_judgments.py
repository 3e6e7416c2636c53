"""Which judgments a run gets under at-least-once, from the topology's stores and the input
spec's promises: all of a stateless topology's records; a stateful one only what the spec
promises, the rest said not judged; a topology whose stores were never described (the
ledger app's, a run folder from before) is never taken for stateless."""

from __future__ import annotations

from typing import Any

from checker.oracle.alos import EVERY_KEY, INCLUDED, NOT_BELOW, judgments
from checker.oracle.reference import OracleSettings


def settings(**given: Any) -> OracleSettings:
    return OracleSettings(classpath=(), app_class="x.App", sinks=("a", "b"), **given)


def test_a_stateless_topology_is_judged_on_every_record() -> None:
    j = judgments(settings(stores=()))
    assert j.judged == [f"{INCLUDED} (a, b)"] and len(j.not_judged) == 1


def test_a_stateful_topology_is_judged_on_what_the_spec_promises() -> None:
    j = judgments(settings(stores=("s",), grows={"a": "text"}, every_key=("b",)))
    assert j.judged == [f"{EVERY_KEY} (a, b)", f"{NOT_BELOW} (a)"]
    assert any("the values of b" in n for n in j.not_judged)
    silent = judgments(settings(stores=("s",), grows={"a": "long"}))
    assert any(n.startswith("b: the topology keeps state (s)") for n in silent.not_judged)
    assert not judgments(settings(stores=("s",))).judged


def test_stores_never_described_are_not_taken_for_none() -> None:
    assert not judgments(settings()).judged
    old = OracleSettings.from_meta({"oracle": {"sinks": ["a"]}})
    assert old is not None and old.stores is None and old.keeps_state
    round_trip = OracleSettings.from_meta({"oracle": settings(stores=()).to_json()})
    assert round_trip is not None and round_trip.stores == () and not round_trip.keeps_state
