"""The stream thread's rebalance listener.

kafka-python runs it on the consumer's IO thread while `poll()` blocks the stream thread,
so it may use the producer and the stores but not the consumer's blocking API; the
at-least-once commit on revocation awaits the coordinator's coroutine.
"""

from __future__ import annotations

from typing import Protocol

import kafka.errors as Errors
from kafka import KafkaConsumer, TopicPartition
from kafka.consumer.subscription_state import AsyncConsumerRebalanceListener
from kafka.structs import OffsetAndMetadata

from workloads.worker.clients import commit_in_listener


class Rebalancing(Protocol):
    """What the listener needs of its stream thread (workloads/worker/thread.py)."""

    @property
    def consumer(self) -> KafkaConsumer: ...

    def prepare_revocation(self) -> dict[TopicPartition, OffsetAndMetadata]: ...

    def revocation_commit_failed(self, error: Exception) -> None: ...

    def finish_revocation(self) -> None: ...

    def on_assigned(self, assigned: set[TopicPartition]) -> None: ...

    def on_lost(self) -> None: ...


class StreamThreadListener(AsyncConsumerRebalanceListener):
    def __init__(self, thread: Rebalancing) -> None:
        self.t = thread

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        offsets = self.t.prepare_revocation()
        if offsets:  # at-least-once: commit the consumed offsets before the group moves on
            try:
                await commit_in_listener(self.t.consumer, offsets)
            except Errors.KafkaError as e:
                # Kafka Streams: TaskMigrated, tasks closed dirty, no checkpoint. Raised
                # from here it came out of poll() and killed the thread.
                self.t.revocation_commit_failed(e)
        self.t.finish_revocation()  # the checkpoints, only after a commit that succeeded

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.t.on_assigned(assigned)

    async def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self.t.on_lost()
