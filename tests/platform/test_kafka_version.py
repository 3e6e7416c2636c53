"""`--kafka-version`: the brokers' Kafka release as a run option (and of `kchaos kafka
up|fetch`), checked before anything is written, recorded in run.json, replayed by repro."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from cli_helpers import assert_bad_input, files_under, kchaos

from faults.plan import plan
from harness.config.options import explicit_settings, parse_run_args
from harness.config.run import resolve
from harness.kafka.jars import OLDEST_BROKER, check_kafka_version, kafka_version
from harness.run import runinfo
from harness.run.command import read_config_and_plan

OLDEST = ".".join(map(str, OLDEST_BROKER))


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    folder = tmp_path / "cwd"
    folder.mkdir()
    return folder


@pytest.mark.parametrize(("args", "says"), [
    (["run", "--kafka-version", "3.9"], ["--kafka-version '3.9'", "a Kafka release like"]),
    (["run", "--kafka-version", "latest"], ["--kafka-version 'latest'"]),
    (["run", "--kafka-version", "3.6.2"], ["--kafka-version 3.6.2", f"{OLDEST}.0 or a newer"]),
    (["run", "--kafka-version", "2.8.2"], ["--kafka-version 2.8.2", "KRaft"]),
    (["run", "--kafka-version", "3.9.1", "--bootstrap", "127.0.0.1:9092"],
     ["--kafka-version", "--bootstrap"]),
    (["kafka", "up", "--kafka-version", "3.3.2"], ["--kafka-version 3.3.2", OLDEST]),
    (["kafka", "fetch", "--kafka-version", "4.x"], ["--kafka-version '4.x'"]),
])
def test_bad_kafka_version_is_one_line_and_254(
    tmp_path: Path, cwd: Path, args: list[str], says: list[str]
) -> None:
    results = tmp_path / "results"
    env = {"KCHAOS_CACHE": str(tmp_path / "cache")}
    assert_bad_input(kchaos("--results-dir", str(results), *args, cwd=cwd, env=env,
                            timeout=60), *says)
    assert files_under(cwd) == []
    assert files_under(results) == []
    assert files_under(tmp_path / "cache") == []  # refused before any fetch


def _fake_maven(tmp_path: Path, version: str) -> dict[str, str]:
    """An `mvn` that answers as Maven does for a release Central does not serve."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mvn = bin_dir / "mvn"
    mvn.write_text(
        "#!/bin/sh\n"
        "echo '[ERROR] Failed to execute goal on project kchaos-kafka-runtime: Could not "
        "resolve dependencies for project dev.kchaos:kchaos-kafka-runtime:pom:1: "
        f"org.apache.kafka:kafka_2.13:jar:{version} was not found in "
        "https://repo.maven.apache.org/maven2'\n"
        "exit 1\n"
    )
    mvn.chmod(mvn.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "KCHAOS_CACHE": str(tmp_path / "cache")}


@pytest.mark.parametrize("command", [["kafka", "fetch"], ["kafka", "up"],
                                     ["run", "--time-limit", "10"]])
def test_a_release_maven_central_does_not_serve_says_what_to_do(
    tmp_path: Path, cwd: Path, command: list[str]
) -> None:
    env = _fake_maven(tmp_path, "3.9.77")
    results = tmp_path / "results"
    line = assert_bad_input(
        kchaos("--results-dir", str(results), *command, "--kafka-version", "3.9.77",
               cwd=cwd, env=env, timeout=120),
        "Maven Central serves no org.apache.kafka:kafka_2.13:3.9.77", "--kafka-version")
    assert kafka_version() in line  # a release to give instead
    assert files_under(results) == []  # said before a run folder exists
    assert not (tmp_path / "cache" / "kafka-3.9.77" / "libs").exists()


def test_check_kafka_version_takes_releases_from_the_oldest_on() -> None:
    for good in (f"{OLDEST}.0", "3.9.1", "4.1.2", "4.2.0-rc1"):
        assert check_kafka_version(good) == good


def _stored_run(tmp_path: Path, explicit: dict[str, object]) -> Path:
    config = resolve(explicit)
    drawn = plan(config.seed, config.profile, config.pods, config.brokers, config.time_limit_s)
    info = runinfo.initial(tmp_path, config, drawn)
    (tmp_path / "run.json").write_text(json.dumps(info))
    (tmp_path / "plan.json").write_text(json.dumps(drawn.to_json()))
    return tmp_path


def test_run_json_records_the_kafka_version_and_repro_replays_it(tmp_path: Path) -> None:
    args = parse_run_args(["--kafka-version", "3.9.1", "--profile", "kill", "--seed", "1"])
    run_dir = _stored_run(tmp_path, explicit_settings(args))
    info = json.loads((run_dir / "run.json").read_text())
    assert info["config"]["kafka_version"] == "3.9.1"
    assert info["versions"]["kafka"] == "3.9.1"  # what ran, beside the option
    config, _ = read_config_and_plan(run_dir)
    assert config.kafka_version == "3.9.1"


def test_without_the_option_the_pin_runs_and_is_recorded(tmp_path: Path) -> None:
    run_dir = _stored_run(tmp_path, {"profile": "kill"})
    info = json.loads((run_dir / "run.json").read_text())
    assert info["config"]["kafka_version"] is None  # the pin of the day: as before
    assert info["versions"]["kafka"] == kafka_version()
    config, _ = read_config_and_plan(run_dir)
    assert config.kafka_version is None


def test_an_old_run_json_without_the_setting_replays_on_the_pin(tmp_path: Path) -> None:
    run_dir = _stored_run(tmp_path, {"profile": "kill"})
    info = json.loads((run_dir / "run.json").read_text())
    del info["config"]["kafka_version"]
    (run_dir / "run.json").write_text(json.dumps(info))
    config, _ = read_config_and_plan(run_dir)
    assert config.kafka_version is None


def test_docker_brokers_take_the_image_of_the_runs_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No engine: the image asked for (built per release from its jars) is the run's."""
    from harness.platforms import docker as docker_platform
    from harness.platforms import docker_images, docker_specs

    asked: list[str | None] = []

    def ensure(client: object, tag: str | None = None, nocache: bool = False,
               version: str | None = None) -> str:
        asked.append(version)
        return docker_specs.kafka_image(version)

    monkeypatch.setattr(docker_images, "ensure_kafka_image", ensure)
    monkeypatch.setattr(docker_images, "build_client", lambda: None)
    kafka = docker_platform.DockerKafka(tmp_path, "r1", 1, client=object(),  # type: ignore[arg-type]
                                        version="3.9.1")
    assert (asked, kafka.image) == (["3.9.1"], "kchaos-kafka:3.9.1")
    pinned = docker_platform.DockerKafka(tmp_path, "r2", 1, client=object())  # type: ignore[arg-type]
    assert pinned.image == f"kchaos-kafka:{kafka_version()}"
