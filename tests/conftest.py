"""Shared fixtures: one real Kafka broker per test session, started and stopped here.

Markers follow the fixtures: a test that uses the broker, Spark or the Docker engine
carries `kafka`, `spark` or `docker` even if its module forgot to say so, so that
`make test-fast` (-m "not kafka and not spark and not slow and not docker") never starts one.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from checker.spark_server import SparkConnectServer
from harness.kafka.cluster import KafkaCluster
from harness.procs import ProcessRegistry

# pytest runs with --import-mode=importlib, which puts no test folder on sys.path.
sys.path.insert(0, str(Path(__file__).parent))
from system_packages import problem

# fixture -> the marker every test that uses it (directly or through another fixture) gets
MARKER_OF_FIXTURE = {
    "kafka_cluster": "kafka",
    "kafka_bootstrap": "kafka",
    "spark": "spark",
    "spark_url": "spark",
    "engine": "docker",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for fixture, marker in MARKER_OF_FIXTURE.items():
            if fixture in used:
                item.add_marker(marker)


@pytest.hookimpl(tryfirst=True)  # before a skipif of the same test decides
def pytest_runtest_setup(item: pytest.Item) -> None:
    """`@pytest.mark.needs("cmd", ...)`: skip or fail on a missing system command
    (tests/system_packages.py says which)."""
    for marker in item.iter_markers("needs"):
        for probe in marker.args:
            found = problem(probe)
            if found is None:
                continue
            reason, fatal = found
            if fatal:
                pytest.fail(reason, pytrace=False)
            pytest.skip(reason)


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    """A single-node KRaft cluster on 127.0.0.1 for the whole session."""
    run_dir: Path = tmp_path_factory.mktemp("kafka-session")
    registry = ProcessRegistry(run_dir)
    cluster = KafkaCluster(run_dir, registry, size=1)
    try:
        cluster.start()
        yield cluster
    finally:
        registry.stop_all()


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka_cluster: KafkaCluster) -> str:
    return kafka_cluster.bootstrap


@pytest.fixture(scope="session")
def spark_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Spark Connect server checks every whole run of the session that asks for it (a
    Spark start and a cold JIT saved per run); `kchaos repro`, and the tests of a run's own
    Spark, still start their own, as a user's would."""
    log = tmp_path_factory.mktemp("spark-connect") / "spark-connect.log"
    with SparkConnectServer(log, "local[*]", driver_memory="2g") as server:
        yield server.url
