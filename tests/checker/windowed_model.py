"""A small model of the ledger app's windows and sessions (kstreams-common WindowAggregations,
as Kafka Streams runs them: KStreamWindowAggregate, KStreamSessionWindowAggregate with the
cache off): the records each task sends for an input, for the window checks' tests.

Records are fed per partition in offset order; each partition is its own task with its own
stream time (the largest timestamp so far).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from workloads.ledger.windowed import WindowSpec


@dataclass(frozen=True)
class In:
    partition: int
    offset: int
    timestamp_ms: int
    account: str
    amount: int


def run(spec: WindowSpec, records: Iterable[In]) -> tuple[list[dict[str, Any]],
                                                          list[dict[str, Any]]]:
    """(windows-topic rows, sessions-topic rows) with their output offsets: an account's
    outputs go to the partition of its input."""
    windows: dict[tuple[str, int], tuple[int, int]] = {}
    sessions: dict[str, list[tuple[int, int, int, int]]] = defaultdict(list)
    stream_time: dict[int, int] = {}
    out_w: list[dict[str, Any]] = []
    out_s: list[dict[str, Any]] = []
    next_offset: dict[tuple[str, int], int] = defaultdict(int)

    def send(rows: list[dict[str, Any]], topic: str, r: In, **value: Any) -> None:
        offset = next_offset[(topic, r.partition)]
        next_offset[(topic, r.partition)] += 1
        rows.append({"partition": r.partition, "offset": offset, "timestamp_ms": r.timestamp_ms,
                     "account": r.account, "removed": False, **value})

    for r in sorted(records, key=lambda x: (x.partition, x.offset)):
        st = max(stream_time.get(r.partition, -1), r.timestamp_ms)
        stream_time[r.partition] = st
        for start in spec.starts(r.timestamp_ms):
            if start + spec.size_ms > st - spec.grace_ms:
                count, total = windows.get((r.account, start), (0, 0))
                windows[(r.account, start)] = (count + 1, total + r.amount)
                send(out_w, "w", r, start=start, end=start + spec.size_ms, count=count + 1,
                     sum=total + r.amount)
        near = [s for s in sessions[r.account]
                if s[1] >= r.timestamp_ms - spec.session_gap_ms
                and s[0] <= r.timestamp_ms + spec.session_gap_ms]
        start = min([r.timestamp_ms, *(s[0] for s in near)])
        end = max([r.timestamp_ms, *(s[1] for s in near)])
        if end < st - spec.session_grace_ms:
            continue  # late: dropped
        for s in near:
            sessions[r.account].remove(s)
            send(out_s, "s", r, start=s[0], end=s[1], count=None, sum=None, removed=True)
        merged = (start, end, 1 + sum(s[2] for s in near), r.amount + sum(s[3] for s in near))
        sessions[r.account].append(merged)
        send(out_s, "s", r, start=start, end=end, count=merged[2], sum=merged[3])
    return out_w, out_s
