"""Pure helpers of the synthetic-history generator: what a correct worker may emit
where more than one answer is valid (a global version within the staleness bound, a store
found ahead of its checkpoint)."""

from __future__ import annotations

import json
import random
from typing import Any

from workloads.ledger.contract import store_digest


def joined_version(
    history: list[tuple[int, int]], sent: int, bound_ms: int, rnd: random.Random
) -> int | None:
    """A version the global thread may legitimately have had: any acknowledged before the
    send, but none older than the newest acknowledged more than the bound before it."""
    acked = [v for ts, v in history if ts < sent]
    if not acked:
        return None
    floor = max([v for ts, v in history if ts + bound_ms < sent], default=acked[0])
    return rnd.choice([v for v in acked if v >= floor])


def store_ahead(t: dict, changelog: list[dict[str, Any]], rnd: random.Random) -> dict:
    """Re-state a task-init's digest as the replay up to a later committed offset."""
    data = json.loads(t["data"])
    if t["event"] != "task-init" or data.get("checkpoint") is None or t["task"] == "global":
        return t
    part = int(t["task"].split("_")[1])
    log = [r for r in changelog if r["store"] == data["store"] and r["partition"] == part]
    later = [r["offset"] for r in log if r["offset"] > data["checkpoint"]]
    if not later:
        return t
    state = replayed(log, rnd.choice(later))
    data["digest"] = store_digest(state.items())
    data["entries"] = len(state)
    return {**t, "data": json.dumps(data)}


def replayed(log: list[dict[str, Any]], upto: int) -> dict[str, str]:
    """A store as its changelog records `log` leave it at offset `upto` (inclusive): the
    last value per key, a tombstone deletes."""
    state: dict[str, str] = {}
    for r in sorted(log, key=lambda r: r["offset"]):
        if r["offset"] > upto:
            break
        if r["value"] is None:
            state.pop(r["key"], None)
        else:
            state[r["key"]] = r["value"]
    return state
