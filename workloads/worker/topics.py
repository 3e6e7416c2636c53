"""Internal topics: the worker creates its changelog topics when missing, as Kafka Streams
creates its internal topics at startup (partitions = input partitions, compacted)."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable

import kafka.errors as Errors
from kafka.admin import KafkaAdminClient

from workloads.ledger.contract import STORES
from workloads.worker.config import WorkerConfig

log = logging.getLogger(__name__)


def _partition_count(admin: KafkaAdminClient, topic: str) -> int:
    for t in admin.describe_topics([topic]):
        if t.get("error_code", 0) == 0 and t.get("partitions"):
            return len(t["partitions"])
    return 0


def _has_partitions(admin: KafkaAdminClient, topic: str, n: int) -> bool:
    return _partition_count(admin, topic) == n


def _wait_for(condition: Callable[[], bool], timeout_s: float, interval_s: float,
              failure: str) -> None:
    """The worker's one poll loop (it imports nothing of the harness's)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(failure)
        time.sleep(interval_s)


def input_partitions(admin: KafkaAdminClient, topic: str, timeout_s: float = 60.0) -> int:
    """The harness creates the input topic; wait for it rather than create it wrongly."""
    _wait_for(lambda: _partition_count(admin, topic) > 0, timeout_s, 0.5,
              f"input topic {topic} does not exist")
    return _partition_count(admin, topic)


def ensure_changelogs(cfg: WorkerConfig) -> int:
    """Create missing changelog topics; returns the number of input partitions."""
    admin = KafkaAdminClient(bootstrap_servers=cfg.bootstrap, client_id=f"{cfg.instance_id}-admin")
    try:
        n = input_partitions(admin, cfg.input_topic)
        brokers = len(admin.describe_cluster().get("brokers", [])) or 1
        replication = min(3, brokers)
        wanted = {}
        for store in STORES:
            name = cfg.changelog(store)
            if _partition_count(admin, name) == 0:
                wanted[name] = {
                    "num_partitions": n,
                    "replication_factor": replication,
                    "configs": {"cleanup.policy": "compact"},
                }
        if wanted:
            try:
                admin.create_topics(wanted, timeout_ms=30_000, wait_for_metadata=True)
                log.info("created changelog topics %s", sorted(wanted))
            except Errors.TopicAlreadyExistsError:
                pass  # another pod won the race: fine, same layout
        for name in wanted:
            _wait_for(functools.partial(_has_partitions, admin, name, n), 30, 0.2,
                      f"changelog {name} not ready")
        return n
    finally:
        admin.close()
