"""The same check on local[*] and on a standalone master + worker gives the same answer."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from spark_standalone import standalone_cluster
from synth_history import Params, generate
from synth_inject import INJECTORS

from checker.check import check_history

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]


def _broken_history(history_dir: Path) -> None:
    """Several anomaly classes at once, so examples and counts are compared too."""
    h = generate(Params(seed=7, partitions=3, accounts=9, events=150, updates=6))
    rnd = random.Random(7)
    for kind in (
        "lost-history",
        "dedup-skip",
        "lost-event",
        "duplicate-output",
        "stale-checkpoint-digest",
        "stale-checkpoint-running",
        "stale-global",
    ):
        broken = INJECTORS[kind](h, rnd)
        assert broken is not None, kind
        h = broken[0]
    h.write(history_dir)


def _comparable(doc: dict) -> dict:
    # What Spark judged. Figures differ per run; `coverage` is added by check_run (the
    # `python -m checker` path) from the run folder's traces, not by Spark.
    return {k: v for k, v in doc.items() if k not in ("figures", "coverage")}


def test_local_and_standalone_cluster_agree(spark: SparkSession, tmp_path: Path) -> None:
    run = tmp_path / "run"
    _broken_history(run / "history")
    local = check_history(run / "history", spark=spark)
    assert local["verdict"] is False

    with standalone_cluster(tmp_path / "spark") as master:
        # A separate driver process: one JVM holds one SparkContext, and the test session's
        # context is local.
        env = {
            **os.environ,
            "KCHAOS_EXECUTOR_MEMORY": "1g",
            "KCHAOS_DRIVER_MEMORY": "1g",
            "KCHAOS_SHUFFLE_PARTITIONS": "2",
        }
        proc = subprocess.run(
            [sys.executable, "-m", "checker", str(run), "--spark-master", master],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=400,
        )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    remote = json.loads((run / "results.json").read_text())
    assert remote["figures"]["spark_master"] == master
    assert _comparable(remote) == json.loads(json.dumps(_comparable(local)))
