"""Benchmark of the local Kafka cluster kchaos runs its tests on, printed as tables.

Measures, "before" (`warm_start=False`: every node formatted by its own StorageTool JVM,
classes loaded from the jars) against "after" (the default warm start: storage copied
from a template, the broker's classes mapped from a class-data sharing archive), the two
alternated run by run in one invocation so that they share the machine's load:
1. Start-to-ready time of `KafkaCluster.start()` for 1 and 3 nodes (median of --runs),
   split into format, JVM launch to the first log line (JVM and log4j up), to Kafka's
   main (Kafka's and Scala's classes loaded), Kafka's own start (to "Kafka Server
   started", node 1's log) and from there to ready (registered, as the harness polls).
2. Raw kafka-python throughput on a 1-node broker with 1 KiB values: idempotent produce
   (acks=all, enable_idempotence), transactional produce (a commit every 500 records),
   and read_committed consume of both topics; before and after, so that a flag that
   slows a broker under load shows.
3. Cold (`--cold`): a fresh temporary KCHAOS_CACHE, so the jars are fetched with Maven
   and the archive and template are made first (Maven's local repository is kept).

Every process it starts is stopped before it exits; everything binds 127.0.0.1.
Run: `.venv/bin/python bench/bench_kafka.py [--quick]`
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.record import util as record_util
from rich.console import Console
from rich.table import Table

from harness.kafka.cluster import KafkaCluster
from harness.kafka.jars import kafka_libs, kafka_version
from harness.procs import ProcessRegistry

VALUE = b"x" * 1024
PARTITIONS = 4
TX_BATCH = 500
CONSUME_TIMEOUT_S = 300.0
CRC_MB = 4
MODES = {"before": False, "after": True}  # label -> KafkaCluster.warm_start
# Lines of a broker's log that end a phase of its start (the first log line is the first).
MAIN_LINE = "Registered signal handlers"  # kafka.Kafka's main has begun
STARTED_LINE = "Kafka Server started"
PHASES = ("total", "format", "launch to first log line", "to Kafka main", "Kafka's own start",
          "started to ready")


@contextmanager
def kchaos_cache(path: str | None) -> Iterator[None]:
    """Point KCHAOS_CACHE at `path` (None: leave it as it is) for the block."""
    old = os.environ.get("KCHAOS_CACHE")
    if path is not None:
        os.environ["KCHAOS_CACHE"] = path
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("KCHAOS_CACHE", None)
        else:
            os.environ["KCHAOS_CACHE"] = old


@contextmanager
def running_cluster(size: int, warm: bool) -> Iterator[tuple[KafkaCluster, dict[str, float]]]:
    """A started cluster in a temporary run folder and the phases of its start (s)."""
    with tempfile.TemporaryDirectory(prefix="kchaos-bench-run-") as tmp:
        registry = ProcessRegistry(Path(tmp))
        cluster = KafkaCluster(Path(tmp), registry, size=size, warm_start=warm)
        try:
            began_wall, began = time.time(), time.monotonic()
            cluster.start()
            phases = start_phases(cluster, began_wall, time.monotonic() - began)
            yield cluster, phases
            cluster.stop()  # all nodes at once: a lone survivor would wait for a quorum
        finally:
            registry.stop_all()


def log_time(line: str) -> float:
    """The wall time of a broker log line, `[2026-11-23 09:31:52,267] INFO ...`."""
    stamp = line[1:line.index("]")]
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def start_phases(cluster: KafkaCluster, began_wall: float, total: float) -> dict[str, float]:
    seconds = cluster.start_seconds
    launched = began_wall + seconds.get("jvm_archive_training_s", 0.0) + seconds["format_s"]
    ready = launched + seconds["launch_to_ready_s"]
    lines = (cluster.run_dir / "kafka" / "broker-1.log").read_text().splitlines()
    stamped = [line for line in lines if line.startswith("[")]
    first = log_time(stamped[0])
    main = next(log_time(x) for x in stamped if MAIN_LINE in x)
    started = next(log_time(x) for x in stamped if STARTED_LINE in x)
    return {"total": total, "format": seconds["format_s"],
            "launch to first log line": first - launched, "to Kafka main": main - launched,
            "Kafka's own start": started - main, "started to ready": ready - started}


def cold_seconds(size: int) -> float:
    with (
        tempfile.TemporaryDirectory(prefix="kchaos-bench-cache-") as cache,
        kchaos_cache(cache),
        running_cluster(size, warm=True) as (_, phases),
    ):
        return phases["total"]


def produce(bootstrap: str, topic: str, count: int, transactional: bool) -> float:
    extra: dict[str, object] = {"transactional_id": f"{topic}-tx"} if transactional else {}
    producer = KafkaProducer(
        bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, **extra
    )
    failures: list[BaseException] = []
    try:
        if transactional:
            producer.init_transactions()
        step = TX_BATCH if transactional else count
        began = time.monotonic()
        for start in range(0, count, step):
            if transactional:
                producer.begin_transaction()
            for _ in range(min(step, count - start)):
                producer.send(topic, VALUE).add_errback(failures.append)
            if transactional:
                producer.commit_transaction()
        producer.flush()
        seconds = time.monotonic() - began
    finally:
        producer.close()
    if failures:
        raise RuntimeError(f"{len(failures)} sends to {topic} failed: {failures[0]!r}")
    return seconds


def consume(bootstrap: str, topic: str, count: int) -> float:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, isolation_level="read_committed", group_id=None,
        enable_auto_commit=False,
    )
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
        consumer.seek_to_beginning()
        seen, began = 0, time.monotonic()
        while seen < count:
            if time.monotonic() - began > CONSUME_TIMEOUT_S:
                raise RuntimeError(f"read {seen}/{count} records of {topic} in time")
            seen += sum(len(batch) for batch in consumer.poll(timeout_ms=500).values())
        return time.monotonic() - began
    finally:
        consumer.close()


def throughput(count: int, warm: bool) -> list[tuple[str, float]]:
    """(label, seconds) for each throughput figure, on one fresh 1-node cluster."""
    with running_cluster(1, warm) as (cluster, _):
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
        try:
            admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in ("idem", "tx")])
        finally:
            admin.close()
        boot = cluster.bootstrap
        return [
            ("produce, idempotent (acks=all)", produce(boot, "idem", count, False)),
            (f"produce, transactional (commit/{TX_BATCH})", produce(boot, "tx", count, True)),
            ("consume read_committed (idempotent topic)", consume(boot, "idem", count)),
            ("consume read_committed (transactional topic)", consume(boot, "tx", count)),
        ]


def crc32c_seconds() -> tuple[str, float]:
    """kafka-python checksums every record batch (v2, CRC32C) on send and on fetch; without
    the optional `crc32c` package it does so in pure Python, which bounds its throughput."""
    kind = "pure Python" if record_util.crc32c_c is None else "crc32c package"
    began = time.monotonic()
    record_util.calc_crc32c(memoryview(b"x" * (CRC_MB * 1_000_000)))
    return f"kafka-python CRC32C ({kind}), {CRC_MB} MB", time.monotonic() - began


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def start_table(console: Console, runs: int) -> Table:
    table = Table(title=f"start to ready, s: median (min-max) of {runs} run(s), before and "
                  "after alternated")
    for column in ("nodes", "phase", "before", "after"):
        table.add_column(column, justify="left" if column == "phase" else "right")
    for size in (1, 3):
        got: dict[str, dict[str, list[float]]] = {m: {p: [] for p in PHASES} for m in MODES}
        for run in range(runs):
            order = list(MODES) if run % 2 == 0 else list(reversed(MODES))
            for mode in order:
                console.print(f"{size} node(s), {mode}, run {run + 1}/{runs} (load {load()})")
                with running_cluster(size, MODES[mode]) as (_, phases):
                    for phase, seconds in phases.items():
                        got[mode][phase].append(seconds)
        for phase in PHASES:
            table.add_row(str(size), phase, spread(got["before"][phase]),
                          spread(got["after"][phase]))
        table.add_section()
    return table


def throughput_table(console: Console, records: int) -> Table:
    table = Table(title=f"kafka-python on a 1-node broker, {records:,} x 1 KiB records, "
                  "events/s (MB/s)")
    for column in ("figure", "before", "after"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    figures: dict[str, dict[str, float]] = {}
    for mode in MODES:  # one each: the brokers differ in start only, not in JIT or GC
        console.print(f"throughput, {mode} (load {load()}) ...")
        for label, seconds in throughput(records, MODES[mode]):
            figures.setdefault(label, {})[mode] = seconds
    for label, by_mode in figures.items():
        table.add_row(label, *(f"{records / by_mode[m]:,.0f} "
                               f"({records * len(VALUE) / 1e6 / by_mode[m]:.1f})" for m in MODES))
    crc_label, seconds = crc32c_seconds()
    table.add_row(crc_label, f"{seconds:.2f} s ({CRC_MB / seconds:.1f})", "")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 run each, 10k records")
    parser.add_argument("--runs", type=int, help="cluster starts per mode and size (default 3)")
    parser.add_argument("--records", type=int, help="records per throughput figure")
    parser.add_argument("--cold", action="store_true", help="also a start with an empty cache")
    parser.add_argument("--no-throughput", action="store_true", help="start figures only")
    args = parser.parse_args()
    runs = args.runs or (1 if args.quick else 3)
    records = args.records or (10_000 if args.quick else 100_000)
    console = Console(width=110)
    console.print(
        f"[bold]kchaos Kafka bench[/] - Kafka {kafka_version()}, {os.cpu_count()} cores, "
        f"load average {load()} at start.\nContext: a 2-core machine shared with other "
        "engineers' test runs, so figures are indicative, not a clean-room measurement."
    )
    kafka_libs()  # the jars are there before timing anything
    with running_cluster(1, warm=True):  # and the archive and 1-node template are made
        pass
    tables = [start_table(console, runs)]
    if not args.no_throughput:
        tables.append(throughput_table(console, records))
    if args.cold:
        cold = Table(title="cold cache: jars fetched, archive trained, template formatted")
        for column in ("nodes", "start to ready"):
            cold.add_column(column, justify="right")
        for size in (1, 3):
            console.print(f"{size} node(s), cold cache (load {load()}) ...")
            cold.add_row(str(size), f"{cold_seconds(size):.1f} s")
        tables.append(cold)
    for table in tables:
        console.print(table)
    console.print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()
