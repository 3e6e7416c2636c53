"""Test helpers that talk to Kafka: topics, producing events, reading committed output,
and an exact ledger verdict (a tiny stand-in for the checker, so worker tests do not
depend on Spark)."""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

from workloads.ledger.contract import Account, Event, Output, account_name


@dataclass(frozen=True)
class Topics:
    app: str
    input: str
    output: str
    accounts: str
    partitions: int

    def worker_args(self) -> list[str]:
        return [
            "--application-id", self.app, "--input-topic", self.input,
            "--output-topic", self.output, "--accounts-topic", self.accounts,
        ]


def create_topics(bootstrap: str, prefix: str, partitions: int) -> Topics:
    t = Topics(prefix, f"{prefix}-events", f"{prefix}-output", f"{prefix}-accounts", partitions)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics(
            {
                t.input: {"num_partitions": partitions, "replication_factor": 1},
                t.output: {"num_partitions": partitions, "replication_factor": 1},
                # compact,delete: Kafka 4 refuses DeleteRecords (truncate-global) on a
                # compact-only topic
                t.accounts: {"num_partitions": 1, "replication_factor": 1,
                             "configs": {"cleanup.policy": "compact,delete"}},
            },
            wait_for_metadata=True,
        )
    finally:
        admin.close()
    return t


def accounts_for_partitions(n_accounts: int, partitions: int) -> dict[int, list[str]]:
    """Which accounts the default partitioner puts in each partition."""
    from kafka.partitioner.default import murmur2

    by_p: dict[int, list[str]] = defaultdict(list)
    for i in range(n_accounts):
        a = account_name(i)
        by_p[(murmur2(a.encode()) & 0x7FFFFFFF) % partitions].append(a)
    return by_p


class Producer:
    """Sends events synchronously and keeps what was acknowledged."""

    def __init__(self, bootstrap: str, topics: Topics) -> None:
        self.t = topics
        self.p = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
        self.n = 0

    def events(
        self, accounts: list[str], count: int, amount: int = 1, prefix: str = "e"
    ) -> list[Event]:
        evs = []
        for _ in range(count):
            a = accounts[self.n % len(accounts)]
            evs.append(Event(f"{prefix}-{self.n}", a, amount))
            self.n += 1
        self.send(evs)
        return evs

    def send(self, events: list[Event]) -> None:
        futs = [self.p.send(self.t.input, key=e.account.encode(), value=e.encode()) for e in events]
        self.p.flush()
        for f in futs:
            f.get(10)

    def account(self, account: str, version: int) -> int:
        md = self.p.send(self.t.accounts, key=account.encode(),
                         value=Account(account, version, "basic").encode()).get(10)
        return md.offset

    def close(self) -> None:
        self.p.close()


def read_all(bootstrap: str, topic: str, committed: bool = True) -> list:
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                      isolation_level="read_committed" if committed else "read_uncommitted",
                      auto_offset_reset="earliest")
    try:
        tps = [TopicPartition(topic, p) for p in sorted(c.partitions_for_topic(topic) or [])]
        c.assign(tps)
        c.seek_to_beginning(*tps)
        end = c.end_offsets(tps)
        out = []
        deadline = time.monotonic() + 30
        while any(c.position(tp) < end[tp] for tp in tps) and time.monotonic() < deadline:
            for recs in c.poll(timeout_ms=200).values():
                out.extend(recs)
        return out
    finally:
        c.close()


def outputs(bootstrap: str, topics: Topics) -> list[Output]:
    return [Output.decode(r.value) for r in read_all(bootstrap, topics.output)]


def inputs(bootstrap: str, topics: Topics) -> list[tuple[int, int, Event]]:
    recs = read_all(bootstrap, topics.input)
    return [(r.partition, r.offset, Event.decode(r.value)) for r in recs]


def committed_offsets(bootstrap: str, topics: Topics) -> dict[int, int]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        res = admin.list_group_offsets({topics.app: None})
    finally:
        admin.close()
    offs = {}
    for _group, parts in (res.items() if isinstance(res, dict) else []):
        for tp, om in (parts.items() if isinstance(parts, dict) else []):
            if tp.topic == topics.input:
                offs[tp.partition] = om.offset
    return offs


@dataclass
class Verdict:
    missing: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    wrong_balance: list[tuple[str, int, int]] = field(default_factory=list)  # id, got, want
    processed: int = 0

    @property
    def valid(self) -> bool:
        return not (self.missing or self.duplicates or self.wrong_balance)


def verdict(ins: list[tuple[int, int, Event]], outs: list[Output]) -> Verdict:
    """Every distinct input event has exactly one output whose balance is the sum of all
    earlier distinct amounts of its account (input order)."""
    v = Verdict()
    by_id: dict[str, list[Output]] = defaultdict(list)
    for o in outs:
        by_id[o.event_id].append(o)
    running: dict[str, int] = defaultdict(int)
    seen: set[str] = set()
    for _p, _o, e in sorted(ins, key=lambda x: (x[0], x[1])):
        if e.event_id in seen:
            continue
        seen.add(e.event_id)
        running[e.account] += e.amount
        got = by_id.get(e.event_id, [])
        if not got:
            v.missing.append(e.event_id)
            continue
        v.processed += 1
        if len(got) > 1:
            v.duplicates.append(e.event_id)
        if got[0].balance != running[e.account]:
            v.wrong_balance.append((e.event_id, got[0].balance, running[e.account]))
    return v
