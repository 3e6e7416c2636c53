"""Benchmark of the local Kafka cluster kchaos runs its tests on, printed as one table.

Measures:
1. Start-to-ready time of `KafkaCluster.start()` (format storage, launch JVMs, poll an
   admin call until every broker is registered) for 1 and 3 nodes, warm (Kafka jars
   already in the cache) and cold (a fresh temporary KCHAOS_CACHE, so the jars are fetched
   with Maven first; Maven's own local repository is left as it is). Median of --runs.
2. Raw kafka-python throughput on a 1-node broker with 1 KiB values: idempotent produce
   (acks=all, enable_idempotence), transactional produce (a commit every 500 records),
   and read_committed consume of both topics.

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
def running_cluster(size: int) -> Iterator[tuple[KafkaCluster, float]]:
    """A started cluster in a temporary run folder and the seconds `start()` took."""
    with tempfile.TemporaryDirectory(prefix="kchaos-bench-run-") as tmp:
        registry = ProcessRegistry(Path(tmp))
        cluster = KafkaCluster(Path(tmp), registry, size=size)
        try:
            began = time.monotonic()
            cluster.start()
            yield cluster, time.monotonic() - began
            cluster.stop()  # all nodes at once: a lone survivor would wait for a quorum
        finally:
            registry.stop_all()


def ready_seconds(size: int, cold: bool) -> float:
    if not cold:
        with running_cluster(size) as (_, seconds):
            return seconds
    with (
        tempfile.TemporaryDirectory(prefix="kchaos-bench-cache-") as cache,
        kchaos_cache(cache),
        running_cluster(size) as (_, seconds),
    ):
        return seconds


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


def throughput(count: int) -> list[tuple[str, float]]:
    """(label, seconds) for each throughput figure, on one fresh 1-node cluster."""
    with running_cluster(1) as (cluster, _):
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 run each, 10k records")
    parser.add_argument("--runs", type=int, help="cluster starts per figure (default 3)")
    parser.add_argument("--records", type=int, help="records per throughput figure")
    args = parser.parse_args()
    runs = args.runs or (1 if args.quick else 3)
    records = args.records or (10_000 if args.quick else 100_000)
    console = Console(width=110)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    console.print(
        f"[bold]kchaos Kafka bench[/] - Kafka {kafka_version()}, {os.cpu_count()} cores, "
        f"load average {load} at start.\nContext: a 2-core machine shared with other "
        "engineers' test runs, so figures are indicative, not a clean-room measurement."
    )
    kafka_libs()  # make sure the warm cache is warm before timing anything
    table = Table(title=f"runs per start figure: {runs}; records per throughput figure: "
                  f"{records:,} x 1 KiB")
    for column in ("figure", "median", "min - max", "MB/s"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for size in (1, 3):
        for cold in (False, True):
            label = f"start to ready, {size} node{'s' * (size > 1)}, {'cold' if cold else 'warm'}"
            console.print(f"measuring {label} ...")
            times = [ready_seconds(size, cold) for _ in range(runs)]
            table.add_row(label, f"{statistics.median(times):.1f} s",
                          f"{min(times):.1f} - {max(times):.1f} s", "")
    console.print(f"measuring throughput with {records:,} records ...")
    table.add_section()
    for label, seconds in throughput(records):
        megabytes = records * len(VALUE) / 1e6 / seconds
        table.add_row(label, f"{records / seconds:,.0f} ev/s", f"{seconds:.2f} s total",
                      f"{megabytes:.1f}")
    label, seconds = crc32c_seconds()
    table.add_row(label, "", f"{seconds:.2f} s total", f"{CRC_MB / seconds:.1f}")
    console.print(table)
    console.print(f"load average at end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
