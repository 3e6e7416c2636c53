"""The run's topics and the admin calls the run and the nemesis make on them."""

from __future__ import annotations

import contextlib

from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import TopicAlreadyExistsError

from workloads.ledger.contract import ACCOUNTS_TOPIC, INPUT_TOPIC, OUTPUT_TOPIC
from workloads.ledger.windowed import SESSIONS_TOPIC, WINDOWS_TOPIC


def create_topics(bootstrap: str, partitions: int, replication: int,
                  windowed: bool = False) -> None:
    """Input and output with `partitions` (and the windows' and sessions' outputs where the
    SUT keeps them: `windowed`); the accounts topic compacted, one partition."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    outputs = (OUTPUT_TOPIC, *((WINDOWS_TOPIC, SESSIONS_TOPIC) if windowed else ()))
    try:
        topics = [
            NewTopic(INPUT_TOPIC, partitions, replication),
            *(NewTopic(topic, partitions, replication) for topic in outputs),
            # compact,delete with no time/size limit: compacted like a global table, yet
            # Kafka 4 allows DeleteRecords on it (truncate-global) only with "delete" in it.
            NewTopic(ACCOUNTS_TOPIC, 1, replication, topic_configs={
                "cleanup.policy": "compact,delete", "retention.ms": "-1",
                "retention.bytes": "-1"}),
        ]
        for topic in topics:
            with contextlib.suppress(TopicAlreadyExistsError):
                admin.create_topics([topic])
    finally:
        admin.close()


def create_topics_named(bootstrap: str, partitions: dict[str, int], replication: int) -> None:
    """Topics by name with their partition counts (an app run's); existing ones are kept."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        for name, count in partitions.items():
            with contextlib.suppress(TopicAlreadyExistsError):
                admin.create_topics([NewTopic(name, count, replication)])
    finally:
        admin.close()


def _ends(consumer: KafkaConsumer, topic: str) -> dict[int, int]:
    partitions = consumer.partitions_for_topic(topic) or set()
    tps = [TopicPartition(topic, p) for p in sorted(partitions)]
    return {tp.partition: offset for tp, offset in consumer.end_offsets(tps).items()}


def _committed(admin: KafkaAdminClient, group: str, topic: str) -> dict[int, int]:
    offsets = admin.list_group_offsets(group).get(group, {})
    return {tp.partition: meta.offset for tp, meta in offsets.items() if tp.topic == topic}


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        return _ends(consumer, topic)
    finally:
        consumer.close()


def delete_records_before(bootstrap: str, topic: str, partition: int, offset: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        admin.delete_records({TopicPartition(topic, partition): offset})
    finally:
        admin.close()


def _lag(ends: dict[int, int], committed: dict[int, int]) -> int:
    return sum(max(0, end - committed.get(p, 0)) for p, end in ends.items())


class LagProbe:
    """Input records not yet committed by the group, with one consumer and one admin
    client kept open: the drain polls it several times a second and the load's progress
    every few seconds, and a new client costs a connection and a metadata round each."""

    def __init__(self, bootstrap: str, group: str, topics: tuple[str, ...] | None = None
                 ) -> None:
        # None: the ledger's input topic, looked up at the call (tests point it elsewhere)
        self.bootstrap, self.group = bootstrap, group
        self.topics = topics if topics is not None else (INPUT_TOPIC,)
        self._consumer: KafkaConsumer | None = None
        self._admin: KafkaAdminClient | None = None

    def lag(self) -> int | None:
        """None if the cluster did not answer."""
        try:
            if self._consumer is None:
                self._consumer = KafkaConsumer(bootstrap_servers=self.bootstrap,
                                               request_timeout_ms=30000)
            if self._admin is None:
                self._admin = KafkaAdminClient(bootstrap_servers=self.bootstrap,
                                               request_timeout_ms=30000)
            lag = 0
            for topic in self.topics:
                lag += _lag(_ends(self._consumer, topic),
                            _committed(self._admin, self.group, topic))
        except Exception:
            self.close()  # a broker restarted or moved: reconnect on the next poll
            return None
        return lag

    def ends(self, topics: tuple[str, ...]) -> dict[str, int] | None:
        """Each topic's end offsets summed over its partitions (records written, and under
        exactly-once the transaction markers); None if the cluster did not answer."""
        try:
            if self._consumer is None:
                self._consumer = KafkaConsumer(bootstrap_servers=self.bootstrap,
                                               request_timeout_ms=30000)
            return {topic: sum(_ends(self._consumer, topic).values()) for topic in topics}
        except Exception:
            self.close()
            return None

    def close(self) -> None:
        for client in (self._consumer, self._admin):
            if client is not None:
                with contextlib.suppress(Exception):
                    client.close()
        self._consumer = self._admin = None


def remove_pod_members(bootstrap: str, group: str, pod: str) -> list[str]:
    """The pod's static members leave the group at once, as a deliberately scaled-in
    Kafka Streams app does (KIP-812: close with leaveGroup, an admin
    removeMembersFromConsumerGroup of its instance ids). Without it, its partitions wait
    for the session timeout. Returns the instance ids removed."""
    from kafka.admin import MemberToRemove

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        members = admin.describe_groups([group]).get(group, {}).get("members") or []
        ids = sorted({
            str(i) for i in (m.get("group_instance_id") for m in members)
            if i and (i == pod or str(i).startswith(f"{pod}-"))
        })
        if ids:
            admin.remove_group_members(group, [MemberToRemove(group_instance_id=i)
                                               for i in ids])
        return ids
    finally:
        admin.close()


class NoAdminLeave(Exception):
    """The group's protocol has no admin call that removes a member."""


class GroupMembers:
    """faults.context.Group for the run's application."""

    def __init__(self, bootstrap: str, group: str, streams_group: bool = False) -> None:
        self.bootstrap, self.group, self.streams_group = bootstrap, group, streams_group

    def leave(self, pod: str) -> list[str]:
        if self.streams_group:  # said in the step's details (left_group_error), not []
            # The broker takes LeaveGroup for classic and consumer groups only, and the admin
            # API has no removal of a streams group's members (KIP-1071, as of 4.4).
            raise NoAdminLeave("a streams group's members cannot be removed by an admin "
                               "call: the pod's static members leave at their session timeout")
        return remove_pod_members(self.bootstrap, self.group, pod)
