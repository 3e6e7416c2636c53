"""The checker and the reports know a fault kind by its traits, read from the run's
plan.json; a plan written before plans carried traits reads through the one table of the
kinds' traits then."""

from __future__ import annotations

import json
from pathlib import Path

from checker.coverage.facts import FaultOp, load_facts
from checker.meta import load_meta
from common.fault_traits import (
    BEFORE_PLANS_CARRIED_TRAITS,
    TRAITS_BEFORE_PLANS_CARRIED_THEM,
    TRAITS_KEY,
    Trait,
    load_plan_traits,
    plan_traits,
)
from faults.kinds import FAULT_KINDS
from faults.model import Plan, Step, Trigger
from harness.report.coverage_why import TIMING, RunShape, why_missed
from harness.run import runinfo


def _plan(*kinds: str) -> Plan:
    steps = tuple(Step(i, kind, "pod-0", Trigger(at_s=5.0 + i)) for i, kind in enumerate(kinds))
    return Plan(seed=1, profile="kill", steps=steps)


def test_the_table_for_old_plans_is_what_the_kinds_say() -> None:
    """Kinds since added need no row (their plans carry their traits); those in the table
    had these traits when plans did not carry them."""
    for kind, traits in TRAITS_BEFORE_PLANS_CARRIED_THEM.items():
        assert FAULT_KINDS[kind].traits == traits, kind


def test_plan_json_carries_the_traits_of_the_kinds_it_uses(tmp_path: Path) -> None:
    doc = runinfo.plan_document(_plan("kill", "partition", "kill"), None)
    assert doc[TRAITS_KEY] == {"kill": ["crash-at-op", "crashes", "restarts"],
                               "partition": ["cuts-off", "interrupts-global", "silences"]}
    (tmp_path / "plan.json").write_text(json.dumps(doc))
    read = load_plan_traits(tmp_path)
    assert read.carried
    assert read.kinds_with(Trait.CRASHES) == {"kill"}  # only the plan's kinds
    assert read.kinds_with(Trait.SILENCES, Trait.CRASHES) == {"kill", "partition"}
    assert Plan.from_json(doc) == _plan("kill", "partition", "kill")  # repro reads it as ever


def test_an_old_plan_or_none_reads_as_the_kinds_were(tmp_path: Path) -> None:
    assert load_plan_traits(tmp_path) == BEFORE_PLANS_CARRIED_TRAITS  # no plan.json
    (tmp_path / "plan.json").write_text(json.dumps(_plan("pause").to_json()))  # no traits
    old = load_plan_traits(tmp_path)
    assert not old.carried
    assert old.kinds_with(Trait.CRASHES) == {"kill", "truncate-global", "power-loss"}
    (tmp_path / "plan.json").write_text("{torn")
    assert load_plan_traits(tmp_path) == BEFORE_PLANS_CARRIED_TRAITS


def test_a_trait_this_kchaos_does_not_know_is_left_out() -> None:
    read = plan_traits({TRAITS_KEY: {"kill": ["crashes", "melts"], "x": "not a list"}})
    assert read.by_kind == {"kill": frozenset({Trait.CRASHES})}


def _run_folder(tmp_path: Path, traits: dict[str, list[str]] | None) -> Path:
    """A run whose nemesis SIGKILLed pod-0 with a kind named `zap`, unknown to kchaos."""
    plan: dict[str, object] = {"steps": []}
    if traits is not None:
        plan[TRAITS_KEY] = traits
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    trace = tmp_path / "pods" / "pod-0" / "trace.jsonl"
    trace.parent.mkdir(parents=True)
    trace.write_text(json.dumps({"ts_ns": 1_000, "pid": 7, "pod": "pod-0",
                                 "event": "client-state", "to": "RUNNING"}) + "\n")
    op = {"index": 0, "time_ns": 2_000, "process": "nemesis", "type": "info", "f": "zap",
          "value": {"target": "pod-0", "phase": "start", "step": 0}}
    (tmp_path / "history.jsonl").write_text(json.dumps(op) + "\n")
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "meta.json").write_text(json.dumps({"guarantee": "x"}))
    return tmp_path


def test_the_checker_knows_a_new_kind_by_its_traits(tmp_path: Path) -> None:
    run = _run_folder(tmp_path, {"zap": ["crashes", "crash-at-op", "interrupts-global"]})
    [crash] = load_facts(run).crashes()
    assert (crash.pod, crash.pid, crash.time_ns, crash.exact) == ("pod-0", 7, 2_000, True)
    assert load_meta(run / "history").fault_traits.kinds_with(Trait.INTERRUPTS_GLOBAL) == {
        "zap"}


def test_without_its_traits_the_checker_does_not_count_it(tmp_path: Path) -> None:
    run = _run_folder(tmp_path, None)  # an old plan: the table, which has no `zap`
    assert load_facts(run).crashes() == []
    assert load_meta(run / "history").fault_traits == BEFORE_PLANS_CARRIED_TRAITS


def test_spans_follow_the_trait_across_kinds(tmp_path: Path) -> None:
    facts = load_facts(_run_folder(tmp_path, {"zap": ["silences"]}))
    [(start, end)] = facts.spans_with(Trait.SILENCES)
    assert isinstance(start, FaultOp) and (start.fault, end) == ("zap", None)
    assert facts.spans_with(Trait.FREEZES) == []


def test_the_report_says_why_by_what_a_fault_does() -> None:
    step = {"fault": "zap", "status": "healed", "applied_at_s": 1.0, "healed_at_s": 2.0}
    with_zap = plan_traits({TRAITS_KEY: {"zap": ["drops-unsynced"]}})
    assert why_missed("power-loss-unsynced", RunShape({}, [step], with_zap)) == TIMING
    without = RunShape({}, [step], plan_traits({TRAITS_KEY: {"zap": []}}))
    assert why_missed("power-loss-unsynced", without) == (
        "no fault that drops unsynced writes in the plan")
