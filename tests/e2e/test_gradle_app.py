"""The windowed-count example as `gradle installDist` lays it out (tests/gradle_layout.py:
build/install/windowed-count, its start script in Gradle's format naming the main, lib/ with
Kafka Streams and what it brings) under SIGKILLs, seed 1: the run takes its main and
classpath from the start script, the launcher's Kafka Streams in place of lib/'s, and the
oracle finds it valid. The real thing: a broker, the pods, the nemesis, the reference, Spark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gradle_layout import EXAMPLE_MAIN, example_install, example_spec

from tests.e2e.runs import kchaos, outcome

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]


@pytest.mark.timeout(1200)
def test_an_install_folder_is_valid_under_kills(tmp_path: Path, spark_url: str) -> None:
    code, run_dir, printed = kchaos(
        tmp_path / "results", "run", "--sut", "app", "--app", str(example_install(tmp_path)),
        "--input", str(example_spec(tmp_path)), "--profile", "kill", "--seed", "1",
        "--time-limit", "20", "--spark-master", spark_url)
    history = (run_dir / "history.jsonl").read_text().splitlines()
    assert any('"nemesis"' in line and '"kill"' in line for line in history), "no pod killed"
    oracle = outcome(run_dir)["checks"]["oracle"]
    assert code == 0 and oracle["valid"] is True, (printed, oracle)
    assert oracle["details"]["compared_records"] > 100, oracle["details"]
    app = json.loads((run_dir / "history" / "meta.json").read_text())["app"]
    assert app["entry"]["app_main"] == EXAMPLE_MAIN  # the start script's: the spec names none
    assert "kafka-streams" in app["dropped_dependencies"], app
