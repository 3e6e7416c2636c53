"""SUT kstreams: the Kafka Streams ledger app builds (once per version), bad input is
refused with one line before anything starts, and real runs are judged by the unchanged
checker: fault-free with the state updater disabled (the KAFKA-20685 control) must be
valid; a kill run gets a verdict."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from refused_run import refused_run

from faults.plan import plan
from harness.errors import UsageError
from harness.sut.kstreams import APP_DIR, KafkaStreamsApp, build, default_version
from workloads.ledger.trace_contract import STORE_OFFSETS, Emitter, emitted_by

CONTROL = "__state.updater.enabled__=false"
# The ledger checks that judge the committed records (not checkpoints, joins or the drain).
LEDGER_DATA_CHECKS = ("dedup-skip", "lost-event", "duplicate-output", "lost-history",
                      "wrong-balance")
# A run of the app takes the suite's 600 s on a busy machine (JVM pods, Spark check).
RUN_TIMEOUT_S = 1500


F = TypeVar("F", bound=Callable[..., Any])


def whole_run(test: F) -> F:
    """The marks of a test that makes a whole run of the app: a broker, Spark, minutes."""
    for mark in (pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow,
                 pytest.mark.timeout(RUN_TIMEOUT_S)):
        test = mark(test)
    return test


def kstreams_run(results: Path, spark_url: str, *args: str) -> tuple[int, Path, dict[str, Any]]:
    """`kchaos run --sut kstreams ARGS` in `results`, checked on the session's Spark:
    (its exit code, its run folder, its results.json). A run that outlasts the test's time
    is stopped and what it recorded cleaned up before the test fails."""
    command = [sys.executable, "-m", "harness", "--results-dir", str(results)]
    try:
        done = subprocess.run([*command, "run", "--sut", "kstreams", "--spark-master", spark_url,
                               *args], capture_output=True, text=True, timeout=RUN_TIMEOUT_S - 60)
    except subprocess.TimeoutExpired:
        # kchaos was SIGKILLed: stop the brokers and pods it recorded, then fail
        subprocess.run([*command, "clean"], capture_output=True, timeout=120)
        raise
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("run folder: ")]
    assert lines, f"no run folder:\n{done.stdout}\n{done.stderr[-3000:]}"
    run_dir = Path(lines[-1].removeprefix("run folder: ").strip())
    return done.returncode, run_dir, json.loads((run_dir / "results.json").read_text())


def test_a_release_that_is_no_version_is_refused() -> None:
    with pytest.raises(UsageError, match=r"release like 4\.1\.2"):
        build("latest; rm -rf /")


@pytest.mark.parametrize("args", [
    ["--sut", "kstreams", "--bugs", "KAFKA-20685"],
    ["--kstreams-version", "4.1.2"],  # without --sut kstreams
    ["--sut", "kstreams", "--streams-config", "no-equals-sign"],
    # KIP-892's setting is 4.4's: an older release is refused, never run without it
    ["--sut", "kstreams", "--kstreams-version", "4.3.1", "--set", "transactional_stores=true"],
])
def test_bad_options_are_one_line_254_and_no_run_folder(
    tmp_path: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    refused_run(tmp_path, ["--time-limit", "10", *args], capsys)


def test_fault_needing_the_control_file_hook_is_refused_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def delays(seed: int) -> bool:
        steps = plan(seed, "checkpoint", 2, 1, 30).steps
        return any(step.fault == "delay-checkpoint" for step in steps)

    seed = next(s for s in range(100) if delays(s))
    err = refused_run(tmp_path, ["--sut", "kstreams", "--profile", "checkpoint", "--seed",
                                 str(seed), "--time-limit", "30"], capsys)
    assert "delay-checkpoint" in err and "control file" in err


@pytest.mark.parametrize("version", ["3.7.0", "4.1.2", "4.2.2", "4.3.1", "4.4.0"])
def test_stale_checkpoint_is_judged_on_every_release_the_current_tree_builds(
    version: str,
) -> None:
    """Up to 4.2 from the observed .checkpoint files; from 4.3, which writes none (the
    stores keep their offsets, KIP-1035), from the stores' own report: the tree that
    builds those releases writes `store-offsets`, which the check reads."""
    sut = KafkaStreamsApp(version)
    assert sut.not_applicable == {}
    assert sut.generation.app_dir == APP_DIR
    assert STORE_OFFSETS in emitted_by(Emitter.KSTREAMS)  # test_trace_contract: it does


def test_the_pods_get_the_windows_and_store_settings_of_the_run() -> None:
    """One geometry for the pods and the checker (the run's, whole, in --windows); the
    buffer count only when not Kafka Streams' own; transactional stores as the setting."""
    from dataclasses import replace

    from harness.config.run import RunConfig
    from harness.sut.kstreams import ledger_app_args, store_settings
    from workloads.ledger.windowed import WindowSpec

    config = replace(RunConfig(), sut="kstreams", window_segment_ms=2000)
    args = ledger_app_args(config)
    assert args[0] == "--windows" and len(args) == 2
    assert WindowSpec(**dict((kv.split("=")[0], int(kv.split("=")[1]))
                             for kv in args[1].split(","))) == config.windows
    assert "--write-buffer-count" not in args and store_settings(config) == ()
    tuned = replace(config, write_buffer_count=6, transactional_stores=True)
    assert ledger_app_args(tuned)[-2:] == ("--write-buffer-count", "6")
    assert store_settings(tuned) == ("enable.transactional.statestores=true",)
    assert ledger_app_args(replace(config, sut="python")) == ()  # the worker keeps no windows


@pytest.mark.slow
def test_app_builds_once_per_version_and_sources() -> None:
    first = build(default_version())
    assert (first.folder / "kchaos-kstreams-ledger-1.jar").is_file()
    assert any("kafka-streams-" in jar for jar in first.classpath.split(":"))
    again = build(default_version())
    assert again.folder == first.folder and again.seconds == 0.0  # from the cache


@pytest.mark.slow
def test_pod_command_runs_the_app_with_the_pod_flags() -> None:
    from harness.sut import PodPaths, PodSettings

    app = KafkaStreamsApp(default_version(), (CONTROL,))
    command = app.command(PodSettings(bootstrap="b:1"), "pod-3",
                          PodPaths("/s", "/p/trace.jsonl", "/p/control.json"))
    assert command[command.index("--instance-id") + 1] == "pod-3"
    assert command[-2:] == ["--streams-config", CONTROL]
    assert "dev.kchaos.kstreams.LedgerApp" in command




@whole_run
def test_fault_free_run_with_the_control_setting_is_valid(tmp_path: Path,
                                                          spark_url: str) -> None:
    code, run_dir, doc = kstreams_run(tmp_path, spark_url, "--profile", "none", "--pods", "1",
                                      "--time-limit", "20", "--streams-config", CONTROL)
    assert code == 0 and doc["verdict"] is True, doc["anomaly_counts"]
    outputs = json.loads((run_dir / "run.json").read_text())["collect"]
    assert outputs, "nothing collected"
    assert (run_dir / "pods" / "pod-0" / "statedir.jsonl").exists()


@whole_run
def test_kill_run_is_judged_and_the_oracle_agrees_with_the_ledger_checks(
    tmp_path: Path, spark_url: str
) -> None:
    code, run_dir, doc = kstreams_run(tmp_path, spark_url, "--profile", "kill", "--seed", "1",
                                      "--time-limit", "25", "--oracle")
    assert doc["verdict"] in (True, False), doc
    assert code in (0, 1)
    # The ledger's data checks and the oracle judge the same committed records: one finds
    # lost or changed output exactly when the other does.
    checks = doc["checks"]
    ledger_valid = all(checks[name]["valid"] for name in LEDGER_DATA_CHECKS)
    assert checks["oracle"]["valid"] is ledger_valid, checks["oracle"]
    assert checks["oracle"]["details"]["compared_records"] > 0
    # The windows and sessions of the shipped app are right on this plan, which catches
    # a broken variant of them (test_kstreams_windows).
    for name in ("window-lost-history", "window-wrong"):
        assert checks[name]["valid"] is True, checks[name]
    kills = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()
             if '"nemesis"' in line]
    assert any(k["f"] == "kill" for k in kills)
    # the restarted pod's app reached RUNNING again, as its trace says
    trace = (run_dir / "pods").glob("*/trace.jsonl")
    pids = {json.loads(line)["pid"] for path in trace for line in path.read_text().splitlines()
            if '"to":"RUNNING"' in line}
    assert len(pids) >= 2


def test_kstreams_runs_are_observations_not_nightly_gates(tmp_path: Path) -> None:
    from harness.report.expect import judge
    from harness.report.summary import RunSummary

    def summary(sut: str, verdict: bool, exit_code: int) -> RunSummary:
        return RunSummary(run_dir=tmp_path, run_id=f"r-{sut}", verdict=verdict,
                          anomaly_counts={} if verdict else {"stale-checkpoint": 2},
                          profile="KAFKA-20685", seed="1", bugs=[], guarantee="exactly_once_v2",
                          started_at=None, duration_s=1.0, exit_code=exit_code, repro="", sut=sut)

    kstreams_invalid = summary("kstreams", False, 1)
    assert not kstreams_invalid.fixed_worker and kstreams_invalid.expectation_met
    assert kstreams_invalid.outcome == "kstreams observed invalid"
    assert judge([kstreams_invalid, summary("python", True, 0)]).ok
    assert not judge([summary("python", False, 1)]).ok  # the Python worker still gates
