"""docker-compose.yml, Dockerfile and .dockerignore say what the harness expects (no engine:
the compose file is read as YAML, its interpolation and the brokers' sizing script are
evaluated here the way Compose and the container's shell would)."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.config.run import RunConfig
from harness.kafka.jars import kafka_version
from harness.platforms.docker_specs import (
    KAFKA_CONTROLLER_PORT,
    KAFKA_DATA_DIR,
    KAFKA_EXTERNAL_PORT,
    KAFKA_INTERNAL_PORT,
    POD_MOUNT,
    SOURCE_DIRS,
    STATE_MOUNT,
    kafka_image,
    kafka_properties,
    property_env,
)
from harness.sut.base import PodPaths, PodSettings
from harness.sut.python import WORKER_MODULE
from workloads.worker.config import parse_args

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
# Set by the image's launcher for the JVM, not broker properties.
WRAPPER_ENV = {"KAFKA_HEAP_OPTS"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's interpolation for the forms the file uses: ${VAR}, ${VAR:-default}, $$."""
    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, default = match.group(1), match.group(3)
        return env.get(name) or (default if default is not None else "")

    return re.sub(r"\$\$|\$\{(\w+)(:-([^}]*))?\}", one, value)


def kafka_env(service: dict[str, Any], brokers: int) -> dict[str, str]:
    """The environment the broker process gets: the service's, interpolated, then the
    sizing script run by /bin/sh with `exec env` in place of the image's launcher."""
    shell_env = {"KCHAOS_BROKERS": str(brokers)}
    env = {k: interpolate(str(v), shell_env) for k, v in service["environment"].items()}
    # Not `command`: the image's ENTRYPOINT (kafka-run.sh) would take it as its arguments.
    assert "command" not in service
    command = [interpolate(part, shell_env) for part in service["entrypoint"]]
    assert command[:2] == ["/bin/sh", "-c"]
    assert command[2].rstrip().endswith("exec /opt/kafka/kafka-run.sh broker")
    script = command[2].replace("exec /opt/kafka/kafka-run.sh broker", "exec env")
    result = subprocess.run(["/bin/sh", "-c", script], env={"PATH": os.defpath, **env},
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)


def test_compose_names_the_services_and_profiles(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"kafka-1", "kafka-2", "kafka-3", "topics", "worker"} <= set(services)
    assert "profiles" not in services["kafka-1"]  # `docker compose up`: one broker
    assert services["kafka-2"]["profiles"] == ["three"]
    assert services["kafka-3"]["profiles"] == ["three"]
    assert "profiles" not in services["worker"]


def test_kafka_image_is_the_pinned_release(compose: dict[str, Any]) -> None:
    for n in (1, 2, 3):
        assert compose["services"][f"kafka-{n}"]["image"] == f"kchaos-kafka:{kafka_version()}"
    assert kafka_image() == f"kchaos-kafka:{kafka_version()}"


def test_kraft_identity(compose: dict[str, Any]) -> None:
    ids = set()
    for n in (1, 2, 3):
        env = compose["services"][f"kafka-{n}"]["environment"]
        assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
        assert env["KAFKA_CONTROLLER_LISTENER_NAMES"] == "CONTROLLER"
        assert int(env["KAFKA_NODE_ID"]) == n
        ids.add(env["CLUSTER_ID"])
        assert env["KAFKA_ADVERTISED_LISTENERS"].startswith(
            f"INTERNAL://kafka-{n}:{KAFKA_INTERNAL_PORT},EXTERNAL://localhost:"
        )
    (cluster_id,) = ids  # one cluster
    assert len(base64.urlsafe_b64decode(cluster_id + "==")) == 16 and cluster_id[0] != "-"


@pytest.mark.parametrize("brokers", [1, 3])
def test_broker_settings_match_broker_properties(compose: dict[str, Any], brokers: int) -> None:
    for node_id in range(1, brokers + 1):
        service = compose["services"][f"kafka-{node_id}"]
        env = kafka_env(service, brokers)
        expected = kafka_properties("compose", node_id, brokers, host_port=0)
        voters = ",".join(f"{n}@kafka-{n}:{KAFKA_CONTROLLER_PORT}" for n in range(1, brokers + 1))
        expected["controller.quorum.voters"] = voters
        address, host_port_text, _ = service["ports"][0].split(":")
        assert address == "127.0.0.1"  # published for this machine only
        host_port = int(host_port_text)
        expected["advertised.listeners"] = (
            f"INTERNAL://kafka-{node_id}:{KAFKA_INTERNAL_PORT},EXTERNAL://localhost:{host_port}"
        )
        for key, value in expected.items():
            assert env.get(property_env(key)) == str(value), key
        # ... and nothing the harness's brokers do not have.
        wanted = {property_env(key) for key in expected} | WRAPPER_ENV
        extra = {k for k in env if k.startswith("KAFKA_")} - wanted
        assert not extra
        assert env["KAFKA_LOG_DIRS"] == KAFKA_DATA_DIR
        assert service["volumes"] == [f"kafka-{node_id}-data:{KAFKA_DATA_DIR}"]
        assert service["ports"][0].endswith(f":{KAFKA_EXTERNAL_PORT}")


def test_crash_test_settings(compose: dict[str, Any]) -> None:
    env = kafka_env(compose["services"]["kafka-1"], 1)
    assert env["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false"
    assert env["KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS"] == "0"
    assert int(env["KAFKA_TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS"]) <= 1000
    assert int(env["KAFKA_TRANSACTION_MAX_TIMEOUT_MS"]) <= 60000


def test_a_three_node_broker_refuses_a_one_node_cluster(compose: dict[str, Any]) -> None:
    service = compose["services"]["kafka-2"]
    env = {k: interpolate(str(v), {}) for k, v in service["environment"].items()}
    script = interpolate(service["entrypoint"][2], {})
    result = subprocess.run(["/bin/sh", "-c", script], env={"PATH": os.defpath, **env},
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "KCHAOS_BROKERS=3 docker compose --profile three up" in result.stderr


def test_healthcheck_asks_the_internal_listener(compose: dict[str, Any]) -> None:
    test = compose["services"]["kafka-1"]["healthcheck"]["test"]
    assert test == ["CMD", "/opt/kafka/kafka-run.sh", "ready"]
    run_script = (ROOT / "dockerfiles" / "kafka-run.sh").read_text()
    assert f"${{KAFKA_READY_PORT:-{KAFKA_INTERNAL_PORT}}}" in run_script


@pytest.mark.parametrize("key", ["log.dirs", "transaction.state.log.min.isr",
                                 "share.coordinator.state.topic.replication.factor",
                                 "some_key.with-dash"])
def test_broker_image_reverses_the_env_rule(key: str) -> None:
    """kafka-run.sh turns every KAFKA_* env back into the property it came from."""
    script = (ROOT / "dockerfiles" / "kafka-run.sh").read_text()
    function = script[script.index("property_name() {"):script.index("\n}\n", script.index(
        "property_name() {")) + 3]
    done = subprocess.run(["bash", "-c", f"{function}\nproperty_name {property_env(key)}"],
                          capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == key


def test_worker_command_is_worker_config_argv(compose: dict[str, Any]) -> None:
    defaults = RunConfig()
    expected = PodSettings.from_run(defaults, f"kafka-1:{KAFKA_INTERNAL_PORT}").argv(
        "pod-0", PodPaths(STATE_MOUNT, f"{POD_MOUNT}/trace.jsonl", f"{POD_MOUNT}/control.json")
    )
    worker = compose["services"]["worker"]
    assert [str(part) for part in worker["command"]] == expected
    parsed = parse_args(expected)  # and the worker accepts it
    assert parsed.instance_id == "pod-0" and str(parsed.state_dir) == STATE_MOUNT


def test_worker_service_volumes_build_and_order(compose: dict[str, Any]) -> None:
    worker, topics = compose["services"]["worker"], compose["services"]["topics"]
    assert worker["build"]["context"] == "." and worker["image"] == topics["image"]
    assert worker["build"]["args"]["BASE_IMAGE"] == "${KCHAOS_BASE_IMAGE:-kchaos-base:bookworm}"
    mounts = dict(v.split(":", 1)[::-1] for v in worker["volumes"])
    assert mounts[STATE_MOUNT] in compose["volumes"]  # a named volume for the state dir
    assert mounts[POD_MOUNT] in compose["volumes"]
    assert worker["depends_on"]["topics"]["condition"] == "service_completed_successfully"
    assert topics["depends_on"]["kafka-1"]["condition"] == "service_healthy"
    script = topics["entrypoint"][2]
    assert "from harness" not in script  # the worker image has the worker only
    for name in ("INPUT_TOPIC", "OUTPUT_TOPIC", "ACCOUNTS_TOPIC", '"compact,delete"'):
        assert name in script


def test_dockerfiles_build_from_a_base_argument() -> None:
    for path in (ROOT / "Dockerfile", ROOT / "dockerfiles" / "kafka.Dockerfile"):
        text = path.read_text()
        assert re.search(r"^ARG BASE_IMAGE=kchaos-base:bookworm$", text, re.M), path
        assert re.search(r"^FROM \$\{BASE_IMAGE\}( AS \w+)?$", text, re.M), path
        assert "<<" not in text  # no heredocs: the engine's classic builder has none


def test_dockerfile_builds_the_worker_image() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert f'ENTRYPOINT ["python", "-m", "{WORKER_MODULE}"]' in text
    assert "COPY pyproject.toml dockerfiles/pins.py" in text and "pip install -r" in text
    assert "COPY --from=pins /tmp/requirements.txt" in text
    for top in SOURCE_DIRS:
        assert f"COPY {top} /opt/kchaos/{top}" in text
    assert f"mkdir -p {STATE_MOUNT} {POD_MOUNT}" in text
    assert "pip install ." not in text  # not the harness's dependencies (pyspark, plotly)


def test_worker_pins_come_from_pyproject() -> None:
    text = (ROOT / "Dockerfile").read_text()
    names = re.search(r'^ARG WORKER_PACKAGES="([^"]+)"', text, re.M)
    assert names is not None
    done = subprocess.run([sys.executable, str(ROOT / "dockerfiles" / "pins.py"),
                           str(ROOT / "pyproject.toml"), *names.group(1).split()],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    pins = done.stdout.split()
    assert [p.split("==")[0] for p in pins] == names.group(1).split()
    assert all("==" in p for p in pins)
    assert not any(p.startswith(("pyspark", "plotly")) for p in pins)


def test_pins_refuse_a_package_pyproject_does_not_pin() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "dockerfiles" / "pins.py"),
                           str(ROOT / "pyproject.toml"), "kafka-python", "no-such-package"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "no-such-package" in done.stderr


def test_dockerignore_lets_the_worker_sources_in() -> None:
    lines = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert "*" in lines  # an allow-list: no .venv, results or .git in the build context
    assert {"!pyproject.toml", "!dockerfiles/pins.py"} <= lines
    assert {f"!{top}" for top in SOURCE_DIRS} <= lines
