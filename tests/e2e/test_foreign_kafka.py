"""`kchaos run --bootstrap`: a run against a Kafka it did not start, as a user points it at
their own cluster. That Kafka is a container testcontainers manages (its lifecycle and its
readiness wait), from the broker image kchaos builds, so nothing of the harness's own
broker code starts or stops it. Ryuk, testcontainers' reaper, is an image from a registry
this machine cannot reach: it is off, and the container is stopped by the fixture.

Skipped, with the reason, where no Docker engine answers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.kafka.cluster import free_port, new_cluster_id
from harness.platforms.docker_engine import require_engine
from harness.platforms.docker_images import build_client, ensure_kafka_image
from harness.platforms.docker_specs import KAFKA_EXTERNAL_PORT, kafka_container_spec

pytestmark = [pytest.mark.docker, pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]

LABEL = {"kchaos.test": "foreign-kafka"}


@pytest.fixture
def foreign_kafka() -> Iterator[str]:
    """A one-node Kafka in a container on 127.0.0.1:<port>; its bootstrap."""
    try:
        require_engine()
    except UsageError as exc:
        pytest.skip(f"needs a Docker engine: {exc}")
    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    port = free_port()
    image = ensure_kafka_image(build_client())
    spec = kafka_container_spec("foreign", 1, 1, new_cluster_id(), "bridge", port, image)
    container = (DockerContainer(image)
                 .with_name(spec["name"])
                 # its controller quorum names the container: it must resolve its own name
                 .with_kwargs(hostname=spec["name"], labels=LABEL)
                 .waiting_for(LogMessageWaitStrategy("Kafka Server started")
                              .with_startup_timeout(180)))
    # On loopback only, as the SDK's (address, port): with_bind_ports takes a port number
    # and would publish it on every address.
    container.ports[f"{KAFKA_EXTERNAL_PORT}/tcp"] = ("127.0.0.1", port)  # type: ignore[assignment]
    for key, value in spec["environment"].items():
        container = container.with_env(key, value)
    with container:  # started, and waited for, here; stopped and removed at the end
        yield f"127.0.0.1:{port}"


@pytest.mark.timeout(900)
def test_a_run_attaches_to_a_kafka_it_did_not_start(foreign_kafka: str, tmp_path: Path,
                                                    spark_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness", "--results-dir", str(tmp_path), "run",
         "--bootstrap", foreign_kafka, "--profile", "kill", "--seed", "1",
         "--time-limit", "20", "--spark-master", spark_url],
        capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (run_dir,) = [p for p in tmp_path.iterdir() if (p / "run.json").exists()]
    info = json.loads((run_dir / "run.json").read_text())
    assert info["bootstrap"] == foreign_kafka
    assert not (run_dir / "kafka").exists() or not any((run_dir / "kafka").iterdir())
    results = json.loads((run_dir / "results.json").read_text())
    assert results["verdict"] is True, results["anomaly_counts"]
    assert [s["fault"] for s in json.loads((run_dir / "plan.json").read_text())["steps"]]
