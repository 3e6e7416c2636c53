"""The seed choice's predictor (harness/nightly/predict.py): which coverage classes a drawn
plan can reach with its settings. Plans of known steps give known classes; drawn plans
never predict a class whose faults their profile cannot draw, and fewer steps never
predict more."""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.coverage import CLASSES
from faults.kinds import FAULT_KINDS
from faults.model import Plan, Step, Trigger
from faults.plan import PLATFORM_KINDS
from faults.plan import plan as draw_plan
from harness.config.run import RunConfig, plan_settings, resolve
from harness.nightly.predict import MOMENTS, PRECONDITIONS, PlanShape, predict, predict_plan
from harness.report.coverage_why import REASONS, Needs

EOS = dict(dataclasses.asdict(RunConfig()), time_limit_s=60.0, guarantee="exactly_once_v2",
           session_timeout_ms=10_000, transaction_timeout_ms=10_000, standbys=0,
           partitions=4, pods=2, cleaner_delay_ms=600_000, restore_max_poll_records=1000)
ALOS = dict(EOS, guarantee="at_least_once")
SETTINGS_ONLY = {"single-thread", "threads-over-tasks", "standbys-unplaceable",
                 "session-over-txn", "txn-over-session", "commit-over-session"}


def _step(n: int, fault: str, target: str = "pod-0", at: float = 10.0,
          heal: float | None = None, **params: Any) -> Step:
    return Step(n, fault, target, Trigger(at), params, heal_after_s=heal)


def _predicted(config: dict[str, Any], *steps: Step) -> frozenset[str]:
    return predict_plan(Plan(seed=1, profile="all", steps=steps), config)


def test_every_class_has_one_precondition_read_from_its_definition() -> None:
    assert list(PRECONDITIONS) == [c.name for c in CLASSES]
    for cls in CLASSES:  # a class needing a trace says what it keys on; none falls through
        if cls.name not in SETTINGS_ONLY:
            assert cls.name in REASONS or cls.name in MOMENTS, cls.name
        assert PRECONDITIONS[cls.name].keys_on


def test_no_fault_predicts_only_what_settings_alone_give() -> None:
    assert _predicted(EOS) == {"exactly-once"}
    assert _predicted(dict(EOS, threads=1)) == {"exactly-once", "single-thread"}
    assert _predicted(ALOS) == {"at-least-once"}
    assert _predicted(dict(ALOS, standbys=1)) == {"at-least-once", "alos-standbys"}


def test_a_pause_makes_a_zombie_only_past_the_session() -> None:
    long_pause = _step(1, "pause", heal=20.0)
    assert "zombie" in _predicted(EOS, long_pause)
    assert "zombie" not in _predicted(EOS, _step(1, "pause", heal=5.0))
    assert "zombie" not in _predicted(dict(EOS, session_timeout_ms=30_000), long_pause)
    # Between a 10 s session and a 30 s transaction timeout: the two disagree.
    between = dict(EOS, transaction_timeout_ms=30_000)
    assert "pause-between-timeouts" in _predicted(between, long_pause)
    assert "pause-between-timeouts" not in _predicted(dict(between, guarantee="at_least_once"),
                                                      long_pause)


def test_a_kill_keys_on_the_guarantee_and_the_standbys() -> None:
    kill = _step(1, "kill", heal=2.0)
    eos = _predicted(EOS, kill)
    assert {"crash-in-txn", "crash-after-commit", "flush-then-abort",
            "restart-after-global-update"} <= eos
    assert not eos & {"standby-promoted", "zombie", "power-loss-unsynced", "restored-then-killed"}
    assert "standby-promoted" in _predicted(dict(EOS, standbys=1), kill)
    alos = _predicted(ALOS, kill)
    assert "crash-after-commit" in alos and not alos & {"crash-in-txn", "flush-then-abort"}


def test_a_crash_after_a_fault_that_moved_tasks_kills_a_restored_task() -> None:
    first, then = _step(1, "scale-out", "pod-2", at=8.0), _step(2, "kill", at=20.0, heal=2.0)
    assert "restored-then-killed" in _predicted(EOS, first, then)
    later = dataclasses.replace(first, trigger=Trigger(30.0))  # the kill comes first
    assert "restored-then-killed" not in _predicted(EOS, later, then)


def test_targets_and_triggers_count() -> None:
    # A broker's faults make no pod's moment; a step triggered past the load never fires.
    assert _predicted(EOS, _step(1, "partition", "broker-1", heal=5.0)) == {"exactly-once"}
    assert _predicted(EOS, _step(1, "kill", at=60.0, heal=2.0)) == {"exactly-once"}
    assert "cut-off-in-commit-or-rebalance" in _predicted(EOS, _step(1, "partition", heal=5.0))


def test_moves_are_told_apart_by_their_volume() -> None:
    without = _predicted(EOS, _step(1, "move", keep_volume=False))
    assert "move-full-restore" in without and "move-checkpoint-reuse" not in without
    with_volume = _predicted(EOS, _step(1, "move", keep_volume=True))
    assert "move-checkpoint-reuse" in with_volume and "move-full-restore" not in with_volume


def test_the_cleaner_in_the_run_needs_its_delay_within_the_load() -> None:
    kill = _step(1, "kill", at=10.0, heal=2.0)
    assert "cleaner-in-run" in _predicted(dict(EOS, cleaner_delay_ms=10_000), kill)
    assert "cleaner-in-run" not in _predicted(dict(EOS, cleaner_delay_ms=60_000), kill)


PROFILES = ("all", "kill", "move", "checkpoint", "power-loss", "global")


@cache
def _drawn(profile: str, seed: int) -> PlanShape:
    config = resolve({"profile": profile, "seed": seed})
    plan = draw_plan(seed, profile, config.pods, config.brokers, config.time_limit_s,
                     PLATFORM_KINDS, settings=plan_settings(config))
    return PlanShape.of(plan, dataclasses.asdict(config))


@cache
def _reachable_at_all(profile: str) -> frozenset[str]:
    """The classes no fault kind the profile ever draws rules out (over many seeds): a
    class that needs a trait only kinds outside the profile have is out."""
    traits = frozenset().union(*(FAULT_KINDS[s.fault].traits
                                 for seed in range(1, 61) for s in _drawn(profile, seed).steps))
    return frozenset(
        name for name in PRECONDITIONS
        if all(any(t in traits for t in r.traits)
               for r in REASONS.get(name, ()) if isinstance(r, Needs)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PROFILES), st.integers(0, 10**6))
def test_a_drawn_plan_predicts_only_what_its_profile_can_reach(profile: str, seed: int) -> None:
    shape = _drawn(profile, seed)
    predicted = predict(shape)
    assert predicted <= _reachable_at_all(profile)
    for name in predicted:  # each needed trait is on a pod step of the plan
        for reason in REASONS.get(name, ()):
            if isinstance(reason, Needs):
                assert shape.pod_steps(*reason.traits), (name, reason.traits)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PROFILES), st.integers(0, 10**6), st.data())
def test_fewer_steps_never_predict_more(profile: str, seed: int, data: st.DataObject) -> None:
    shape = _drawn(profile, seed)
    kept = data.draw(st.lists(st.booleans(), min_size=len(shape.steps),
                              max_size=len(shape.steps)))
    fewer = PlanShape(shape.config, tuple(s for s, k in zip(shape.steps, kept, strict=True)
                                          if k), shape.traits)
    assert predict(fewer) <= predict(shape)


@pytest.mark.parametrize(("profile", "never"), [
    ("kill", {"power-loss-unsynced", "move-full-restore", "move-checkpoint-reuse",
              "clock-jump-in-txn-or-session", "cut-off-in-commit-or-rebalance",
              "rebalance-during-checkpoint"}),
    ("checkpoint", {"zombie", "power-loss-unsynced", "move-full-restore",
                    "clock-jump-in-txn-or-session", "cut-off-in-commit-or-rebalance"}),
])
def test_a_targeted_profile_reaches_no_class_of_faults_it_never_draws(
        profile: str, never: set[str]) -> None:
    reachable = _reachable_at_all(profile)
    assert not reachable & never
    assert "crash-in-txn" in reachable  # both draw kills


@pytest.mark.parametrize("settings_given", [(), (("guarantee", "at_least_once"),)])
def test_the_pool_draws_each_seeds_plan_as_its_run_would(
        settings_given: tuple[tuple[str, str], ...]) -> None:
    from harness.nightly.matrix import DEFAULT_MATRIX, Cell, load_matrix
    from harness.nightly.seed_choice import predict_pool
    from harness.run.lifecycle import draw_run_plan

    matrix = load_matrix(DEFAULT_MATRIX)
    cell = Cell("all", 0, settings=settings_given)
    pool = predict_pool(matrix, range(1, 6))(cell)
    assert list(pool) == [1, 2, 3, 4, 5]
    for seed, predicted in pool.items():
        config = resolve({"profile": "all", "seed": seed, "time_limit_s": matrix.time_limit_s,
                          **dict(settings_given)})
        assert predicted == predict_plan(draw_run_plan(config), dataclasses.asdict(config))
