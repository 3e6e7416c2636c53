"""The windowed-count example as `gradle installDist` lays it out (tests/gradle_layout.py:
build/install/windowed-count, its start script in Gradle's format naming the main, lib/ with
Kafka Streams and what it brings) under SIGKILLs, seed 1: the run takes its main and
classpath from the start script, the launcher's Kafka Streams in place of lib/'s, and the
oracle finds it valid. The real thing: a broker, the pods, the nemesis, the reference, Spark."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradle_layout import EXAMPLE_MAIN, example_install, example_spec

from tests.e2e.runs import app_valid_under_kills

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]


@pytest.mark.timeout(1200)
def test_an_install_folder_is_valid_under_kills(tmp_path: Path, spark_url: str) -> None:
    _, app = app_valid_under_kills(tmp_path / "results", example_install(tmp_path),
                                   example_spec(tmp_path), spark_url)
    assert app["entry"]["app_main"] == EXAMPLE_MAIN  # the start script's: the spec names none
    assert "kafka-streams" in app["dropped_dependencies"], app
