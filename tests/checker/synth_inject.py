"""Break a valid synthetic history in exactly one way, and say what the checker must find.

Each injector returns the broken history and an `Expected`: the check that must fire, how
many records it must count, and the positions (or keys) its examples must name. Injectors
return None when the history offers nothing to break (e.g. no output to remove).
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, replace

from synth_history import History, trace

from workloads.ledger.contract import task_id, task_partition


@dataclass(frozen=True)
class Expected:
    check: str
    count: int
    keys: frozenset[tuple]  # what the examples must name (all of it, when <= 10)
    key_fields: tuple[str, ...]


def _committed_firsts_with_output(h: History) -> list[dict]:
    out_pos = {(o["in_partition"], o["in_offset"]) for o in h.output}
    committed = {o["partition"]: o["committed"] for o in h.offsets}
    return [
        r
        for r in h.input
        if r["offset"] < committed[r["partition"]] and (r["partition"], r["offset"]) in out_pos
    ]


def _drop_output(h: History, rnd: random.Random, skip: bool) -> tuple[History, Expected] | None:
    cands = _committed_firsts_with_output(h)
    if not cands:
        return None
    rec = rnd.choice(cands)
    pos = (rec["partition"], rec["offset"])
    outputs = [o for o in h.output if (o["in_partition"], o["in_offset"]) != pos]
    traces = list(h.traces)
    if skip:
        pid = max(t["pid"] for t in h.traces)
        traces.append(
            trace(
                rec["timestamp_ms"] * 1_000_000 + 2,
                pid,
                "dedup-skip",
                task_id(rec["partition"]),
                event_id=rec["event_id"],
                partition=rec["partition"],
                offset=rec["offset"],
            )
        )
    kind = "dedup-skip" if skip else "lost-event"
    return (
        replace(h, output=outputs, traces=traces),
        Expected(kind, 1, frozenset([pos]), ("partition", "offset")),
    )


def dedup_skip(h: History, rnd: random.Random) -> tuple[History, Expected] | None:
    return _drop_output(h, rnd, skip=True)


def lost_event(h: History, rnd: random.Random) -> tuple[History, Expected] | None:
    return _drop_output(h, rnd, skip=False)


def duplicate_output(h: History, rnd: random.Random) -> tuple[History, Expected] | None:
    committed = {o["partition"]: o["committed"] for o in h.offsets}
    cands = [o for o in h.output if o["in_offset"] < committed[o["in_partition"]]]
    if not cands:
        return None
    orig = rnd.choice(cands)
    nxt = 1 + max(o["offset"] for o in h.output if o["partition"] == orig["partition"])
    dup = {**orig, "offset": nxt, "timestamp_ms": orig["timestamp_ms"] + 1}
    return (
        replace(h, output=[*h.output, dup]),
        Expected("duplicate-output", 1, frozenset([(orig["event_id"],)]), ("event_id",)),
    )


def _shift_balances(h: History, rnd: random.Random, lost: bool) -> tuple[History, Expected] | None:
    committed = {o["partition"]: o["committed"] for o in h.offsets}
    outs = [o for o in h.output if o["in_offset"] < committed[o["in_partition"]]]
    if not outs:
        return None
    victim = rnd.choice(outs)
    delta = rnd.randint(1, 100)
    output = copy.deepcopy(h.output)
    if lost:  # the store went back: every later output of the account is short by delta
        hit = [
            o
            for o in output
            if o["account"] == victim["account"]
            and o["in_offset"] < committed[o["in_partition"]]
            and o["in_offset"] >= victim["in_offset"]
        ]
    else:
        hit = [
            o
            for o in output
            if o["offset"] == victim["offset"] and o["partition"] == victim["partition"]
        ]
    for o in hit:
        o["balance"] += -delta if lost else delta
    onset = (victim["in_partition"], victim["in_offset"])
    return (
        replace(h, output=output),
        Expected(
            "lost-history" if lost else "wrong-balance",
            len(hit),
            frozenset([onset]),
            ("in_partition", "in_offset"),
        ),
    )


def lost_history(h: History, rnd: random.Random) -> tuple[History, Expected] | None:
    return _shift_balances(h, rnd, lost=True)


def wrong_balance(h: History, rnd: random.Random) -> tuple[History, Expected] | None:
    return _shift_balances(h, rnd, lost=False)


def stale_digest(h: History, rnd: random.Random) -> tuple[History, Expected] | None:
    """A task initialised from a checkpoint its store did not match."""
    inits = [
        i
        for i, t in enumerate(h.traces)
        if t["event"] == "task-init"
        and t["task"] != "global"  # the global store has no changelog the checker replays
        and json.loads(t["data"])["checkpoint"] is not None
    ]
    if h.meta["guarantee"] != "exactly_once_v2" or not inits:
        return None
    k = rnd.choice(inits)
    traces = copy.deepcopy(h.traces)
    data = json.loads(traces[k]["data"])
    count, total = data["digest"].split(":")
    data["digest"] = f"{int(count) + 1}:{total}"
    traces[k]["data"] = json.dumps(data)
    t = traces[k]
    return (
        replace(h, traces=traces),
        Expected(
            "stale-checkpoint",
            1,
            frozenset([(t["pod"], t["pid"], t["task"])]),
            ("pod", "pid", "task"),
        ),
    )


def checkpoint_while_running(h: History, rnd: random.Random) -> tuple[History, Expected] | None:
    """KAFKA-20685's shape: the restore-completion checkpoint is still there at RUNNING,
    and when the task commits its first records (the worker's `txn-commit` names the
    partitions whose tasks processed records)."""
    runs = [t for t in h.traces if t["event"] == "task-running"]
    if h.meta["guarantee"] != "exactly_once_v2" or not runs:
        return None
    run = rnd.choice(runs)
    write = trace(
        run["ts_ns"] - 1,
        run["pid"],
        "checkpoint-write",
        run["task"],
        offsets={"x": 1},
        reason="restore-complete",
    )
    commit = trace(
        run["ts_ns"] + 1, run["pid"], "txn-commit", offsets={str(task_partition(run["task"])): 1}
    )
    return (
        replace(h, traces=[*h.traces, write, commit]),
        Expected(
            "stale-checkpoint",
            1,
            frozenset([(run["pod"], run["pid"], run["task"])]),
            ("pod", "pid", "task"),
        ),
    )


def stale_global(h: History, rnd: random.Random) -> tuple[History, Expected] | None:
    bound_ms = int(h.meta["stale_global_bound_s"] * 1000)
    committed = {o["partition"]: o["committed"] for o in h.offsets}
    sent = {(r["partition"], r["offset"]): r["timestamp_ms"] for r in h.input}
    cands = []
    for i, o in enumerate(h.output):
        if o["in_offset"] >= committed[o["in_partition"]]:
            continue
        s = sent[(o["in_partition"], o["in_offset"])]
        acked = [
            a["version"]
            for a in h.accounts
            if a["account"] == o["account"] and a["timestamp_ms"] < s
        ]
        old = [
            a["version"]
            for a in h.accounts
            if a["account"] == o["account"]
            and a["timestamp_ms"] + bound_ms < s
            and a["version"] > 1
        ]
        if old:
            cands.append((i, max(old) - 1))
        elif acked:
            cands.append((i, None))
    if not cands:
        return None
    i, version = rnd.choice(cands)
    output = copy.deepcopy(h.output)
    output[i]["global_version"] = version
    pos = (output[i]["in_partition"], output[i]["in_offset"])
    return (
        replace(h, output=output),
        Expected("stale-global", 1, frozenset([pos]), ("in_partition", "in_offset")),
    )


def unavailable(h: History, rnd: random.Random) -> tuple[History, Expected] | None:
    meta = dict(h.meta)
    if rnd.random() < 0.5:
        meta["drained"] = False
        return (
            replace(h, meta=meta),
            Expected("unavailable", 1, frozenset([("not-drained",)]), ("reason",)),
        )
    # A dead pod explains a stall; alone (the others drained) it is not unavailability.
    meta["drained"], meta["dead_pods"] = False, ["pod-0"]
    return (
        replace(h, meta=meta),
        Expected("unavailable", 1, frozenset([("not-drained",), ("dead-pod",)]), ("reason",)),
    )


Injector = Callable[[History, random.Random], "tuple[History, Expected] | None"]

INJECTORS: dict[str, Injector] = {
    "dedup-skip": dedup_skip,
    "lost-event": lost_event,
    "duplicate-output": duplicate_output,
    "lost-history": lost_history,
    "wrong-balance": wrong_balance,
    "stale-checkpoint-digest": stale_digest,
    "stale-checkpoint-running": checkpoint_while_running,
    "stale-global": stale_global,
    "unavailable": unavailable,
}
