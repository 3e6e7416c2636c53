"""A shared Spark Connect server judges like an in-process Spark, for check after check,
and its processes end with it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from pyspark.sql import SparkSession
from synth_history import Params, generate
from test_checker_standalone import _broken_history, _comparable

from checker.check import check_history
from checker.session import (
    ADAPTIVE_MIN_BYTES,
    DEFAULT_SHUFFLE_PARTITIONS,
    MIN_SHUFFLE_PARTITIONS,
    session_settings_for,
    shuffle_partitions_for,
)
from checker.spark_server import (
    SparkConnectServer,
    SparkServerError,
    connect_port,
    free_port,
    wait_listening,
)
from checker.warmup import write_empty_history
from harness.shared_spark import SharedChecker, WarmSpark, shared_checker

REPO = Path(__file__).resolve().parents[2]


def test_shuffle_partitions_grow_with_the_history(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KCHAOS_SHUFFLE_PARTITIONS", raising=False)
    assert shuffle_partitions_for(500_000) == MIN_SHUFFLE_PARTITIONS  # a 60 s run
    assert shuffle_partitions_for(40 * 2**20) == 5
    assert shuffle_partitions_for(10 * 2**30) == DEFAULT_SHUFFLE_PARTITIONS
    monkeypatch.setenv("KCHAOS_SHUFFLE_PARTITIONS", "7")
    assert shuffle_partitions_for(500_000) == 7


def test_adaptive_execution_only_for_large_histories(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KCHAOS_ADAPTIVE", raising=False)
    monkeypatch.delenv("KCHAOS_SHUFFLE_PARTITIONS", raising=False)
    small = session_settings_for(500_000)  # a 60 s run: every shuffle a job of its own
    assert small["spark.sql.adaptive.enabled"] == "false"
    assert small["spark.sql.shuffle.partitions"] == str(MIN_SHUFFLE_PARTITIONS)
    assert session_settings_for(ADAPTIVE_MIN_BYTES)["spark.sql.adaptive.enabled"] == "true"
    monkeypatch.setenv("KCHAOS_ADAPTIVE", "true")
    assert session_settings_for(500_000)["spark.sql.adaptive.enabled"] == "true"


def test_a_given_spark_master_wins_over_the_shared_server(tmp_path: Path) -> None:
    given = ("--rate", "50", "--spark-master", "local[2]")
    with shared_checker(given, tmp_path) as checker:
        assert checker.extra_args == given
    with shared_checker(("--rate", "50"), tmp_path, enabled=False) as checker:
        assert checker.extra_args == ("--rate", "50")
    assert not (tmp_path / "spark-connect.log").exists()  # no server was started


def test_runs_launched_after_the_shared_server_failed_start_their_own(tmp_path: Path) -> None:
    spark = WarmSpark(tmp_path / "spark-connect.log")  # not launched: its URL is known
    shared = SharedChecker(("--rate", "50"), spark)
    assert shared.extra_args == ("--rate", "50", "--spark-master", spark.server.url)
    spark.failed = "Spark Connect server exited 1: see spark-connect.log"
    assert shared.extra_args == ("--rate", "50")


def test_only_a_local_connect_url_is_waited_for() -> None:
    assert connect_port("sc://127.0.0.1:15002") == 15002
    assert connect_port("sc://localhost:15002/;user_id=x") == 15002
    assert connect_port("sc://spark.example:15002") is None
    assert wait_listening("sc://spark.example:15002", 0.0)  # its session answers for it
    assert not wait_listening(f"sc://127.0.0.1:{free_port()}", 0.3)


def test_a_server_that_cannot_start_says_where_its_log_is(tmp_path: Path) -> None:
    server = SparkConnectServer(tmp_path / "sc.log", master="no-such-master://x")
    with pytest.raises(SparkServerError, match=r"sc\.log"):
        server.start()
    assert server.proc is None or server.proc.poll() is not None


@pytest.mark.spark
def test_connect_server_agrees_with_local_spark_run_after_run(
    spark: SparkSession, tmp_path: Path
) -> None:
    runs = [tmp_path / "run-1", tmp_path / "run-2"]
    _broken_history(runs[0] / "history")
    shutil.copytree(runs[0], runs[1])
    local = check_history(runs[0] / "history", spark=spark)
    assert local["verdict"] is False

    server = SparkConnectServer(tmp_path / "spark-connect.log", "local[2]", driver_memory="1g")
    with server:
        assert server.proc is not None
        root = psutil.Process(server.proc.pid)
        tree = [root.pid, *(p.pid for p in root.children(recursive=True))]
        for run in runs:  # one server, two checks: the second joins the warm JVM
            proc = subprocess.run(
                [sys.executable, "-m", "checker", str(run), "--spark-master", server.url],
                cwd=REPO, capture_output=True, text=True, timeout=600,
            )
            assert proc.returncode == 1, proc.stdout + proc.stderr
            remote = json.loads((run / "results.json").read_text())
            assert remote["figures"]["spark_master"] == server.url
            assert _comparable(remote) == json.loads(json.dumps(_comparable(local)))
    assert not [pid for pid in tree if psutil.pid_exists(pid)
                and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]


@pytest.mark.spark
def test_a_local_check_ignores_spark_connect_in_its_environment(tmp_path: Path) -> None:
    """pyspark would make the local session a client of SPARK_REMOTE's server, and does
    whenever SPARK_CONNECT_MODE_ENABLED is set (a Connect session sets it on its process,
    and so on every child). A check given no master starts its own Spark all the same."""
    run = tmp_path / "run"
    generate(Params(seed=1)).write(run / "history")
    nobody = f"sc://127.0.0.1:{free_port()}"  # nothing listens: a Connect check is unknown
    env = {**os.environ, "SPARK_REMOTE": nobody, "SPARK_CONNECT_MODE_ENABLED": "1"}
    proc = subprocess.run([sys.executable, "-m", "checker", str(run)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads((run / "results.json").read_text())["verdict"] is True


@pytest.mark.spark
def test_the_warm_up_runs_every_ledger_check(spark: SparkSession, tmp_path: Path) -> None:
    """The warm-up is worth its time only if its queries are the checks' own: on an empty
    history none of them may fail before it ran (a schema it no longer matches would)."""
    doc = check_history(write_empty_history(tmp_path / "history"), spark=spark)
    assert doc["checks"], doc
    failed = {name: r for name, r in doc["checks"].items() if "error" in r}
    assert not failed, failed


FALLBACK = """
import sys
from pathlib import Path
import checker.check
checker.check.CONNECT_WAIT_S = 1.0
doc = checker.check.check_run(Path(sys.argv[1]), sys.argv[2])
print(doc["figures"]["spark_master"], doc["figures"].get("spark_fallback", ""), sep="|")
"""


@pytest.mark.spark
def test_a_connect_url_nobody_serves_is_checked_on_a_local_spark(tmp_path: Path) -> None:
    run = tmp_path / "run"
    generate(Params(seed=1)).write(run / "history")
    nobody = f"sc://127.0.0.1:{free_port()}"
    proc = subprocess.run([sys.executable, "-c", FALLBACK, str(run), nobody], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    master, why = proc.stdout.strip().splitlines()[-1].split("|")
    assert master == "local[*]"
    assert nobody in why
    assert "Using incubator modules" not in proc.stderr  # Spark's launcher's, filtered out
    assert json.loads((run / "results.json").read_text())["verdict"] is True
