"""The stream thread's rebalance listener.

kafka-python runs it on the consumer's IO thread while `poll()` blocks the stream thread,
so it may use the producer and the stores but not the consumer's blocking API; the
at-least-once commit on revocation awaits the coordinator's coroutine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import kafka.errors as Errors
from kafka import TopicPartition
from kafka.consumer.subscription_state import AsyncConsumerRebalanceListener

if TYPE_CHECKING:
    from workloads.worker.thread import StreamThread


class StreamThreadListener(AsyncConsumerRebalanceListener):
    def __init__(self, thread: StreamThread) -> None:
        self.t = thread

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        offsets = self.t.prepare_revocation()
        if offsets:  # at-least-once: commit the consumed offsets before the group moves on
            # private: kafka-python offers no public commit that may be awaited in a listener
            coordinator = self.t.consumer._coordinator  # type: ignore[attr-defined]
            try:
                await coordinator._commit_offsets_sync_async(offsets)
            except Errors.KafkaError as e:
                # Kafka Streams: TaskMigrated, tasks closed dirty, no checkpoint. Raised
                # from here it came out of poll() and killed the thread.
                self.t.revocation_commit_failed(e)
        self.t.finish_revocation()  # the checkpoints, only after a commit that succeeded

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.t.on_assigned(assigned)

    async def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self.t.on_lost()
