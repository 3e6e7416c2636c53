"""A stream thread's standing in its consumer group: the join, whether the member is
stable (a consumer stuck without one is to be replaced), whether a newer incarnation of
the pod holds its static instance id (a zombie), and, at-least-once, whether the group may
have dropped it while it was cut off."""

from __future__ import annotations

import logging
import time

from kafka import KafkaConsumer
from kafka.structs import ConsumerGroupMetadata, MemberState

from workloads.worker import clients
from workloads.worker.config import WorkerConfig

log = logging.getLogger(__name__)

# A consumer whose coordinator stays unknown this long is replaced (kafka-python 3.0.12
# does not always find a coordinator again after a broker crash).
NO_COORDINATOR_S = 15.0
JOIN_TIMEOUT_MS = 2000


class Membership:
    def __init__(self, cfg: WorkerConfig, tname: str) -> None:
        self.cfg, self.tname = cfg, tname
        self.instance_id = f"{cfg.instance_id}-{tname}"
        self._unhealthy_since: float | None = None
        self._no_coordinator_since: float | None = None
        self._last_zombie_check = 0.0
        self._joined_at = float("-inf")  # when the listener last got an assignment
        self._lapsed = False  # at-least-once: processing held, membership maybe gone

    def joined(self) -> None:
        self._joined_at = time.monotonic()

    def join(self, consumer: KafkaConsumer) -> bool:
        """The group side of a poll, for up to JOIN_TIMEOUT_MS; true once the member is in
        the group (the listener has run). kafka-python 3.0.12 can lose a join, or a
        coordinator lookup, that completes between two short polls, so the exchange must
        finish inside one call; a whole poll() of that length would then run on to its
        timeout, as the partitions just assigned stay paused until their tasks are ready
        (1.7 s of a pod's start, measured from its trace and the broker's log)."""
        coordinator = consumer._coordinator  # type: ignore[attr-defined]
        return bool(coordinator.poll(timeout_ms=JOIN_TIMEOUT_MS))

    def healthy(self, consumer: KafkaConsumer, meta: ConsumerGroupMetadata | None
                ) -> tuple[bool, str | None]:
        """Stable member with a known coordinator; and why the consumer is to be replaced,
        if it is: one that has not found its coordinator for NO_COORDINATOR_S (broker
        crash), or is unstable for longer than a few session timeouts (a client hang).
        The thread then closes its tasks dirty and rejoins with a new consumer."""
        coordinator_known = not consumer._coordinator.coordinator_unknown()  # type: ignore[attr-defined]
        healthy = meta is not None and meta.state == MemberState.STABLE and coordinator_known
        now = time.monotonic()
        if healthy:
            self.reset()
            return True, None
        self._unhealthy_since = self._unhealthy_since or now
        self._no_coordinator_since = (
            None if coordinator_known else self._no_coordinator_since or now
        )
        limit = max(30.0, 3 * self.cfg.session_timeout_ms / 1000)
        if now - self._unhealthy_since > limit:
            return False, f"not a stable group member for {limit:.0f} s"
        if (self._no_coordinator_since is not None
                and now - self._no_coordinator_since > NO_COORDINATOR_S):
            return False, f"no group coordinator for {NO_COORDINATOR_S:.0f} s"
        return False, None

    def reset(self) -> None:
        """Healthy again, or a new consumer."""
        self._unhealthy_since = self._no_coordinator_since = None

    def heartbeat_fenced(self, consumer: KafkaConsumer) -> bool:
        """kafka-python's heartbeat thread swallows FencedInstanceId (it only stops
        heartbeating): a stable member that no longer heartbeats asks the group, at most
        every few seconds, whether a newer process holds its instance id.

        Stable now, not in the loop's snapshot (`_group_meta`): a heartbeat answered
        "unknown member" (the group dropped a member paused past its session) resets the
        generation and stops the heartbeats too, and the member's own rejoin, its member
        id not known yet, then looked like a newer process holding its instance id: the
        thread died "fenced" instead of rejoining. A fenced member stays stable in
        kafka-python (FencedInstanceId only stops the heartbeats)."""
        coordinator = consumer._coordinator  # type: ignore[attr-defined]
        generation = coordinator.generation_if_stable()
        if generation is None or getattr(coordinator, "_heartbeat_enabled", True):
            return False
        now = time.monotonic()
        if now - self._last_zombie_check < 5.0:
            return False
        self._last_zombie_check = now
        return clients.newer_incarnation(self.cfg, self.instance_id, generation.member_id)

    def zombie(self, consumer: KafkaConsumer) -> bool:
        """Does a newer process hold this thread's static instance id?"""
        coordinator = consumer._coordinator  # type: ignore[attr-defined]
        generation = getattr(coordinator, "_generation", None)
        member_id = getattr(generation, "member_id", None)
        return clients.newer_incarnation(self.cfg, self.instance_id, member_id)

    def lapsed(self, consumer: KafkaConsumer) -> bool:
        """At-least-once: may the group have dropped this member? Nothing fences it without
        transactions: a member paused or cut off past its session runs on with the records
        it had fetched until a heartbeat or a commit tells it, and would write, against
        its old stores, after the member that took its tasks over (issue 33: 200 ms of
        it put stale balances on a changelog). It processes only while a heartbeat, or
        its join, succeeded within half the session timeout; the broker counts the
        session from the same heartbeats, received no later than their responses."""
        heartbeat = consumer._coordinator.heartbeat  # type: ignore[attr-defined]
        last = max(heartbeat.last_receive, self._joined_at)
        lapsed = time.monotonic() - last >= self.cfg.session_timeout_ms / 2000
        if lapsed != self._lapsed:
            self._lapsed = lapsed
            if lapsed:
                log.warning("%s: no heartbeat for %.1f s: processing held until the group "
                            "answers", self.tname, time.monotonic() - last)
            else:
                log.info("%s: heartbeats answered again: processing resumed", self.tname)
        return lapsed
