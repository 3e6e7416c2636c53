"""The scenarios aimed at Kafka Streams' releases (faults/scenarios/*_kstreams.py): pure
functions of the seed, registered after every other profile, waiting only for what the
Kafka Streams app traces, and taking no fault the kstreams SUT refuses."""

from __future__ import annotations

import json

import pytest
from golden_plans import GOLDEN_FILE

from faults.faultfs.rules import Rule
from faults.plan import PROFILES, REGISTRY, plan, profile_config
from faults.scenarios import SCENARIOS
from faults.scenarios.kafka_8187_kstreams import (
    SPARE_CYCLES_8187,
    SPARE_PERIOD_COMMITS_8187,
    SPARE_PERIOD_S_8187,
    SPARE_STAY_COMMITS_8187,
    SPARE_STAY_MAX_S_8187,
)
from faults.scenarios.scenario import KAFKA_STREAMS
from faults.windows import PlanSettings
from harness.sut.kstreams import KafkaStreamsApp

NAMES = tuple(name for name, s in SCENARIOS.items() if s.sut == KAFKA_STREAMS)
# Conditions read from trace events the Kafka Streams app writes (workloads/kstreams*:
# txn-commit from the commit metric, restore-end from the restore listener; the legacy app,
# 2.1 to 2.5, also lock-failed and cleaner-delete from Kafka Streams' log lines, LogTrace.java).
KSTREAMS_CONDITIONS = {"commits", "restored"}
LEGACY_CONDITIONS = {"contended", "cleaned", "cleaner-deleted"}
LEGACY_ONLY = {"KAFKA-8187-kstreams", "KAFKA-8187-family"}  # aimed at 2.x: the legacy app
# From the current tree's store-flush lines (3.7 on: RocksDB's event listener).
CURRENT_CONDITIONS = {"newest-segment-flushed"}
CURRENT_ONLY = {"segment-flush-skew"}


def test_registered_after_every_other_profile() -> None:
    assert NAMES == ("KAFKA-7672-kstreams", "KAFKA-8187-kstreams", "KIP-406-kstreams",
                     "KAFKA-8187-family", "segment-flush-skew")
    assert PROFILES[-len(NAMES):] == NAMES
    assert all(REGISTRY[name] is SCENARIOS[name] for name in NAMES)


def test_the_other_profiles_plans_keep_their_golden_places() -> None:
    golden = json.loads(GOLDEN_FILE.read_text())
    others = [g for g in golden if g["inputs"][1] not in NAMES]
    for g in others:
        seed, profile, pods, brokers, limit = g["inputs"]
        settings = PlanSettings(**g["settings"]) if "settings" in g else None
        assert plan(seed, profile, pods, brokers, limit,
                    settings=settings).to_json() == g["plan"], g["inputs"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 99])
def test_plans_are_pure_functions_of_the_seed(name: str, seed: int) -> None:
    assert plan(seed, name, 1, 1, 60.0).to_json() == plan(seed, name, 1, 1, 60.0).to_json()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("limit", [40.0, 60.0, 120.0])
def test_only_conditions_the_app_traces_and_faults_it_takes(name: str, limit: float) -> None:
    refused = set(KafkaStreamsApp.refused_faults)
    for seed in range(5):
        p = plan(seed, name, 1, 1, limit)
        assert p.steps, name
        for step in p.steps:
            assert step.fault not in refused, (name, step)
            for trigger in (step.trigger, step.heal_when):
                if trigger is not None and trigger.condition is not None:
                    allowed = KSTREAMS_CONDITIONS | (
                        LEGACY_CONDITIONS if name in LEGACY_ONLY else set()) | (
                        CURRENT_CONDITIONS if name in CURRENT_ONLY else set())
                    assert trigger.condition in allowed, (name, step)
                    assert trigger.timeout_s > 0


def test_kafka_7672_kstreams_sets_what_its_window_needs() -> None:
    config = profile_config("KAFKA-7672-kstreams")
    assert config["threads"] == 2 and config["pods"] == 1
    assert config["cleaner_delay_ms"] <= 2000  # the tasks' directories gone before they return
    p = plan(1, "KAFKA-7672-kstreams", 1, 1, 60.0)
    assert [s.fault for s in p.steps] == ["scale-out", "scale-out"]
    for step in p.steps:  # the spare goes once it ran the tasks a while, however slow it was
        assert step.heal_when is not None and step.heal_when.pod == step.target


def test_kafka_8187_kstreams_sequence() -> None:
    config = profile_config("KAFKA-8187-kstreams")
    assert (config["threads"], config["standbys"], config["restart"]) == (2, 1, "never")
    limit = config["time_limit_s"]
    p = plan(1, "KAFKA-8187-kstreams", 1, 1, limit)
    spares = [f"pod-{2 + i}" for i in range(SPARE_CYCLES_8187)]
    assert [(s.fault, s.target) for s in p.steps] == [
        ("scale-out", "pod-1"), ("io-delay", "pod-0"),
        *[("scale-out", spare) for spare in spares], ("kill", "pod-1")]
    assert p.steps[1].trigger.pod == "pod-1"
    cycles = p.steps[2:2 + SPARE_CYCLES_8187]
    for spare in cycles:  # each spare leaves once it ran tasks, however slow its start ...
        assert spare.heal_when is not None and spare.heal_when.pod == spare.target
        assert spare.heal_when.count == SPARE_STAY_COMMITS_8187
        # ... and before the next one starts: its leave is a rebalance of its own.
        assert spare.heal_when.timeout_s < SPARE_PERIOD_S_8187
    # One period apart, counted in pod-1's commits (at most a period in time), all from
    # the delay's moment: the plan runs its steps in `at_s` order, the kill after them.
    assert {s.trigger.at_s for s in p.steps[1:]} == {p.steps[1].trigger.at_s}
    for i, spare in enumerate(cycles[1:], start=1):
        assert (spare.trigger.condition, spare.trigger.pod) == ("commits", "pod-1")
        assert spare.trigger.count == i * SPARE_PERIOD_COMMITS_8187
        assert spare.trigger.timeout_s == i * SPARE_PERIOD_S_8187
    # The kill follows the system: the directory of a standby that failed its lock is
    # gone (any pod, counted from the delay's start, so a contention in any cycle
    # counts); else its deadline, after the last spare's stay, which leaves the failover
    # time before the end.
    kill = p.steps[-1]
    assert kill.trigger.condition == "cleaned"
    assert kill.trigger.at_s == p.steps[1].trigger.at_s
    deadline = kill.trigger.at_s + kill.trigger.timeout_s
    assert deadline == pytest.approx(limit - 20.0, abs=0.1)
    last = cycles[-1].trigger
    assert deadline > last.at_s + last.timeout_s + SPARE_STAY_MAX_S_8187


def test_kip_406_kstreams_cuts_the_running_consumer() -> None:
    p = plan(1, "KIP-406-kstreams", 1, 1, 60.0)
    assert [s.fault for s in p.steps] == ["truncate-global"] * 4
    assert all(s.params.get("live") is True for s in p.steps)
    # Each pair: the second cut right after the first (no condition, the same at_s), so the
    # consumer cannot fetch in between.
    for first, second in (p.steps[0:2], p.steps[2:4]):
        assert first.trigger.condition == "commits"
        assert second.trigger.condition is None and second.trigger.at_s == first.trigger.at_s


@pytest.mark.parametrize("seed", [1, 2, 3, 99])
def test_kafka_8187_family_moves_tasks_back_while_a_slowed_pass_runs(seed: int) -> None:
    """The window: at-least-once (under exactly-once the constructor's checkpoint delete
    touches the directory and the cleaner leaves it), one thread and one spare (the tasks
    come back to the thread that waits for the pass), a short cleaner delay (the moved
    tasks' directories are obsolete within seconds), every delete under the task
    directories slowed from the start, and the spare's leave at the pass's first delete."""
    config = profile_config("KAFKA-8187-family")
    assert (config["guarantee"], config["threads"], config["standbys"]) == (
        "at_least_once", 1, 0)
    assert config["cleaner_delay_ms"] <= 2000 and config["partitions"] >= 4
    p = plan(seed, "KAFKA-8187-family", 1, 1, config["time_limit_s"])
    assert [(s.fault, s.target) for s in p.steps] == [("io-delay", "pod-0"),
                                                      ("scale-out", "pod-1")]
    slow, spare = p.steps
    assert slow.trigger.at_s == 0.0 and slow.heal_after_s is None and slow.heal_when is None
    rule = Rule.from_json({**slow.params, "delay_ms": slow.params["ms"]})
    assert rule.delay_ms > 0 and rule.ops == ("unlink",)  # the fault filesystem's rmdir too
    assert rule.matches("unlink", "/ledger-app/0_4/rocksdb/balances/000009.sst")
    assert rule.matches("unlink", "/ledger-app/0_4/.checkpoint")
    assert not rule.matches("unlink", "/ledger-app/global/rocksdb/accounts/000009.sst")
    assert not rule.matches("fsync", "/ledger-app/0_4/.checkpoint")
    heal = spare.heal_when
    assert heal is not None and (heal.condition, heal.pod, heal.count) == (
        "cleaner-deleted", "pod-0", 1)
    # Its deadline leaves the pass and the damaged tasks' running time before the end.
    assert spare.trigger.at_s + heal.at_s + heal.timeout_s < config["time_limit_s"] - 30.0
