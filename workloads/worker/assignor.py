"""A streams partition assignor (the role of Kafka Streams' StreamsPartitionAssignor).

Each stream thread's consumer subscribes with user data naming its process (pod), thread,
the tasks it owned and the tasks its process has state for. The group leader assigns active
tasks (input partitions) and standby tasks, and sends the standby tasks to each member in
the assignment's user data. Deterministic given the members, so a test or a fault plan can
predict where tasks go:

- active: a task stays with the member that owned it, within a process's fair share
  (tasks x its threads / all threads, rounded up) and a member's (tasks / members, rounded
  up); an unplaced task goes to a process holding a standby or state for it, else to the
  least-loaded process; inside a process to its least-loaded thread (ties: thread name);
- standby: `standbys` copies per task on distinct processes other than the active's,
  preferring processes that held the task; inside a process the sorted standbys are
  interleaved over the sorted threads (Kafka Streams 2.x). Standbys do not stick to a
  thread, so a rebalance can move a standby between two threads of one process, which is
  the setting of KAFKA-8187.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka.cluster import ClusterMetadata
from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from workloads.ledger.contract import task_id, task_partition


@dataclass(frozen=True)
class MemberInfo:
    member_id: str
    process: str
    thread: str
    prev_active: frozenset[str] = frozenset()
    prev_standby: frozenset[str] = frozenset()
    local: frozenset[str] = frozenset()  # tasks with a state directory in the process


@dataclass(frozen=True)
class TaskAssignment:
    active: tuple[str, ...] = ()
    standby: tuple[str, ...] = ()


@dataclass
class _Load:
    active: list[str] = field(default_factory=list)
    standby: list[str] = field(default_factory=list)


def compute_assignment(
    tasks: list[str], members: list[MemberInfo], standbys: int
) -> dict[str, TaskAssignment]:
    members = sorted(members, key=lambda m: (m.process, m.thread, m.member_id))
    if not members:
        return {}
    by_process: dict[str, list[MemberInfo]] = {}
    for m in members:
        by_process.setdefault(m.process, []).append(m)
    load = {m.member_id: _Load() for m in members}
    n_tasks, n_members = len(tasks), len(members)
    member_cap = math.ceil(n_tasks / n_members)
    proc_cap = {p: math.ceil(n_tasks * len(ms) / n_members) for p, ms in by_process.items()}
    proc_active = dict.fromkeys(by_process, 0)
    owner: dict[str, str] = {}  # task -> process of its active

    def place_active(task: str, m: MemberInfo) -> None:
        load[m.member_id].active.append(task)
        proc_active[m.process] += 1
        owner[task] = m.process

    def least_loaded(ms: list[MemberInfo]) -> MemberInfo:
        return min(ms, key=lambda m: (len(load[m.member_id].active), m.thread))

    for t in tasks:  # sticky actives
        for m in members:
            if (
                t in m.prev_active
                and len(load[m.member_id].active) < member_cap
                and proc_active[m.process] < proc_cap[m.process]
            ):
                place_active(t, m)
                break
    for t in tasks:
        if t in owner:
            continue
        open_procs = [p for p in by_process if proc_active[p] < proc_cap[p]] or list(by_process)
        warm = [
            p for p in open_procs
            if any(t in m.prev_standby or t in m.local for m in by_process[p])
        ]
        pool = warm or open_procs
        proc = min(pool, key=lambda p: (proc_active[p] / len(by_process[p]), p))
        place_active(t, least_loaded(by_process[proc]))

    proc_standby: dict[str, list[str]] = {p: [] for p in by_process}
    for t in tasks:
        holders = {owner[t]}
        for _ in range(standbys):
            cands = [p for p in by_process if p not in holders]
            if not cands:
                break
            warm = [
                p for p in cands
                if any(t in m.prev_standby | m.prev_active | m.local for m in by_process[p])
            ]
            proc = min(
                warm or cands, key=lambda p: (len(proc_standby[p]) / len(by_process[p]), p)
            )
            proc_standby[proc].append(t)
            holders.add(proc)
    # Inside a process, standbys are interleaved over its threads in task order (as Kafka
    # Streams 2.x did): no thread stickiness, so a new standby can shift the others.
    for p, ts in proc_standby.items():
        ms = by_process[p]
        for i, t in enumerate(sorted(ts)):
            load[ms[i % len(ms)].member_id].standby.append(t)
    return {
        mid: TaskAssignment(tuple(sorted(ld.active)), tuple(sorted(ld.standby)))
        for mid, ld in load.items()
    }


@dataclass(frozen=True)
class Subscription:
    """What a thread tells the leader (JSON in the subscription's user data)."""

    process: str
    thread: str
    prev_active: tuple[str, ...]
    prev_standby: tuple[str, ...]
    local: tuple[str, ...]

    def encode(self) -> bytes:
        return json.dumps(self.__dict__).encode()

    @staticmethod
    def decode(raw: bytes | None) -> Subscription | None:
        try:
            d = json.loads(raw or b"")
            return Subscription(
                d["process"], d["thread"], tuple(d["prev_active"]), tuple(d["prev_standby"]),
                tuple(d["local"]),
            )
        except (ValueError, KeyError, TypeError):
            return None


class StreamsAssignor(AbstractPartitionAssignor):
    """One instance per consumer. `describe()` returns this thread's current view."""

    name = "kchaos-streams"
    version = 0

    def __init__(
        self, topic: str, standbys: int, describe: Callable[[], Subscription]
    ) -> None:
        self.topic = topic
        self.standbys = standbys
        self.describe = describe
        self.standby_tasks: tuple[str, ...] = ()

    def metadata(self, topics: Iterable[str]) -> ConsumerProtocolSubscription:
        return ConsumerProtocolSubscription(self.version, sorted(topics), self.describe().encode())

    def assign(
        self, cluster: ClusterMetadata, members: Sequence[Any]
    ) -> dict[str, ConsumerProtocolAssignment]:
        # members: JoinGroup response entries (member_id, decoded metadata), untyped upstream
        parts = sorted(cluster.partitions_for_topic(self.topic) or [])
        tasks = [task_id(p) for p in parts]
        infos = []
        for m in members:
            sub = Subscription.decode(m.metadata.user_data)
            if sub is None:  # a foreign member: treat it as its own process
                sub = Subscription(m.member_id, m.member_id, (), (), ())
            infos.append(
                MemberInfo(
                    m.member_id, sub.process, sub.thread, frozenset(sub.prev_active),
                    frozenset(sub.prev_standby), frozenset(sub.local),
                )
            )
        result = compute_assignment(tasks, infos, self.standbys)
        out: dict[str, ConsumerProtocolAssignment] = {}
        for m in members:
            ta = result.get(m.member_id, TaskAssignment())
            user = json.dumps({"active": ta.active, "standby": ta.standby}).encode()
            parts_m = sorted(task_partition(t) for t in ta.active)
            out[m.member_id] = ConsumerProtocolAssignment(
                self.version, [(self.topic, parts_m)], user
            )
        return out

    def on_assignment(self, assignment: ConsumerProtocolAssignment, generation: int) -> None:
        raw = assignment.user_data
        try:
            data = json.loads(raw if isinstance(raw, bytes) and raw else b"{}")
            self.standby_tasks = tuple(data.get("standby", []))
        except ValueError:
            self.standby_tasks = ()
