"""A stream thread's Kafka clients: how they are built, the transactional calls with a
bound, and the membership check that tells a fenced producer from a zombie pod.

kafka-python 3.0.12's `commit_transaction`, `abort_transaction` and
`send_offsets_to_transaction` wait without a timeout; after a broker crash moves a
coordinator they can wait forever. The bounded versions drive the same transaction-manager
calls and give up after `timeout_ms` (Kafka Streams bounds them with max.block.ms).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import kafka.errors as Errors
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import ConsumerGroupMetadata, OffsetAndMetadata

from workloads.worker.config import WorkerConfig

log = logging.getLogger(__name__)

TXN_TIMEOUT_MS = 15_000  # a commit, abort or offsets hand-over slower than this: migrated
MEMBERSHIP_TIMEOUT_MS = 5_000
# A member hears of a rebalance at its next heartbeat. Kafka's consumer keeps
# heartbeat.interval.ms whatever the session (3 s by default); a fifth of a drawn 45 s
# session would leave every rebalance waiting up to 9 s for members that are only idle.
HEARTBEAT_CAP_MS = 2_000


def close_at_once(producer: KafkaProducer) -> None:
    """Close a producer without waiting for what it still holds: Kafka Streams resets a
    producer it could not abort with close(Duration.ZERO), its pending batches dropped.
    kafka-python's close flushes first and raises when the flush times out (a producer
    stuck bumping its epoch), leaving its sender running; so the sender is force-closed
    (it fails the pending batches) before close, which then has nothing to wait for."""
    sender = producer._sender  # type: ignore[attr-defined]
    if sender is not None:
        sender.force_close()
        sender.join(5)
    try:
        producer.close(timeout=0)
    except Errors.KafkaError as e:  # a batch the sender never got to fail: dropped all the same
        log.info("producer closed with a batch pending: %s", e)


def heartbeat_interval_ms(session_timeout_ms: int) -> int:
    """A fifth of the session, at least 500 ms, at most HEARTBEAT_CAP_MS."""
    return min(HEARTBEAT_CAP_MS, max(500, session_timeout_ms // 5))


def new_consumer(
    cfg: WorkerConfig, tname: str, assignor: Any, listener: Any
) -> KafkaConsumer:
    consumer = KafkaConsumer(
        bootstrap_servers=cfg.bootstrap,
        client_id=f"{cfg.instance_id}-{tname}-consumer",
        group_id=cfg.application_id,
        group_instance_id=f"{cfg.instance_id}-{tname}",
        enable_auto_commit=False,
        isolation_level="read_committed" if cfg.eos else "read_uncommitted",
        auto_offset_reset="earliest",
        # kafka-python takes assignor instances too; its stub lists classes only
        partition_assignment_strategy=[assignor],
        session_timeout_ms=cfg.session_timeout_ms,
        heartbeat_interval_ms=heartbeat_interval_ms(cfg.session_timeout_ms),
        max_poll_records=cfg.max_poll_records,
    )
    # Know the input topic before the first join: otherwise the leader assigns nothing
    # and an immediate second rebalance follows.
    consumer.partitions_for_topic(cfg.input_topic)
    # the 3.0.11 stub lacks AsyncConsumerRebalanceListener, which 3.0.12 accepts
    consumer.subscribe([cfg.input_topic], listener=listener)
    return consumer


def new_producer(cfg: WorkerConfig, tname: str) -> KafkaProducer:
    common: dict[str, Any] = dict(
        bootstrap_servers=cfg.bootstrap,
        client_id=f"{cfg.instance_id}-{tname}-producer",
        acks="all",
        enable_idempotence=True,
        linger_ms=5,
    )
    if not cfg.eos:
        return KafkaProducer(**common)
    p = KafkaProducer(
        transactional_id=f"{cfg.application_id}-{cfg.instance_id}-{tname}",
        transaction_timeout_ms=cfg.transaction_timeout_ms,
        **common,
    )
    p.init_transactions()  # fences the previous incarnation, aborts its open txn
    return p


def _bounded(producer: KafkaProducer, begin: Callable[[Any], Any], what: str,
             timeout_ms: int) -> None:
    # private: the public calls wait without a bound (see the module doc)
    result = begin(producer._transaction_manager)  # type: ignore[attr-defined]
    producer._sender.wakeup()  # type: ignore[attr-defined]
    if not result.wait(timeout_ms=timeout_ms):  # raises the call's error if it failed
        raise Errors.KafkaTimeoutError(f"{what} not done after {timeout_ms} ms")


def commit_transaction(producer: KafkaProducer, timeout_ms: int = TXN_TIMEOUT_MS) -> None:
    _bounded(producer, lambda tm: tm.begin_commit(), "commit_transaction", timeout_ms)


def abort_transaction(producer: KafkaProducer, timeout_ms: int = TXN_TIMEOUT_MS) -> None:
    _bounded(producer, lambda tm: tm.begin_abort(), "abort_transaction", timeout_ms)
    # kafka-python 3.0.12 keeps the offsets of a TxnOffsetCommit that failed (a stale
    # generation: CommitFailedError) after the abort and sends them with the next
    # transaction's offsets: an aborted transaction's position would be committed, the
    # records before it never processed (tests/worker/test_txn_offsets.py).
    producer._transaction_manager._pending_txn_offset_commits.clear()  # type: ignore[attr-defined]


def send_offsets_to_transaction(
    producer: KafkaProducer, offsets: dict[TopicPartition, OffsetAndMetadata],
    meta: ConsumerGroupMetadata, timeout_ms: int = TXN_TIMEOUT_MS,
) -> None:
    _bounded(producer, lambda tm: tm.send_offsets_to_transaction(offsets, meta),
             "send_offsets_to_transaction", timeout_ms)


def fencing_error(error: BaseException) -> Errors.KafkaError | None:
    """The ProducerFenced / FencedInstanceId inside an error, if any: kafka-python wraps the
    fatal error of an earlier request into a plain KafkaError raised by the next call."""
    fenced = (Errors.ProducerFencedError, Errors.FencedInstanceIdError)
    for candidate in (error, *getattr(error, "args", ()), error.__cause__):
        if isinstance(candidate, fenced):
            return candidate
    # Sometimes only its name survives: "Cannot execute transactional method because we
    # are in an error state: ProducerFencedError".
    if isinstance(error, Errors.KafkaError):
        for kind in fenced:
            if kind.__name__ in str(error):
                return kind(str(error))
    return None


def newer_incarnation(cfg: WorkerConfig, instance_id: str, member_id: str | None) -> bool:
    """After a ProducerFenced: is another live member of the group using this thread's
    static instance id (this process is a zombie: fatal), or not (the transaction
    coordinator moved or the group rebalanced: task migrated)? When the group cannot be
    described, the answer is no, as Kafka Streams treats ProducerFenced as task migrated."""
    admin = None
    try:
        admin = KafkaAdminClient(
            bootstrap_servers=cfg.bootstrap, client_id=f"{instance_id}-membership",
            request_timeout_ms=MEMBERSHIP_TIMEOUT_MS,
        )
        group = admin.describe_groups([cfg.application_id]).get(cfg.application_id, {})
        members = group.get("members") or []
    except Exception as e:  # a broker down, a coordinator moving: cannot tell
        log.warning("membership check failed (%s: %s); assuming task migrated",
                    type(e).__name__, e)
        return False
    finally:
        if admin is not None:
            admin.close()
    return any(
        m.get("group_instance_id") == instance_id and m.get("member_id") != member_id
        for m in members
    )


async def commit_in_listener(consumer: KafkaConsumer,
                             offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
    """Commit `offsets` from a rebalance listener, which runs on the consumer's IO thread
    and so must await the commit. Private: kafka-python offers no public commit that may
    be awaited there."""
    coordinator = consumer._coordinator  # type: ignore[attr-defined]
    await coordinator._commit_offsets_sync_async(offsets)
