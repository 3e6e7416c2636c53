"""A KRaft Kafka cluster of 1 or 3 combined broker+controller nodes on 127.0.0.1.

Each node is a `kafka.Kafka` JVM with a small heap, its storage formatted once; logs go
to `<run>/kafka/broker-<id>.log`; every process is in the run's ProcessRegistry.
A warm start (the default) maps the broker's classes from a class-data sharing archive
and copies formatted storage from a template (harness/kafka/jvm_archive.py and
storage_template.py), both made the first time and kept in the Kafka jar cache.
Settings suit crash tests: replication that fits the cluster, no initial rebalance delay,
short transaction and session timeouts.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from kafka.errors import KafkaError

from common.waiting import wait_until
from harness.errors import HarnessError, UsageError
from harness.kafka import storage_template
from harness.kafka.jars import (
    LOG4J_CONFIG,
    classpath,
    kafka_cache,
    kafka_libs,
    kafka_version,
    require_java,
)
from harness.kafka.jvm_archive import broker_archive, dump_flags
from harness.kafka.readiness import describe_brokers, listening, pid_alive
from harness.procs import ProcessRegistry

CLUSTER_FILE = "cluster.json"
READY_TIMEOUT_S = 90.0
NETNS_PORT, NETNS_CONTROLLER_PORT = 9092, 9093  # each broker has an address of its own


class NodeNetwork(Protocol):
    """A run network brokers can live in (harness.platforms.local_network.RunNetwork)."""

    def join(self, member: str) -> str: ...
    def wrap(self, member: str, argv: list[str]) -> list[str]: ...


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def new_cluster_id() -> str:
    """Kafka cluster ids are a Kafka Uuid (URL-safe base64, no leading '-')."""
    return storage_template.random_kafka_uuid()


@dataclass
class BrokerNode:
    node_id: int
    port: int
    controller_port: int
    directory: Path
    pid: int | None = None
    host: str = "127.0.0.1"

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def properties_path(self) -> Path:
        return self.directory / "server.properties"

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"


def broker_properties(node: BrokerNode, voters: str, cluster_size: int) -> str:
    replication = min(3, cluster_size)
    min_isr = 2 if cluster_size >= 3 else 1
    settings = {
        "process.roles": "broker,controller",
        "node.id": node.node_id,
        "listeners": f"PLAINTEXT://{node.address},CONTROLLER://{node.host}:{node.controller_port}",
        "advertised.listeners": f"PLAINTEXT://{node.address}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "controller.quorum.voters": voters,
        "log.dirs": node.data_dir,
        "auto.create.topics.enable": "false",
        "num.partitions": 4,
        "default.replication.factor": replication,
        "min.insync.replicas": min_isr,
        "offsets.topic.replication.factor": replication,
        "offsets.topic.num.partitions": 8,
        "transaction.state.log.replication.factor": replication,
        "transaction.state.log.min.isr": min_isr,
        "transaction.state.log.num.partitions": 8,
        # Crash tests: rebalance at once, time out dead members and transactions quickly.
        "group.initial.rebalance.delay.ms": 0,
        "group.min.session.timeout.ms": 1000,
        # The same for streams groups (KIP-1071, `--group-protocol streams`), whose session,
        # heartbeat and standbys are group configs the run sets (harness/config/protocol.py):
        # the brokers' bounds let a run's values through (defaults: session 45-60 s,
        # heartbeat 5-15 s, at most 2 standbys, a first assignment 3 s after the first
        # join, from 4.2). Releases without streams groups ignore these.
        "group.streams.min.session.timeout.ms": 1000,
        "group.streams.min.heartbeat.interval.ms": 1000,
        "group.streams.max.standby.replicas": 16,
        "group.streams.initial.rebalance.delay.ms": 0,
        "transaction.max.timeout.ms": 60000,
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": 1000,
        "transactional.id.expiration.ms": 3600000,
        "log.retention.check.interval.ms": 5000,
        "log.cleaner.backoff.ms": 1000,
        "log.flush.interval.messages": 9223372036854775807,
        "share.coordinator.state.topic.replication.factor": replication,
        "share.coordinator.state.topic.min.isr": min_isr,
    }
    return "".join(f"{key}={value}\n" for key, value in settings.items())


@dataclass
class KafkaCluster:
    """Start with `start()`, stop with `stop()`; nodes keep their data across restarts.
    With a `network`, node n runs in that network's member `broker-n`, on its address."""

    run_dir: Path
    registry: ProcessRegistry
    size: int = 1
    heap: str = "384m"
    cluster_id: str = field(default_factory=new_cluster_id)
    nodes: list[BrokerNode] = field(default_factory=list)
    network: NodeNetwork | None = None
    start_seconds: dict[str, float] = field(default_factory=dict)  # format, JVM to ready
    warm_start: bool = True  # class-data sharing archive and storage template
    dump_archive: Path | None = None  # a training broker: write its classes here on exit
    warm_used: dict[str, str] = field(default_factory=dict)  # what the warm start used
    # The broker's Kafka release (`kchaos run --kafka-version`); pom.xml's pin by default.
    version: str = field(default_factory=kafka_version)
    _archive_flags: list[str] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.size not in (1, 3):
            raise UsageError(f"--brokers {self.size}: kchaos runs clusters of 1 or 3 nodes")
        if not self.nodes and self.network is not None:
            self.nodes = [
                BrokerNode(n, NETNS_PORT, NETNS_CONTROLLER_PORT,
                           self.run_dir / "kafka" / f"node-{n}",
                           host=self.network.join(f"broker-{n}"))
                for n in range(1, self.size + 1)
            ]
        if not self.nodes:
            self.nodes = [
                BrokerNode(n, free_port(), free_port(), self.run_dir / "kafka" / f"node-{n}")
                for n in range(1, self.size + 1)
            ]

    @property
    def bootstrap(self) -> str:
        return ",".join(node.address for node in self.nodes)

    def node(self, node_id: int) -> BrokerNode:
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        # the plan is drawn for this cluster's size: a broker outside it is our bug (255)
        raise HarnessError(f"no broker {node_id}: this cluster has nodes 1..{self.size}")

    # -- lifecycle ----------------------------------------------------------------------

    def start(self, timeout_s: float = READY_TIMEOUT_S) -> None:
        java = require_java()
        libs = kafka_libs(self.version)
        self._write_properties()
        started = time.monotonic()
        self.start_seconds = {}
        if self.warm_start:
            self.prepare_archive(java, libs)
        prepared = time.monotonic()
        self._format_nodes(java, libs)
        formatted = time.monotonic()
        for node in self.nodes:
            self._launch(java, libs, node)
        self._save()
        self.wait_ready(timeout_s)
        if self.warm_used.get("jvm_archive") == "trained":
            self.start_seconds["jvm_archive_training_s"] = round(prepared - started, 2)
        self.start_seconds |= {"format_s": round(formatted - prepared, 2),
                               "launch_to_ready_s": round(time.monotonic() - formatted, 2)}
        self._save()

    def prepare(self) -> dict[str, str]:
        """Make this shape's warm start (class archive, storage template) without
        starting the cluster: `kchaos kafka fetch` does, so a first run does not."""
        java, libs = require_java(), kafka_libs(self.version)
        self._write_properties()
        self.prepare_archive(java, libs)
        self.warm_used["storage_template"] = str(self._storage_template(java, libs) or "")
        return self.warm_used

    def prepare_archive(self, java: str, libs: Path) -> None:
        """Use the broker class archive, training it first (a 1-node broker started and
        stopped once per JDK and Kafka jars) if it is missing; never fails a start."""
        archive = broker_archive(java, libs, self._jvm_flags(quick=False), self.version)
        self.warm_used["jvm_archive"] = archive.ensure(self._train_archive)
        self._archive_flags = archive.flags_to_use()
        self.warm_used["jvm_archive_path"] = str(archive.path) if self._archive_flags else ""

    def _train_archive(self, temporary: Path) -> None:
        trainer = KafkaCluster(self.run_dir / "kafka" / "jvm-archive-training", self.registry,
                               heap=self.heap, warm_start=False, dump_archive=temporary,
                               version=self.version)
        try:
            trainer.start()
        finally:
            trainer.stop()  # the JVM writes the archive as it exits

    def stop(self) -> None:
        # In parallel: a lone survivor's controlled shutdown waits for a quorum that the
        # nodes stopped before it no longer form.
        with ThreadPoolExecutor(len(self.nodes)) as pool:
            list(pool.map(lambda n: self.stop_broker(n.node_id), self.nodes))

    def stop_broker(self, node_id: int) -> None:
        """Graceful shutdown (SIGTERM, controlled shutdown)."""
        node = self.node(node_id)
        if node.pid is not None:
            self.registry.stop(node.pid, grace_s=30.0)
            node.pid = None
            self._save()

    def kill_broker(self, node_id: int) -> None:
        """SIGKILL: no controlled shutdown, unflushed page-cache writes stay in the OS."""
        node = self.node(node_id)
        if node.pid is not None:
            self.registry.kill(node.pid)
            node.pid = None
            self._save()

    def restart_broker(self, node_id: int, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Start a stopped or killed broker again on the same data and ports."""
        node = self.node(node_id)
        if node.pid is None:  # with the archive of the first start, if it had one
            self._launch(require_java(), kafka_libs(self.version), node)
            self._save()
        self.wait_ready(timeout_s, expected=self.running_ids())

    def running_ids(self) -> set[int]:
        alive = set()
        for node in self.nodes:
            if node.pid is not None:
                popen_record = self.registry.record(node.pid)
                if popen_record is not None:
                    alive.add(node.node_id)
        return alive

    def wait_ready(self, timeout_s: float, expected: set[int] | None = None) -> None:
        """Poll with an admin call until every expected broker is registered."""
        expected = expected if expected is not None else {n.node_id for n in self.nodes}
        last_error = "no answer"

        def ready() -> bool:
            nonlocal last_error
            self._check_alive()
            if not any(listening(node.host, node.port) for node in self.nodes):
                last_error = "no broker listening yet"
                return False  # a TCP connect is cheap; an admin client is not
            try:
                brokers = describe_brokers(self.bootstrap)
            except KafkaError as exc:
                last_error = type(exc).__name__
                return False
            last_error = f"brokers registered: {sorted(brokers)}"
            return expected <= brokers

        if wait_until(ready, timeout_s, interval_s=0.3):
            return
        raise HarnessError(
            f"Kafka not ready after {timeout_s:.0f}s ({last_error}): see {self.run_dir / 'kafka'}"
        )

    # -- internals ----------------------------------------------------------------------

    def _write_properties(self) -> None:
        voters = ",".join(f"{n.node_id}@{n.host}:{n.controller_port}" for n in self.nodes)
        for node in self.nodes:
            node.directory.mkdir(parents=True, exist_ok=True)
            node.properties_path.write_text(broker_properties(node, voters, self.size))

    def _jvm_flags(self, quick: bool) -> list[str]:
        if quick:
            return ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
        # C1 only and the serial collector: a run's broker lives a minute at a few hundred
        # records a second, too short and too light for C2's compiles or G1's threads to pay
        # back (docs/speed.md, "Nightly throughput": a third of its CPU seconds).
        return [f"-Xms{self.heap}", f"-Xmx{self.heap}", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1"]

    def _java_argv(
        self, java: str, libs: Path, main: str, quick: bool = False, extra: list[str] | None = None
    ) -> list[str]:
        return [
            java,
            *self._jvm_flags(quick),
            *(extra or []),
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={LOG4J_CONFIG}",
            "-cp",
            classpath(libs),
            main,
        ]

    def _format_nodes(self, java: str, libs: Path) -> None:
        todo = [n for n in self.nodes if not (n.data_dir / storage_template.META).exists()]
        if not todo:
            return
        template = self._storage_template(java, libs) if self.warm_start else None
        self.warm_used["storage_template"] = str(template or "")
        if template is not None:
            for node in todo:
                storage_template.copy_template(template, node.data_dir, self.cluster_id,
                                               node.node_id)
            return
        with ThreadPoolExecutor(len(todo)) as pool:  # one JVM start each: overlap them
            list(pool.map(lambda n: self._format(java, libs, n.properties_path, n.node_id), todo))

    def _storage_template(self, java: str, libs: Path) -> Path | None:
        properties = self.nodes[0].properties_path.read_text()
        templates = kafka_cache(self.version) / "storage-templates"

        def format_into(folder: Path) -> None:
            config = templates / f"{folder.name}.properties"
            config.write_text(storage_template.with_log_dir(properties, folder))
            try:
                self._format(java, libs, config, self.nodes[0].node_id)
            finally:
                config.unlink(missing_ok=True)

        key = storage_template.template_key(self.version, properties)
        try:
            return storage_template.ensure_template(templates, key, format_into)
        except OSError:  # e.g. a cache that cannot be written: format each node as before
            return None

    def _format(self, java: str, libs: Path, config: Path, node_id: int) -> None:
        # A short-lived tool: the quick-start JIT and a serial GC start it in half the time.
        argv = [
            *self._java_argv(java, libs, "kafka.tools.StorageTool", quick=True),
            "format", "-t", self.cluster_id, "-c", str(config),
        ]
        result = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            tail = (result.stdout + result.stderr).strip().splitlines()[-1:] or ["no output"]
            raise HarnessError(f"formatting Kafka node {node_id} failed: {tail[0]}")

    def _launch(self, java: str, libs: Path, node: BrokerNode) -> None:
        extra = [*self._archive_flags]
        if self.dump_archive is not None:
            extra += dump_flags(self.dump_archive)
        argv = [*self._java_argv(java, libs, "kafka.Kafka", extra=extra),
                str(node.properties_path)]
        if self.network is not None:
            argv = self.network.wrap(f"broker-{node.node_id}", argv)
        log = self.run_dir / "kafka" / f"broker-{node.node_id}.log"
        node.pid = self.registry.spawn(f"kafka-{node.node_id}", argv, log).pid

    def _check_alive(self) -> None:
        for node in self.nodes:
            if node.pid is None:
                continue
            record = self.registry.record(node.pid)
            popen_dead = record is None or not pid_alive(node.pid)
            if popen_dead:
                log = self.run_dir / "kafka" / f"broker-{node.node_id}.log"
                raise HarnessError(f"Kafka node {node.node_id} exited at start: see {log}")

    def _save(self) -> None:
        info = {
            "version": self.version,
            "cluster_id": self.cluster_id,
            "bootstrap": self.bootstrap,
            "start_seconds": self.start_seconds,
            "warm_start": self.warm_used,
            "nodes": [
                {"node_id": n.node_id, "host": n.host, "port": n.port,
                 "controller_port": n.controller_port, "pid": n.pid}
                for n in self.nodes
            ],
        }
        (self.run_dir / CLUSTER_FILE).write_text(json.dumps(info, indent=1))
