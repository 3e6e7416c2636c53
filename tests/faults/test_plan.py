"""Plans are a pure function of (seed, profile, sizes) and cover every fault kind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from golden_plans import GOLDEN_FILE, golden_plans, render
from hypothesis import given, settings
from hypothesis import strategies as st

import faults.scenarios
from faults.kinds import FAULT_KINDS
from faults.model import CONDITIONS, Plan, Trigger
from faults.plan import PLATFORM_KINDS, PROFILES, plan

seeds = st.integers(min_value=0, max_value=2**31)
profiles = st.sampled_from(PROFILES)
limits = st.floats(min_value=20, max_value=600)


REGENERATE = "if the change is meant: .venv/bin/python tests/faults/golden_plans.py"


def test_plans_match_the_checked_in_golden_file() -> None:
    """Across commits: the same inputs draw the same plans as when the file was written."""
    golden = json.loads(GOLDEN_FILE.read_text())
    drawn = golden_plans()
    assert [g["inputs"] for g in golden] == [d["inputs"] for d in drawn], REGENERATE
    for want, got in zip(golden, drawn, strict=True):
        assert got["plan"] == want["plan"], f"plan for {want['inputs']} changed: {REGENERATE}"


def test_plans_do_not_depend_on_the_hash_seed() -> None:
    """Across processes: set and dict orders of str keys change with PYTHONHASHSEED."""
    for hash_seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, str(GOLDEN_FILE.with_suffix(".py")), "--print"],
            env=env, capture_output=True, text=True, timeout=300, check=True,
        )
        assert done.stdout == render(), f"plans differ under PYTHONHASHSEED={hash_seed}"


@given(seeds, profiles, st.integers(1, 4), st.sampled_from([1, 3]), limits)
@settings(max_examples=200, deadline=None)
def test_same_inputs_give_the_same_plan_byte_for_byte(
    seed: int, profile: str, pods: int, brokers: int, limit: float
) -> None:
    first = json.dumps(plan(seed, profile, pods, brokers, limit).to_json(), sort_keys=True)
    second = json.dumps(plan(seed, profile, pods, brokers, limit).to_json(), sort_keys=True)
    assert first == second


@given(seeds, profiles, st.integers(1, 4), st.sampled_from([1, 3]), limits)
@settings(max_examples=200, deadline=None)
def test_plans_are_well_formed_and_round_trip(
    seed: int, profile: str, pods: int, brokers: int, limit: float
) -> None:
    drawn = plan(seed, profile, pods, brokers, limit)
    assert Plan.from_json(json.loads(json.dumps(drawn.to_json()))) == drawn
    for step in drawn.steps:
        assert step.fault in FAULT_KINDS
        assert 0 <= step.trigger.at_s < limit
        if FAULT_KINDS[step.fault].targets == "broker":
            assert brokers == 3 and step.target in {"broker-1", "broker-2", "broker-3"}


@given(seeds)
@settings(max_examples=50, deadline=None)
def test_different_seeds_usually_differ(seed: int) -> None:
    plans = {json.dumps(plan(seed + k, "all", 3, 3, 300).to_json()) for k in range(5)}
    assert len(plans) > 1


def test_every_fault_kind_appears_in_some_plan() -> None:
    seen: set[str] = set()
    for seed in range(50):
        for profile in PROFILES:
            seen |= {s.fault for s in plan(seed, profile, 3, 3, 120).steps}
    assert seen == set(FAULT_KINDS)


platform_kinds = st.frozensets(st.sampled_from(sorted(PLATFORM_KINDS)))


@given(seeds, st.sampled_from(["all", "soak"]), st.integers(1, 4), st.sampled_from([1, 3]),
       platform_kinds)
@settings(max_examples=200, deadline=None)
def test_the_broad_profiles_draw_only_what_the_platform_applies(
    seed: int, profile: str, pods: int, brokers: int, kinds: frozenset[str]
) -> None:
    """A pure function of its inputs, the platform's kinds among them (recorded, so a replay
    of plan.json draws nothing anew); a kind the platform lacks is never drawn."""
    drawn = plan(seed, profile, pods, brokers, 600, kinds)
    assert drawn == plan(seed, profile, pods, brokers, 600, set(kinds))
    assert drawn.platform_kinds == tuple(sorted(kinds))
    assert Plan.from_json(json.loads(json.dumps(drawn.to_json()))) == drawn
    assert {s.fault for s in drawn.steps} & PLATFORM_KINDS <= kinds


def test_all_means_every_kind_the_platform_applies() -> None:
    """Over 30 seeds of 60 s, `all` pulls the power, fails and slows I/O, cuts and slows
    the network where the platform can; without them its plans are what they always were."""
    seen: set[str] = set()
    for seed in range(1, 31):
        seen |= {s.fault for s in plan(seed, "all", 2, 1, 60.0, PLATFORM_KINDS).steps}
        assert plan(seed, "all", 2, 1, 60.0, ()) == plan(seed, "all", 2, 1, 60.0)
        bare = plan(seed, "all", 2, 1, 60.0)  # no platform kinds: none of them drawn
        assert not {s.fault for s in bare.steps} & PLATFORM_KINDS and not bare.platform_kinds
    assert seen >= PLATFORM_KINDS
    assert plan(1, "kill", 2, 1, 60.0, PLATFORM_KINDS).platform_kinds == ()  # not broad


JVM_REFUSED = frozenset({"delay-checkpoint", "truncate-global"})  # harness/sut/app.py's


@given(seeds, st.sampled_from(["all", "soak"]), platform_kinds)
@settings(max_examples=100, deadline=None)
def test_the_broad_profiles_leave_out_what_the_system_under_test_refuses(
    seed: int, profile: str, kinds: frozenset[str]
) -> None:
    """`all` for Kafka Streams or an app: every other kind, in as many slots."""
    drawn = plan(seed, profile, 2, 1, 120, kinds, JVM_REFUSED)
    faults = [s.fault for s in drawn.steps]
    assert faults and not set(faults) & JVM_REFUSED
    assert drawn == plan(seed, profile, 2, 1, 120, kinds, set(JVM_REFUSED))
    if profile == "all":  # a refused kind's slot goes to the next kind, not to a gap
        unrefused = plan(seed, profile, 2, 1, 120, kinds).steps
        assert len(drawn.steps) >= len([s for s in unrefused if s.fault not in JVM_REFUSED]) - 3


def test_a_targeted_profile_keeps_the_kinds_it_is_about() -> None:
    assert any(s.fault == "truncate-global"
               for s in plan(1, "KIP-406", 1, 1, 60, (), JVM_REFUSED).steps)
    assert plan(3, "checkpoint", 2, 1, 60, (), JVM_REFUSED) == plan(3, "checkpoint", 2, 1, 60)


def test_targeted_profiles_name_the_settings_they_need() -> None:
    assert plan(1, "KAFKA-8187", 2, 1, 60).config["standbys"] == 1
    assert plan(1, "KAFKA-20685", 1, 1, 60).config["guarantee"] == "exactly_once_v2"
    assert any(s.fault == "truncate-global" for s in plan(1, "KIP-406", 1, 1, 60).steps)


def test_a_trigger_with_an_unknown_condition_is_refused_at_load() -> None:
    # Before: it loaded, never held, and the step fired on its timeout as if a window had
    # been missed: a silent change of plan.
    doc = plan(1, "kill", 2, 1, 30.0).to_json()
    doc["steps"][0]["trigger"]["condition"] = "restord"
    with pytest.raises(ValueError, match="unknown trigger condition 'restord'"):
        Plan.from_json(doc)
    with pytest.raises(ValueError, match="unknown trigger condition"):
        Trigger(1.0, "commit")
    for condition in CONDITIONS:
        assert Trigger(1.0, condition).condition == condition


def test_every_scenario_is_a_profile_aimed_at_known_switches() -> None:
    """faults/scenarios: each module one scenario, found by name; a worker's scenario aims
    at switches that exist and `scenarios: true` gives the nightly its two cells; a
    release's has none (no fixed worker to run it without) and no cells, nor has a worker's
    aimed at a fault rather than a switch (`clock-jump`: the fixed worker must be valid)."""
    from faults.plan import REGISTRY
    from faults.scenarios import SCENARIOS
    from faults.scenarios.scenario import KAFKA_STREAMS, WORKER
    from harness.config.run import known_bugs
    from harness.nightly import parse_matrix

    modules = {p.stem for p in Path(faults.scenarios.__file__).parent.glob("*.py")}
    assert len(SCENARIOS) == len(modules - {"__init__", "scenario"})
    for name, scenario in SCENARIOS.items():
        assert REGISTRY[name] is scenario
        assert scenario.sut in (WORKER, KAFKA_STREAMS), name
        assert not scenario.switches or scenario.sut == WORKER, name
        assert set(scenario.switches) <= set(known_bugs()), name
        assert not scenario.in_ci or (scenario.expected and scenario.switches), name
    cells = parse_matrix({"seeds": [3], "scenarios": True}).cells
    assert {(c.profile, c.bugs) for c in cells} == {
        (name, bugs) for name, s in SCENARIOS.items() if s.sut == WORKER
        for bugs in {(), s.switches}}


def test_scenarios_have_distinct_places() -> None:
    """Their order decides where each one's profile is listed (and the golden plans'
    order): two with the same place would be ordered by their module names instead."""
    from faults.scenarios import SCENARIOS

    orders = [s.order for s in SCENARIOS.values()]
    assert len(set(orders)) == len(orders), sorted(orders)


def test_every_scenarios_expected_names_a_real_check_or_coverage_class() -> None:
    """A misspelt name in `expected` would make CI's detection test wait for an anomaly
    no check ever reports: the switch would never be caught, and the gate never pass."""
    from faults.scenarios import SCENARIOS

    known = known_catches()
    for name, scenario in SCENARIOS.items():
        assert scenario.expected <= known, (name, sorted(scenario.expected - known))


def known_catches() -> frozenset[str]:
    from checker.checks import APP_CHECKS, CHECKS
    from checker.coverage import CLASSES

    return frozenset({*CHECKS, *APP_CHECKS, *(c.name for c in CLASSES)})


def test_a_misspelt_expected_name_is_not_a_known_catch() -> None:
    assert "lost-history" in known_catches() and "lost-histroy" not in known_catches()
