"""Collection against the session's real broker: committed records only, to the end
offsets, with the group's offsets, traces and history; then the checker judges it."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata
from pyspark.sql import SparkSession

from checker.check import check_history
from checker.collect import TopicNames, collect
from workloads.ledger.contract import (
    Account,
    Event,
    Output,
    account_name,
    changelog_topic,
)

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

PARTITIONS = 2


def _create(bootstrap: str, names: TopicNames, app: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics(
            [
                NewTopic(names.input, PARTITIONS, 1),
                NewTopic(names.output, PARTITIONS, 1),
                NewTopic(names.accounts, 1, 1),
                NewTopic(changelog_topic(app, "balances"), PARTITIONS, 1),
                NewTopic(changelog_topic(app, "dedup"), PARTITIONS, 1),
            ]
        )
    finally:
        admin.close()


def _ledger(bootstrap: str, names: TopicNames, app: str) -> set[str]:
    """A tiny valid ledger, plus an aborted transaction that must not be collected."""
    plain = KafkaProducer(bootstrap_servers=bootstrap)
    plain.send(
        names.accounts, key=b"acct-00000", value=Account(account_name(0), 1, "gold").encode()
    )
    plain.flush()
    ids: set[str] = set()
    events = []
    for i in range(6):
        p = i % PARTITIONS
        ev = Event(f"c-{i}", account_name(p), i + 1)
        md = plain.send(names.input, key=ev.account.encode(), value=ev.encode(), partition=p).get(
            30
        )
        events.append((ev, md.partition, md.offset))
        ids.add(ev.event_id)
    plain.close()

    txn = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"{app}-txn")
    txn.init_transactions()
    txn.begin_transaction()
    balance: dict[str, int] = {}
    for ev, p, off in events:
        balance[ev.account] = balance.get(ev.account, 0) + ev.amount
        gv = 1 if ev.account == account_name(0) else None
        out = Output(ev.event_id, ev.account, ev.amount, balance[ev.account], p, off, gv)
        txn.send(names.output, key=ev.account.encode(), value=out.encode(), partition=p)
        txn.send(
            changelog_topic(app, "balances"),
            key=ev.account.encode(),
            value=str(balance[ev.account]).encode(),
            partition=p,
        )
        txn.send(
            changelog_topic(app, "dedup"),
            key=ev.event_id.encode(),
            value=f"{p}:{off}".encode(),
            partition=p,
        )
    txn.commit_transaction()
    txn.begin_transaction()
    ghost = Output("ghost", account_name(0), 5, 999, 0, 0, None)
    txn.send(names.output, key=b"acct-00000", value=ghost.encode(), partition=0)
    txn.send(
        names.input,
        key=b"acct-00000",
        value=Event("ghost", account_name(0), 5).encode(),
        partition=0,
    )
    txn.send(changelog_topic(app, "dedup"), key=b"ghost", value=b"0:99", partition=0)
    txn.flush()
    txn.abort_transaction()
    txn.close()

    group = KafkaConsumer(bootstrap_servers=bootstrap, group_id=app, enable_auto_commit=False)
    tps = [TopicPartition(names.input, p) for p in range(PARTITIONS)]
    ends = group.end_offsets(tps)
    group.commit({tp: OffsetAndMetadata(ends[tp], "", -1) for tp in tps})
    group.close()
    return ids


def _files(run: Path) -> None:
    pod = run / "pods" / "pod-0"
    pod.mkdir(parents=True)
    lines = [
        {
            "ts_ns": 1,
            "pod": "pod-0",
            "pid": 7,
            "thread": "main",
            "event": "client-state",
            "from": "CREATED",
            "to": "RUNNING",
        },
        {
            "ts_ns": 2,
            "pod": "pod-0",
            "pid": 7,
            "thread": "StreamThread-1",
            "event": "task-init",
            "task": "0_0",
            "kind": "active",
            "store": "balances",
            "checkpoint": None,
            "digest": "0:0",
            "entries": 0,
        },
        {
            "ts_ns": 3,
            "pod": "pod-0",
            "pid": 7,
            "thread": "StreamThread-1",
            "event": "task-running",
            "task": "0_0",
        },
    ]
    torn = '{"ts_ns": 4, "pod": "pod-0", "ev'
    (pod / "trace.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines) + torn)
    ops = [
        {
            "index": 0,
            "time_ns": 5,
            "process": "client-0",
            "type": "invoke",
            "f": "send",
            "value": {"event_id": "c-0"},
        },
        {
            "index": 1,
            "time_ns": 6,
            "process": "nemesis",
            "type": "info",
            "f": "kill",
            "value": {"target": "pod-0", "phase": "start"},
        },
    ]
    (run / "history.jsonl").write_text("".join(json.dumps(x) + "\n" for x in ops))


def test_collect_reads_committed_history_and_it_checks_valid(
    kafka_bootstrap: str, spark: SparkSession, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    app = f"collect-{tag}"
    names = TopicNames(f"in-{tag}", f"out-{tag}", f"acc-{tag}")
    _create(kafka_bootstrap, names, app)
    ids = _ledger(kafka_bootstrap, names, app)
    _files(tmp_path)

    meta = {"guarantee": "exactly_once_v2", "drained": True, "drain_seconds": 0.5, "dead_pods": []}
    figures = collect(tmp_path, kafka_bootstrap, app, meta, topics=names)

    hist = tmp_path / "history"
    assert figures.records == {
        "input": 6,
        "output": 6,
        "changelog": 12,
        "accounts": 1,
        "offsets": 2,
        "traces": 3,
        "ops": 2,
    }
    assert figures.undecodable == {"traces": 1}
    assert figures.incomplete == {} and figures.missing_topics == []
    inputs = pq.read_table(hist / "input.parquet").to_pylist()
    assert {r["event_id"] for r in inputs} == ids  # the aborted "ghost" is not there
    outputs = pq.read_table(hist / "output.parquet").to_pylist()
    assert {r["event_id"] for r in outputs} == ids
    offsets = pq.read_table(hist / "offsets.parquet").to_pylist()
    assert all(o["committed"] == o["end"] for o in offsets)
    # The aborted input record and the transaction markers sit between committed offsets.
    assert sum(o["end"] for o in offsets) > len(inputs)
    written = json.loads((hist / "meta.json").read_text())
    assert written["application_id"] == app and written["partitions"] == PARTITIONS
    assert written["collection"]["records"]["input"] == 6

    doc = check_history(hist, spark=spark)
    assert doc["verdict"] is True, doc["checks"]
    assert doc["figures"]["events"] == 6
