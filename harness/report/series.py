"""Time series for the run timeline, computed from plain history data (no plotting here).

Times are seconds since the first history op (the start of the load phase). History ops and
trace events both carry wall-clock nanoseconds (time.time_ns on the same machine), so one
origin serves both. Every value is read defensively: a history op of the wrong shape is
skipped, never an error.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_BINS = 600  # enough resolution for a long run without a heavy page
NEMESIS = "nemesis"
SEND = "send"


@dataclass(frozen=True)
class Band:
    """One fault on one target, from its start op to its end op (or the end of the run)."""

    target: str
    fault: str
    start_s: float
    end_s: float
    healed: bool
    params: str = ""


@dataclass
class Timeline:
    origin_ns: int
    bin_s: float
    span_s: float
    bins: list[float] = field(default_factory=list)  # bin start times
    acks: list[float] = field(default_factory=list)  # ok sends per second
    indeterminate: list[float] = field(default_factory=list)  # info sends per second
    lag: list[float] | None = None
    commits: dict[str, list[float]] = field(default_factory=dict)  # pod -> commits/s
    bands: list[Band] = field(default_factory=list)
    band_source: str = "history"


def _ns(value: Any) -> int | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return int(value)
    return None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


_TRAILING_NUMBER = re.compile(r"(\d+)$")


def partition_of(key: Any) -> int | None:
    """A commit's offsets are keyed by input partition: `3`, "3" or "ledger-input-3"."""
    number = _int(key)
    if number is not None:
        return number
    match = _TRAILING_NUMBER.search(str(key))
    return int(match.group(1)) if match else None


def _bin_width(span_s: float) -> float:
    return float(max(1, math.ceil(span_s / MAX_BINS)))


def _rates(times_s: Iterable[float], bin_s: float, nbins: int) -> list[float]:
    counts = Counter(min(nbins - 1, max(0, int(t // bin_s))) for t in times_s)
    return [counts.get(i, 0) / bin_s for i in range(nbins)]


def _is_nemesis(op: Mapping[str, Any]) -> bool:
    return op.get("process") == NEMESIS and isinstance(op.get("value"), Mapping)


def fault_bands(ops: Sequence[Mapping[str, Any]], origin_ns: int, end_s: float) -> list[Band]:
    """Pair each nemesis start with the next end of the same fault on the same target."""
    open_: dict[tuple[str, str], list[tuple[float, str]]] = {}
    bands: list[Band] = []
    for op in ops:
        t_ns = _ns(op.get("time_ns"))
        if t_ns is None or not _is_nemesis(op):
            continue
        value = op["value"]
        key = (str(value.get("target", "?")), str(op.get("f", "?")))
        t = (t_ns - origin_ns) / 1e9
        params = value.get("params")
        params_text = "" if not params else str(params)
        if value.get("phase") == "end":
            starts = open_.get(key)
            start, text = starts.pop(0) if starts else (t, params_text)
            bands.append(Band(key[0], key[1], start, t, True, text))
        else:
            open_.setdefault(key, []).append((t, params_text))
    for (target, fault), starts in open_.items():
        bands.extend(Band(target, fault, s, max(s, end_s), False, p) for s, p in starts)
    return sorted(bands, key=lambda b: (b.start_s, b.target))


def plan_bands(plan: Mapping[str, Any], end_s: float) -> list[Band]:
    """Fallback when the history has no nemesis ops: the plan's recorded step times."""
    steps = plan.get("steps")
    bands: list[Band] = []
    for step in steps if isinstance(steps, list) else []:
        if not isinstance(step, Mapping):
            continue
        start = step.get("applied_at_s")
        if not isinstance(start, int | float) or isinstance(start, bool):
            continue
        healed = step.get("healed_at_s")
        done = isinstance(healed, int | float) and not isinstance(healed, bool)
        end = float(healed) if done else max(float(start), end_s)
        params = step.get("params")
        bands.append(
            Band(
                str(step.get("target", "?")),
                str(step.get("fault", "?")),
                float(start),
                end,
                done,
                "" if not params else str(params),
            )
        )
    return bands


def _lag(
    sends: Sequence[tuple[float, Mapping[str, Any]]],
    commits: Sequence[tuple[float, Mapping[str, Any]]],
    bin_s: float,
    nbins: int,
) -> list[float] | None:
    """Acked input minus committed input at the end of each bin: per partition when the
    acks carry partition/offset (end offset = last acked offset + 1), else acked count."""
    if not commits:
        return None
    events = [(t, 0, v) for t, v in sends] + [(t, 1, v) for t, v in commits]
    events.sort(key=lambda e: (e[0], e[1]))
    produced: dict[int | None, int] = {}
    committed: dict[int, int] = {}
    lag: list[float] = []
    i = 0
    for b in range(nbins):
        edge = (b + 1) * bin_s
        while i < len(events) and (events[i][0] < edge or b == nbins - 1):
            _, kind, value = events[i]
            i += 1
            if kind == 0:
                p, o = _int(value.get("partition")), _int(value.get("offset"))
                if p is not None and o is not None:
                    produced[p] = max(produced.get(p, 0), o + 1)
                else:
                    produced[None] = produced.get(None, 0) + 1
            else:
                for key, off in value.items():
                    p, o = partition_of(key), _int(off)
                    if p is not None and o is not None:
                        committed[p] = max(committed.get(p, 0), o)
        lag.append(max(0, sum(produced.values()) - sum(committed.values())))
    return lag


def build_timeline(
    ops: Sequence[Mapping[str, Any]],
    commits_by_pod: Mapping[str, Sequence[Mapping[str, Any]]],
    plan: Mapping[str, Any],
) -> Timeline | None:
    """None when there is nothing with a time to plot."""
    op_times = [t for op in ops if (t := _ns(op.get("time_ns"))) is not None]
    trace_times = [
        t for evs in commits_by_pod.values() for e in evs if (t := _ns(e.get("ts_ns"))) is not None
    ]
    if not op_times and not trace_times:
        return None
    origin = min(op_times) if op_times else min(trace_times)
    last = max(op_times + trace_times)
    span = max(1.0, (last - origin) / 1e9)
    bin_s = _bin_width(span)
    nbins = max(1, math.ceil(span / bin_s))
    tl = Timeline(origin_ns=origin, bin_s=bin_s, span_s=span)
    tl.bins = [i * bin_s for i in range(nbins)]

    sends: list[tuple[float, Mapping[str, Any]]] = []
    info_times: list[float] = []
    for op in ops:
        t_ns = _ns(op.get("time_ns"))
        if t_ns is None or op.get("f") != SEND:
            continue
        t = (t_ns - origin) / 1e9
        if op.get("type") == "ok":
            value = op.get("value")
            sends.append((t, value if isinstance(value, Mapping) else {}))
        elif op.get("type") == "info":
            info_times.append(t)
    tl.acks = _rates((t for t, _ in sends), bin_s, nbins)
    tl.indeterminate = _rates(info_times, bin_s, nbins)

    commits: list[tuple[float, Mapping[str, Any]]] = []
    for pod, events in sorted(commits_by_pod.items()):
        times = []
        for e in events:
            t_ns = _ns(e.get("ts_ns"))
            if t_ns is None:
                continue
            times.append((t_ns - origin) / 1e9)
            offsets = e.get("offsets")
            if isinstance(offsets, Mapping):
                commits.append((times[-1], offsets))
        tl.commits[pod] = _rates(times, bin_s, nbins)
    tl.lag = _lag(sends, commits, bin_s, nbins)

    tl.bands = fault_bands(ops, origin, span)
    if not tl.bands:
        tl.bands = plan_bands(plan, span)
        tl.band_source = "plan.json"
    return tl
