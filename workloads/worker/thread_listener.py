"""The stream thread's rebalance listener.

kafka-python runs it on the consumer's IO thread while `poll()` blocks the stream thread,
so it may use the producer and the stores but not the consumer's blocking API; the
at-least-once commit on revocation awaits the coordinator's coroutine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
            await coordinator._commit_offsets_sync_async(offsets)
        self.t.finish_revocation()

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.t.on_assigned(assigned)

    async def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self.t.on_lost()
