"""Read a topic from the beginning to its end offsets, read_committed, record by record.

The end offsets are taken once, when reading starts (under read_committed they are the
last stable offsets): what the checker judges is the log as it was at collection time,
even if something still writes. Records are handed to a callback one at a time; nothing
here keeps them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from kafka import KafkaConsumer, TopicPartition
from kafka.consumer.fetcher import ConsumerRecord

POLL_MS = 500
# No progress for this long while short of the end offsets: give up on the partition
# (reported as incomplete, which makes nothing valid by accident: the checker still
# judges what was read, and the harness sees `incomplete` in the collection figures).
DEFAULT_STALL_S = 60.0


@dataclass(frozen=True)
class TopicRead:
    topic: str
    records: int
    end_offsets: dict[int, int]
    incomplete: tuple[int, ...]  # partitions not read to their end offset
    missing: bool  # the topic does not exist


def read_topic(
    bootstrap: str,
    topic: str,
    on_record: Callable[[ConsumerRecord], None],
    *,
    stall_s: float = DEFAULT_STALL_S,
) -> TopicRead:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        isolation_level="read_committed",
        enable_auto_commit=False,
        group_id=None,
        auto_offset_reset="earliest",
        request_timeout_ms=30_000,
        max_partition_fetch_bytes=8 * 1024 * 1024,
        fetch_max_bytes=64 * 1024 * 1024,
    )
    try:
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            return TopicRead(topic, 0, {}, (), missing=True)
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = {tp: off for tp, off in consumer.end_offsets(tps).items()}
        # a position not known yet (None) counts as the beginning
        pending = {tp for tp in tps if (consumer.position(tp) or 0) < ends[tp]}
        records = 0
        last_progress = time.monotonic()
        while pending:
            polled = consumer.poll(timeout_ms=POLL_MS, max_records=10_000)
            for tp, batch in polled.items():
                for rec in batch:
                    if rec.offset < ends[tp]:
                        on_record(rec)
                        records += 1
            if polled:
                last_progress = time.monotonic()
            for tp in list(pending):
                if (consumer.position(tp) or 0) >= ends[tp]:
                    pending.discard(tp)
                    consumer.pause(tp)  # past the end: stop fetching what we would drop
            if pending and time.monotonic() - last_progress > stall_s:
                break
        return TopicRead(
            topic,
            records,
            {tp.partition: off for tp, off in ends.items()},
            tuple(sorted(tp.partition for tp in pending)),
            missing=False,
        )
    finally:
        consumer.close()
