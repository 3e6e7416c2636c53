"""The system-under-test seam: the pod flags the harness writes are the flags the worker
reads (each setting said once per side), plans a SUT cannot take are refused, and checks
that cannot be judged for a SUT are reported as not applicable, outside the verdict."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from checker.check import results_document
from checker.meta import Meta
from checker.model import CheckResult, not_applicable
from faults.model import Plan, Step, Trigger
from harness.config.run import RunConfig
from harness.errors import UsageError
from harness.sut import PodPaths, PodSettings, open_sut, refuse_plan
from harness.sut.python import PythonWorker
from workloads.worker.config import WorkerConfig, parse_args

PATHS = PodPaths("/v/state", "/p/trace.jsonl", "/p/control.json")


def test_pod_settings_defaults_are_run_config_defaults() -> None:
    run = RunConfig()
    settings = PodSettings(bootstrap="b:1")
    assert settings == PodSettings.from_run(run, "b:1")
    for f in fields(PodSettings):
        if f.name not in ("bootstrap", "guarantee") and hasattr(run, f.name):
            assert getattr(settings, f.name) == getattr(run, f.name), f.name
    # none given: the worker's and the ledger app's default
    assert run.guarantee is None and settings.guarantee == run.pod_guarantee == "exactly_once_v2"


def test_worker_reads_what_the_harness_writes() -> None:
    config = RunConfig(threads=3, standbys=1, guarantee="at_least_once",
                       bugs=("KAFKA-8187", "KIP-406"), commit_interval_ms=250,
                       write_buffer_bytes=4096, cleaner_delay_ms=1500, cleaner_interval_ms=500)
    settings = PodSettings.from_run(config, "127.0.0.1:9092")
    worker = parse_args(settings.argv("pod-1", PATHS))
    assert worker.instance_id == "pod-1"
    assert worker.state_dir == Path("/v/state")
    assert worker.trace_file == Path("/p/trace.jsonl")
    assert worker.control_file == Path("/p/control.json")
    assert worker.bugs == frozenset(config.bugs)
    for f in fields(PodSettings):
        # group_protocol: the worker keeps the classic one (a run refuses any other), and
        # is never passed the flag at its default
        if f.name not in ("bugs", "extra_args", "group_protocol"):
            assert getattr(worker, f.name) == getattr(settings, f.name), f.name


def test_worker_and_harness_defaults_agree() -> None:
    """The worker started by hand (docker compose) behaves like one the harness starts."""
    worker = parse_args(["--bootstrap", "b:1", "--state-dir", "/s"])
    settings = PodSettings(bootstrap="b:1")
    shared = {f.name for f in fields(PodSettings)} & {f.name for f in fields(WorkerConfig)}
    # threads: a run's sizing (2 per pod), not a behaviour; Kafka Streams' default is 1.
    behaviour = shared - {"bootstrap", "bugs", "threads"}
    assert "cleaner_interval_ms" in behaviour
    for name in behaviour:
        assert getattr(worker, name) == getattr(settings, name), name


def test_python_sut_command_and_environment() -> None:
    sut = open_sut(RunConfig())
    assert isinstance(sut, PythonWorker)
    command = sut.command(PodSettings(bootstrap="b:1"), "pod-0", PATHS)
    assert command[1:3] == ["-m", "workloads.worker"]
    assert sut.env()["PYTHONUNBUFFERED"] == "1"


def _plan(*faults: str) -> Plan:
    steps = tuple(Step(i, fault, "pod-0", Trigger(at_s=1.0)) for i, fault in enumerate(faults))
    return Plan(seed=1, profile="kill", steps=steps)


class _NoHooks(PythonWorker):
    name = "no-hooks"
    refused_faults = {"delay-checkpoint": "needs the control-file hook inside the process"}


def test_refused_fault_is_bad_input_naming_the_step() -> None:
    refuse_plan(_NoHooks(), _plan("kill", "pause"))
    with pytest.raises(UsageError, match=r"delay-checkpoint.*step 1.*control-file hook"):
        refuse_plan(_NoHooks(), _plan("kill", "delay-checkpoint"))
    refuse_plan(PythonWorker(), _plan("delay-checkpoint"))


def test_not_applicable_check_is_outside_the_verdict_and_never_valid() -> None:
    results = {"a": CheckResult(valid=True), "b": not_applicable("no trace of it")}
    doc = results_document(results, {})
    assert doc["verdict"] is True
    assert doc["checks"]["b"] == {"valid": None, "not_applicable": "no trace of it",
                                  "count": 0, "examples": []}
    unknown = results_document({"a": CheckResult(valid="unknown"), "b": results["b"]}, {})
    assert unknown["verdict"] == "unknown"


def test_meta_carries_not_applicable_checks() -> None:
    meta = Meta.from_json({"guarantee": "exactly_once_v2",
                           "not_applicable": {"stale-global": "why"}})
    assert meta.not_applicable == {"stale-global": "why"}


def test_a_sut_refuses_every_kind_that_needs_what_it_lacks() -> None:
    """Refusals follow the kinds' needs (faults.kinds): a new kind that needs the worker's
    hook is refused by the Kafka Streams SUTs without a change to them."""
    from faults.kinds import FAULT_KINDS, NEEDS
    from harness.sut.app import UserApp
    from harness.sut.base import refused_for
    from harness.sut.kstreams import KafkaStreamsApp
    from harness.sut.python import PythonWorker

    assert {k.needs for k in FAULT_KINDS.values()} - {None} == set(NEEDS)
    hooked = {k.name for k in FAULT_KINDS.values() if k.needs == "worker-hook"}
    assert hooked == {"delay-checkpoint"}
    assert set(KafkaStreamsApp.refused_faults) == hooked
    assert set(UserApp.refused_faults) == hooked | {"truncate-global"}
    assert not PythonWorker.refused_faults
    assert refused_for({}) == {}
    assert "control file" in KafkaStreamsApp.refused_faults["delay-checkpoint"]


def test_every_registered_part_has_its_implementation() -> None:
    """harness/config/suts.py and platforms.py are the data the settings read; harness.sut's
    LOADERS and harness.platforms' PARTS their code, typed (mypy checks each SUT class
    against SystemUnderTest). An entry without its code, or code under another name,
    fails here."""
    from harness.config.platforms import PLATFORMS
    from harness.config.suts import SUT_KINDS
    from harness.platforms import PARTS
    from harness.sut import LOADERS

    assert list(LOADERS) == list(SUT_KINDS)
    for name, load in LOADERS.items():
        assert load().name == name
    assert list(PARTS) == list(PLATFORMS)
