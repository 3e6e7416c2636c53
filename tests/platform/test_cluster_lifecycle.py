"""Cluster lifecycle: a 3-node cluster survives a SIGKILLed broker; nothing is left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic
from topic_reads import read_topic

from harness.kafka.cluster import CLUSTER_FILE, KafkaCluster
from harness.procs import ProcessRegistry, is_same_process, load_records

pytestmark = pytest.mark.kafka


def _produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = KafkaProducer(
        bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
        request_timeout_ms=15000, delivery_timeout_ms=60000,
    )
    try:
        for future in [producer.send(topic, v) for v in values]:
            future.get(timeout=60)
    finally:
        producer.close()


def test_three_nodes_keep_acks_all_writes_through_a_broker_sigkill(tmp_path: Path) -> None:
    registry = ProcessRegistry(tmp_path)
    cluster = KafkaCluster(tmp_path, registry, size=3)
    try:
        cluster.start()
        # A warm start: storage copied from a template, each node with ids of its own.
        assert cluster.warm_used["storage_template"]
        metas = [(n.data_dir / "meta.properties").read_text() for n in cluster.nodes]
        assert len({line for m in metas for line in m.splitlines()
                    if line.startswith("directory.id=")}) == 3
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
        admin.create_topics([NewTopic("survivor", 1, 3)])
        admin.close()
        _produce(cluster.bootstrap, "survivor", [b"before"])

        victim = cluster.nodes[0]
        assert victim.pid is not None
        victim_pid = victim.pid
        cluster.kill_broker(victim.node_id)
        assert not psutil.pid_exists(victim_pid) or psutil.Process(victim_pid).status() == "zombie"

        # min.insync.replicas=2 with 2 of 3 alive: acks=all writes still succeed.
        survivors = ",".join(n.address for n in cluster.nodes[1:])
        _produce(survivors, "survivor", [b"during"])

        cluster.restart_broker(victim.node_id)
        assert cluster.running_ids() == {1, 2, 3}
        # The restarted broker serves the data, including what was written while it was dead.
        cluster.stop_broker(2)
        cluster.stop_broker(3)
        assert read_topic(victim.address, "survivor") == [b"before", b"during"]
    finally:
        registry.stop_all()


def test_kchaos_clean_stops_what_a_sigkilled_harness_left(tmp_path: Path) -> None:
    results = tmp_path / "results"
    harness = subprocess.Popen(
        [sys.executable, "-m", "harness", "--results-dir", str(results), "kafka", "up"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        cluster_files: list[Path] = []
        while time.monotonic() < deadline and harness.poll() is None:
            cluster_files = list(results.glob(f"*/{CLUSTER_FILE}"))
            if cluster_files and json.loads(cluster_files[0].read_text())["nodes"][0]["pid"]:
                break
            time.sleep(0.5)
        assert cluster_files, "kafka up never wrote cluster.json"
        os.kill(harness.pid, signal.SIGKILL)
        harness.wait(timeout=10)

        records = load_records(cluster_files[0].parent / "pids.json")
        brokers = [r for r in records if r.name.startswith("kafka-")]
        assert brokers and all(is_same_process(r) for r in brokers), "broker should outlive it"

        clean = subprocess.run(
            [sys.executable, "-m", "harness", "--results-dir", str(results), "clean"],
            capture_output=True, text=True, timeout=120,
        )
        assert clean.returncode == 0, clean.stdout + clean.stderr
        assert "1 process(es) stopped" in clean.stdout
        assert not any(is_same_process(r) for r in brokers)
    finally:
        if harness.poll() is None:
            harness.kill()
        for pids in results.glob("*/pids.json"):
            for record in load_records(pids):
                if is_same_process(record):
                    os.kill(record.pid, signal.SIGKILL)
