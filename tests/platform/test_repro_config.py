"""A repro replays a run's settings, except a shared Spark Connect server's address: that
server (a nightly's, a test session's) is gone once its nightly ended."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from faults.plan import plan
from harness.config.run import RunConfig
from harness.run.command import read_config_and_plan


def _stored_run(tmp_path: Path, config: RunConfig) -> Path:
    drawn = plan(config.seed, config.profile, config.pods, config.brokers, config.time_limit_s)
    (tmp_path / "run.json").write_text(json.dumps({"config": config.to_json()}))
    (tmp_path / "plan.json").write_text(json.dumps(drawn.to_json()))
    return tmp_path


@pytest.mark.parametrize(("stored", "replayed"), [
    ("sc://127.0.0.1:15002", None),
    ("spark://127.0.0.1:7077", "spark://127.0.0.1:7077"),  # a cluster outlives the run
    (None, None),
])
def test_repro_forgets_only_a_shared_connect_server(
    tmp_path: Path, stored: str | None, replayed: str | None
) -> None:
    config, _ = read_config_and_plan(
        _stored_run(tmp_path, replace(RunConfig(), spark_master=stored)))
    assert config.spark_master == replayed


@pytest.mark.parametrize("platform", ["local", "docker"])
def test_repro_replays_on_the_platform_the_run_ran_on(tmp_path: Path, platform: str) -> None:
    """A docker run's replay runs on docker (test_docker_detection.py no longer replays one)."""
    replayed, _ = read_config_and_plan(
        _stored_run(tmp_path, replace(RunConfig(), platform=platform)))
    assert replayed.platform == platform
