"""Synthetic ledger histories for the checker's tests: a valid history, written the way
collection writes one (results/README.md), that a correct worker could have produced.

The generator plays the fixed worker: per partition it processes committed input in
order, skips re-sent event ids (tracing the skip), emits outputs with running balances and
the latest account version acknowledged before the send, and writes both changelogs. Half
way through, every task restarts cleanly: a checkpoint is written at close, read and
deleted at init (exactly-once), with the store digest it really had. Injections
(`synth_inject.py`) then break exactly one thing.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from synth_variants import joined_version, store_ahead

from checker.schema import HISTORY_FILES, META_FILE
from common.guarantees import AT_LEAST_ONCE, EXACTLY_ONCE_V2
from workloads.ledger.contract import (
    BALANCE_STORE,
    DEDUP_STORE,
    account_name,
    changelog_topic,
    store_digest,
    task_id,
)

T0_MS = 1_700_000_000_000
STEP_MS = 10  # between sends
BOUND_S = 0.1  # stale-global bound: 10 sends
APP = "ledger-app"
POD = "pod-0"

Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Params:
    seed: int
    partitions: int = 2
    accounts: int = 4
    events: int = 30
    resend_rate: float = 0.2
    updates: int = 2  # account version bumps during the run
    uncommitted_tail: int = 2  # input records past the committed offset, per partition
    guarantee: str = EXACTLY_ONCE_V2
    # Stores found ahead of their checkpoint at init (committed data flushed after the
    # checkpoint was written, as a killed standby leaves it): valid, must not be flagged.
    store_ahead: bool = False


@dataclass(frozen=True)
class History:
    params: Params
    input: Rows
    output: Rows
    changelog: Rows
    accounts: Rows
    offsets: Rows
    traces: Rows
    ops: Rows
    meta: dict[str, Any] = field(default_factory=dict)

    def tables(self) -> dict[str, Rows]:
        # a ledger history: the app files (the oracle's) are left out and read as empty
        return {stem: getattr(self, stem) for stem in HISTORY_FILES if hasattr(self, stem)}

    def write(self, history_dir: Path) -> Path:
        history_dir.mkdir(parents=True, exist_ok=True)
        for stem, rows in self.tables().items():
            table = pa.Table.from_pylist(rows, schema=HISTORY_FILES[stem])
            pq.write_table(table, history_dir / f"{stem}.parquet")
        (history_dir / META_FILE).write_text(json.dumps(self.meta))
        return history_dir


def trace(ts_ns: int, pid: int, event: str, task: str | None = None, **fields: Any) -> dict:
    line = {"ts_ns": ts_ns, "pod": POD, "pid": pid, "thread": "StreamThread-1", "event": event}
    if task is not None:
        line["task"] = task
    line.update(fields)
    return {
        "pod": POD,
        "pid": pid,
        "ts_ns": ts_ns,
        "thread": "StreamThread-1",
        "event": event,
        "task": task,
        "data": json.dumps(line),
    }


class _Partition:
    """One task's processing state, the way the fixed worker keeps it."""

    def __init__(self, p: int) -> None:
        self.p = p
        self.next_in = 0
        self.next_out = 0
        self.next_log = {BALANCE_STORE: 0, DEDUP_STORE: 0}
        self.store: dict[str, dict[str, str]] = {BALANCE_STORE: {}, DEDUP_STORE: {}}
        self.last_log: dict[str, int | None] = {BALANCE_STORE: None, DEDUP_STORE: None}

    def log(self, rows: Rows, store: str, key: str, value: str | None, gap: bool) -> None:
        # Transaction markers occupy offsets: read_committed sees gaps.
        self.next_log[store] += 1 if gap else 0
        off = self.next_log[store]
        rows.append(
            {"store": store, "partition": self.p, "offset": off, "key": key, "value": value}
        )
        self.next_log[store] = off + 1
        self.last_log[store] = off
        if value is None:
            self.store[store].pop(key, None)
        else:
            self.store[store][key] = value


def generate(params: Params) -> History:
    rnd = random.Random(params.seed)
    bound_ms = int(BOUND_S * 1000)
    accounts_rows: Rows = []
    versions: dict[str, list[tuple[int, int]]] = {}  # account -> [(ts_ms, version)]
    names = [account_name(i) for i in range(params.accounts)]
    acc_off = 0
    for name in names:
        if rnd.random() < 0.8:  # some accounts never get a global value: null is fine
            versions[name] = [(T0_MS - 1000, 1)]
            accounts_rows.append(
                {
                    "offset": acc_off,
                    "timestamp_ms": T0_MS - 1000,
                    "account": name,
                    "version": 1,
                    "tier": "basic",
                }
            )
            acc_off += 1
    span = params.events * STEP_MS
    for _ in range(params.updates):
        name = rnd.choice(names)
        ts = T0_MS + rnd.randrange(span)
        ver = (versions[name][-1][1] if name in versions else 0) + 1
        if name in versions and ts <= versions[name][-1][0]:
            continue
        versions.setdefault(name, []).append((ts, ver))
        accounts_rows.append(
            {
                "offset": acc_off,
                "timestamp_ms": ts,
                "account": name,
                "version": ver,
                "tier": rnd.choice(["basic", "gold"]),
            }
        )
        acc_off += 1

    parts = [_Partition(p) for p in range(params.partitions)]
    inputs: Rows = []
    outputs: Rows = []
    changelog: Rows = []
    traces: Rows = []
    ops: Rows = []
    balances: dict[str, int] = {}
    seen: dict[int, list[dict]] = {p: [] for p in range(params.partitions)}
    pid_of = {p: 100 for p in range(params.partitions)}
    for part in parts:
        t = task_id(part.p)
        traces.append(
            trace(
                T0_MS * 1_000_000 - 10,
                100,
                "task-init",
                t,
                kind="active",
                store=BALANCE_STORE,
                checkpoint=None,
                digest="0:0",
                entries=0,
            )
        )
        traces.append(trace(T0_MS * 1_000_000 - 9, 100, "task-running", t))
    # The global thread's init: its store is not a changelog partition; never judged here.
    traces.append(
        trace(
            T0_MS * 1_000_000 - 20,
            100,
            "task-init",
            "global",
            kind="global",
            store="accounts",
            checkpoint=len(accounts_rows) - 1,
            digest="1:12345",
            entries=1,
        )
    )
    restart_at = params.events // 2

    for i in range(params.events):
        sent = T0_MS + i * STEP_MS
        if i == restart_at:
            for part in parts:
                _restart(part, sent * 1_000_000 - 5, pid_of, traces, rnd)
        first_candidates = [e for q in seen.values() for e in q]
        if first_candidates and rnd.random() < params.resend_rate:
            orig = rnd.choice(first_candidates)
            event = {k: orig[k] for k in ("event_id", "account", "amount")}
        else:
            acct = rnd.choice(names)
            event = {"event_id": f"e-{i:05d}", "account": acct, "amount": rnd.randint(-50, 100)}
        part = parts[names.index(event["account"]) % params.partitions]
        rec = {"partition": part.p, "offset": part.next_in, "timestamp_ms": sent, **event}
        part.next_in += 1
        inputs.append(rec)
        ops.append(
            {
                "index": len(ops),
                "time_ns": sent * 1_000_000,
                "process": "client-0",
                "type": "invoke",
                "f": "send",
                "value": json.dumps(event),
            }
        )
        ops.append(
            {
                "index": len(ops),
                "time_ns": sent * 1_000_000 + 1,
                "process": "client-0",
                "type": "ok",
                "f": "send",
                "value": json.dumps({**event, "partition": part.p, "offset": rec["offset"]}),
            }
        )
        if event["event_id"] in part.store[DEDUP_STORE]:
            traces.append(
                trace(
                    sent * 1_000_000 + 2,
                    pid_of[part.p],
                    "dedup-skip",
                    task_id(part.p),
                    event_id=event["event_id"],
                    partition=part.p,
                    offset=rec["offset"],
                )
            )
            continue
        seen[part.p].append(rec)
        bal = balances.get(event["account"], 0) + event["amount"]
        balances[event["account"]] = bal
        gver = joined_version(versions.get(event["account"], []), sent, bound_ms, rnd)
        outputs.append(
            {
                "partition": part.p,
                "offset": part.next_out,
                "timestamp_ms": sent + 3,
                **event,
                "balance": bal,
                "in_partition": part.p,
                "in_offset": rec["offset"],
                "global_version": gver,
            }
        )
        part.next_out += 1
        gap = rnd.random() < 0.3
        part.log(changelog, BALANCE_STORE, event["account"], str(bal), gap)
        part.log(changelog, DEDUP_STORE, event["event_id"], f"{part.p}:{rec['offset']}", gap)
        if rnd.random() < 0.1:  # a short-lived key: exercises tombstones in the digest
            key = f"tmp-{i}"
            part.log(changelog, DEDUP_STORE, key, "x", False)
            part.log(changelog, DEDUP_STORE, key, None, False)

    offsets = [
        {"partition": part.p, "committed": part.next_in, "end": part.next_in} for part in parts
    ]
    _uncommitted_tail(params, parts, inputs, outputs, rnd)
    for row, part in zip(offsets, parts, strict=True):
        row["end"] = part.next_in
    if params.store_ahead:
        traces = [store_ahead(t, changelog, rnd) for t in traces]
    meta = {
        "guarantee": params.guarantee,
        "partitions": params.partitions,
        "application_id": APP,
        "drained": True,
        "drain_seconds": 1.0,
        "dead_pods": [],
        "stale_global_bound_s": BOUND_S,
    }
    return History(params, inputs, outputs, changelog, accounts_rows, offsets, traces, ops, meta)


def _restart(
    part: _Partition, ts_ns: int, pid_of: dict[int, int], traces: Rows, rnd: random.Random
) -> None:
    """A clean close and re-init of the task: checkpoint at close, trusted at init."""
    t = task_id(part.p)
    old, new = pid_of[part.p], pid_of[part.p] + 1
    offsets = {f"{changelog_topic(APP, s)}-{part.p}": part.last_log[s] for s in part.store}
    traces.append(trace(ts_ns, old, "checkpoint-write", t, offsets=offsets, reason="close"))
    pid_of[part.p] = new
    for k, store in enumerate(sorted(part.store)):
        entries = part.store[store]
        traces.append(
            trace(
                ts_ns + 1 + k,
                new,
                "task-init",
                t,
                kind="active",
                store=store,
                checkpoint=part.last_log[store],
                digest=store_digest(entries.items()),
                entries=len(entries),
            )
        )
    traces.append(trace(ts_ns + 3, new, "checkpoint-read", t, offsets=offsets))
    traces.append(trace(ts_ns + 4, new, "checkpoint-delete", t, reason="eos-init"))
    traces.append(
        trace(
            ts_ns + 5,
            new,
            "restore-start",
            t,
            store=BALANCE_STORE,
            partition=part.p,
            from_offset=0,
            end_offset=0,
        )
    )
    traces.append(
        trace(
            ts_ns + 6,
            new,
            "restore-end",
            t,
            store=BALANCE_STORE,
            partition=part.p,
            restored=0,
            offset=0,
        )
    )
    traces.append(trace(ts_ns + 7 + rnd.randrange(3), new, "task-running", t))


def _uncommitted_tail(
    params: Params, parts: list[_Partition], inputs: Rows, outputs: Rows, rnd: random.Random
) -> None:
    """Input past the committed offsets, some with (nonsense) outputs: at-least-once may
    emit before committing, and the checker must ignore both."""
    for part in parts:
        for _ in range(params.uncommitted_tail):
            sent = T0_MS + params.events * STEP_MS + part.next_in
            rec = {
                "partition": part.p,
                "offset": part.next_in,
                "timestamp_ms": sent,
                "event_id": f"tail-{part.p}-{part.next_in}",
                "account": "acct-tail",
                "amount": 7,
            }
            part.next_in += 1
            inputs.append(rec)
            if params.guarantee == AT_LEAST_ONCE and rnd.random() < 0.5:
                outputs.append(
                    {
                        "partition": part.p,
                        "offset": part.next_out,
                        "timestamp_ms": sent,
                        "event_id": rec["event_id"],
                        "account": "acct-tail",
                        "amount": 7,
                        "balance": -999,
                        "in_partition": part.p,
                        "in_offset": rec["offset"],
                        "global_version": None,
                    }
                )
                part.next_out += 1
