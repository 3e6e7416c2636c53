"""Does a broker release drop the transaction markers of a partition that has no leader?

The chaos run that found it (docs/findings/txn-markers-dropped-leaderless-partition.md)
needed a Kafka Streams app, five broker faults and luck: a stall in 1 run of 4. This probe
makes the one moment that matters happen every time, with a plain transactional producer:

1. three KRaft nodes; a topic whose single partition P lives on broker B alone, B not
   the coordinator of the probe's transactional id;
2. a transaction writes to P, B is SIGKILLed, the transaction commits (the coordinator
   answers once PREPARE_COMMIT is in its log; the markers follow);
3. B stays down past its broker session, so the controller fences it and P has leader -1
   while the coordinator retries the marker;
4. B starts again on the same data;
5. the same producer writes a second transaction to P and aborts it, and P is read from
   its start, read committed and read uncommitted.

A release that holds the marker until P has a leader again ends step 4 with P's last
stable offset (LSO) at its end. One that takes "no leader" for "deleted" removes P from
the transaction, completes it, and leaves P's records in an open transaction for good: a
read-committed consumer never reads past them, and nothing on the broker expires it.
Step 5 asks what that open transaction does to committed data: a partition keeps one
open transaction per producer, from its first offset, so the second transaction's records
join it and its ABORT marker closes it whole, the committed records with it, unless the
broker tells them apart.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from kafka import IsolationLevel, KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import OffsetSpec
from kafka.errors import KafkaError

from common.waiting import wait_until
from harness.errors import HarnessError
from harness.kafka.cluster import KafkaCluster
from harness.procs import ProcessRegistry

TOPIC = "kchaos-probe-leaderless"
TRANSACTIONAL_ID = "kchaos-probe-leaderless-txn"
RECORDS = 5
SECOND_RECORDS = 3  # the second transaction's, aborted
FIRST_VALUE, SECOND_VALUE = "record-", "aborted-"  # value prefixes of the two transactions
# The coordinator retries a marker as soon as the send fails; once the controller has
# fenced B (its broker session, 9 s by default) the next retry decides. 20 s past the
# fence is ample for it, and a release that keeps the marker keeps it however long.
AFTER_FENCE_S = 20.0
# Once B is registered again a held marker is written at the coordinator's next retry,
# well within a second; past this the transaction is open for good (nothing expires it).
SETTLE_S = 15.0
DROPPED_LINE = re.compile(r"Couldn't find leader endpoint for partitions .*" + re.escape(TOPIC))

HANGING, DELIVERED = "hanging-transaction", "markers-delivered"
# What a read-committed consumer reads of P after the second transaction's abort.
KEPT, LOST, ABORTED_READ = "committed-kept", "committed-lost", "aborted-read"
# A consumer that has not reached P's end by then will not: P is a few records long.
READ_S = 15.0


@dataclass(frozen=True)
class ProbeResult:
    """What one release did, with the evidence a report needs."""

    kafka_version: str
    verdict: str  # HANGING or DELIVERED
    partition_broker: int  # B
    coordinator: int
    log_end: int  # P's end offset, read uncommitted, after B is back
    last_stable: int  # P's end offset, read committed (the LSO)
    open_transaction_start: int | None  # the first offset of P's open transaction, if any
    coordinator_state: str  # the transaction as the coordinator remembers it
    coordinator_log: str  # the coordinator's "likely deleted" line for P, if it wrote one
    after_abort: str  # KEPT, LOST or ABORTED_READ (step 5)
    first_read_committed: int  # of the committed transaction's RECORDS, read committed
    first_read_uncommitted: int  # the same records read uncommitted: still in the log
    second_read_committed: int  # of the aborted transaction's SECOND_RECORDS (0 is right)
    log_end_after_abort: int
    last_stable_after_abort: int
    run_dir: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def judge(log_end: int, last_stable: int, open_start: int | None) -> str:
    """Hanging if P holds records no marker closed: its LSO stays below its end, or a
    producer still has a transaction open on it."""
    return HANGING if last_stable < log_end or open_start is not None else DELIVERED


def judge_after_abort(read_committed: list[str]) -> str:
    """What a read-committed consumer of P shows after the second, aborted transaction:
    every record of the committed one (kept), not all of them (lost), or a record of the
    aborted one (read, which no release should do)."""
    if any(v.startswith(SECOND_VALUE) for v in read_committed):
        return ABORTED_READ
    return KEPT if _count(read_committed, FIRST_VALUE) == RECORDS else LOST


def probe(version: str, run_dir: Path, say: Callable[[str], None] = lambda _: None) -> ProbeResult:
    """Run the probe on a fresh 3-node cluster of Kafka `version` in `run_dir`; stops
    every process it started."""
    run_dir.mkdir(parents=True, exist_ok=True)
    registry = ProcessRegistry(run_dir)
    cluster = KafkaCluster(run_dir, registry, size=3, version=version)
    try:
        say(f"starting 3 Kafka {version} nodes")
        cluster.start()
        return _probe(cluster, version, run_dir, say)
    finally:
        registry.stop_all()


def _probe(cluster: KafkaCluster, version: str, run_dir: Path,
           say: Callable[[str], None]) -> ProbeResult:
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=10000)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap,
                             transactional_id=TRANSACTIONAL_ID, acks="all")
    try:
        producer.init_transactions()
        coordinator = _transaction(admin).coordinator_id
        lone = min(n.node_id for n in cluster.nodes if n.node_id != coordinator)
        partition = TopicPartition(TOPIC, 0)
        admin.create_topics({TOPIC: {"assignments": {0: [lone]},
                                     "configs": {"min.insync.replicas": "1"}}},
                            wait_for_metadata=True)

        say(f"a transaction writes {RECORDS} records to {TOPIC}-0 on broker {lone} alone")
        producer.begin_transaction()
        for n in range(RECORDS):
            producer.send(TOPIC, value=f"{FIRST_VALUE}{n}".encode(), partition=0)
        producer.flush()
        say(f"SIGKILL broker {lone}, then commit (coordinator: broker {coordinator})")
        cluster.kill_broker(lone)
        producer.commit_transaction()

        say(f"waiting for the controller to fence broker {lone} ({TOPIC}-0 leaderless)")
        if not wait_until(lambda: _leader(admin, partition) == -1, 60.0, interval_s=0.5):
            raise HarnessError(f"{TOPIC}-0 kept a leader with broker {lone} down for 60 s")
        coordinator_log = cluster.run_dir / "kafka" / f"broker-{coordinator}.log"
        wait_until(lambda: bool(_dropped_line(coordinator_log)), AFTER_FENCE_S, interval_s=0.5)

        say(f"starting broker {lone} again")
        cluster.restart_broker(lone)
        ends: dict[str, int] = {}

        def settled() -> bool:
            ends.update(_ends(admin, partition))
            return ends["committed"] >= ends["uncommitted"]

        wait_until(settled, SETTLE_S, interval_s=1.0)
        log_end, last_stable = ends["uncommitted"], ends["committed"]
        open_start = _open_transaction_start(admin, partition)
        state = _transaction(admin).state

        say(f"a second transaction of the same producer writes {SECOND_RECORDS} records "
            f"to {TOPIC}-0 and aborts")
        producer.begin_transaction()
        for n in range(SECOND_RECORDS):
            producer.send(TOPIC, value=f"{SECOND_VALUE}{n}".encode(), partition=0)
        producer.flush()
        producer.abort_transaction()
        ends.clear()
        wait_until(settled, SETTLE_S, interval_s=1.0)
        say(f"reading {TOPIC}-0 read committed and read uncommitted")
        committed = _read(cluster.bootstrap, partition, ends["uncommitted"], "read_committed")
        uncommitted = _read(cluster.bootstrap, partition, ends["uncommitted"],
                            "read_uncommitted")
        return ProbeResult(
            kafka_version=version,
            verdict=judge(log_end, last_stable, open_start),
            partition_broker=lone, coordinator=coordinator,
            log_end=log_end, last_stable=last_stable,
            open_transaction_start=open_start, coordinator_state=str(state.value),
            coordinator_log=_dropped_line(coordinator_log),
            after_abort=judge_after_abort(committed),
            first_read_committed=_count(committed, FIRST_VALUE),
            first_read_uncommitted=_count(uncommitted, FIRST_VALUE),
            second_read_committed=_count(committed, SECOND_VALUE),
            log_end_after_abort=ends["uncommitted"], last_stable_after_abort=ends["committed"],
            run_dir=str(run_dir),
        )
    finally:
        producer.close(timeout=5)
        admin.close()


def _transaction(admin: KafkaAdminClient) -> Any:
    """The probe's transaction as its coordinator describes it (KIP-664)."""
    return admin.describe_transactions([TRANSACTIONAL_ID])[TRANSACTIONAL_ID]


def _leader(admin: KafkaAdminClient, partition: TopicPartition) -> int | None:
    try:
        (topic,) = admin.describe_topics([partition.topic])
    except KafkaError:
        return None
    for p in topic["partitions"]:
        if p["partition_index"] == partition.partition:
            return int(p["leader_id"])
    return None


def _ends(admin: KafkaAdminClient, partition: TopicPartition) -> dict[str, int]:
    spec = {partition: OffsetSpec.LATEST}
    return {
        "uncommitted": int(admin.list_partition_offsets(spec)[partition].offset),
        "committed": int(admin.list_partition_offsets(
            spec, isolation_level=IsolationLevel.READ_COMMITTED)[partition].offset),
    }


def _open_transaction_start(admin: KafkaAdminClient, partition: TopicPartition) -> int | None:
    state = admin.describe_producers([partition])[partition]
    starts = [p.current_transaction_start_offset for p in state.active_producers
              if p.current_transaction_start_offset >= 0]
    return min(starts) if starts else None


Isolation = Literal["read_uncommitted", "read_committed"]


def _read(bootstrap: str, partition: TopicPartition, end: int,
          isolation: Isolation) -> list[str]:
    """Every value a consumer of `isolation` reads of P from its start, up to `end` (or
    until READ_S has passed: read committed stops at the LSO)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation,
                             enable_auto_commit=False, group_id=None)
    values: list[str] = []
    try:
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)

        def at_end() -> bool:
            for records in consumer.poll(timeout_ms=500).values():
                values.extend(r.value.decode() for r in records)
            position = consumer.position(partition)
            return position is not None and position >= end

        wait_until(at_end, READ_S, interval_s=0.1)
    finally:
        consumer.close()
    return values


def _count(values: list[str], prefix: str) -> int:
    return sum(1 for v in values if v.startswith(prefix))


def _dropped_line(log: Path) -> str:
    if not log.exists():
        return ""
    for line in log.read_text(errors="replace").splitlines():
        if DROPPED_LINE.search(line):
            return line.strip()
    return ""

