"""Time series for the run timeline, computed from plain history data (no plotting here).

A history can hold millions of ops, so nothing is kept per op: `Accumulator` is fed one op
(or trace commit) at a time and keeps counts in fine time slots (FINE_NS) plus the nemesis
ops; `finish` picks the chart's bin width from the span and folds the slots into bins.
Times on the chart are seconds since the earliest op (the start of the load phase). History
ops and trace events both carry wall-clock nanoseconds from the same machine, so one origin
serves both. Every value is read defensively: an op of the wrong shape is skipped.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_BINS = 600  # enough resolution for a long run without a heavy page
FINE_NS = 100_000_000  # 0.1 s slots, folded into the chart's bins at the end
NEMESIS = "nemesis"
SEND = "send"
# The supervisor's ops (harness/platforms/supervised.py): a pod's process exits, restarts.
POD_LIFECYCLE = ("pod-exited", "pod-restarted")
# An app run's samples of its topics' end offsets and its group's lag (harness/run/lifecycle.py).
TOPIC_PROGRESS = "topic-progress"


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
    pod_events: list[PodEvent] = field(default_factory=list)
    # An app run's: records/s of each input ("in: t") and output ("out: t") topic, and the
    # group's lag as sampled; empty and None for a ledger run.
    topic_rates: dict[str, list[float]] = field(default_factory=dict)
    group_lag: list[float] | None = None


@dataclass(frozen=True)
class PodEvent:
    """A pod's process exited (with its cause) or was restarted, at `at_s`."""

    target: str
    what: str  # "pod-exited" or "pod-restarted"
    at_s: float
    text: str


def _ns(value: Any) -> int | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return int(value)
    return None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        # int() itself decides: str.isdigit and str.strip accept characters int() refuses
        # ("²", a leading "\x1e"), which crashed the report on a damaged trace.
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


_TRAILING_NUMBER = re.compile(r"(\d+)$")


def partition_of(key: Any) -> int | None:
    """A commit's offsets are keyed by input partition: `3`, "3" or "ledger-input-3"."""
    number = _int(key)
    if number is not None:
        return number
    match = _TRAILING_NUMBER.search(str(key))
    return int(match.group(1)) if match else None


def fault_bands(ops: Sequence[Mapping[str, Any]], origin_ns: int, end_s: float) -> list[Band]:
    """Pair each nemesis start with the next end of the same fault on the same target."""
    open_: dict[tuple[str, str], list[tuple[float, str]]] = {}
    bands: list[Band] = []
    for op in sorted(ops, key=lambda o: o["time_ns"]):
        value = op["value"]
        key = (str(value.get("target", "?")), str(op.get("f", "?")))
        t = (op["time_ns"] - origin_ns) / 1e9
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


def _seconds(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def plan_bands(plan: Mapping[str, Any], end_s: float) -> list[Band]:
    """Fallback when the history has no nemesis ops: the plan's recorded step times."""
    steps = plan.get("steps")
    bands: list[Band] = []
    for step in steps if isinstance(steps, list) else []:
        start = _seconds(step.get("applied_at_s")) if isinstance(step, Mapping) else None
        if start is None:
            continue
        healed = _seconds(step.get("healed_at_s"))
        params = step.get("params")
        bands.append(Band(
            str(step.get("target", "?")), str(step.get("fault", "?")), start,
            healed if healed is not None else max(start, end_s), healed is not None,
            "" if not params else str(params),
        ))
    return bands


class Accumulator:
    """Per-slot counts of a history and the pods' commits, fed one record at a time."""

    def __init__(self) -> None:
        self.anchor_ns: int | None = None
        self.first_ns: int | None = None
        self.last_ns: int | None = None
        self.acks: Counter[int] = Counter()
        self.info: Counter[int] = Counter()
        # slot -> partition -> end offset acked in that slot (None: acks without a position)
        self.produced: defaultdict[int, dict[int | None, int]] = defaultdict(dict)
        self.committed: defaultdict[int, dict[int, int]] = defaultdict(dict)
        self.commits: dict[str, Counter[int]] = {}
        self.nemesis: list[dict[str, Any]] = []
        self.pod_ops: list[tuple[int, str, dict[str, Any]]] = []
        self.topic_samples: list[tuple[int, dict[str, Any]]] = []

    def _seen(self, t_ns: int) -> int:
        """The slot of a time. Slots start at the first time seen (usually the earliest:
        the history is appended in order), so whole-second bins fold them exactly."""
        if self.anchor_ns is None:
            self.anchor_ns = t_ns
        self.first_ns = t_ns if self.first_ns is None else min(self.first_ns, t_ns)
        self.last_ns = t_ns if self.last_ns is None else max(self.last_ns, t_ns)
        return (t_ns - self.anchor_ns) // FINE_NS

    def add_op(self, op: Mapping[str, Any]) -> None:
        t_ns = _ns(op.get("time_ns"))
        if t_ns is None:
            return
        value = op.get("value")
        value = value if isinstance(value, Mapping) else {}
        if op.get("process") == NEMESIS and value:
            self._seen(t_ns)
            self.nemesis.append({"time_ns": t_ns, "f": op.get("f"), "value": dict(value)})
        elif op.get("f") in POD_LIFECYCLE and value:
            self.pod_ops.append((t_ns, str(op.get("f")), dict(value)))
        elif op.get("f") == TOPIC_PROGRESS and value:
            self._seen(t_ns)
            self.topic_samples.append((t_ns, dict(value)))
        elif op.get("f") == SEND and op.get("type") in ("ok", "info"):
            slot = self._seen(t_ns)
            if op.get("type") == "info":
                self.info[slot] += 1
                return
            self.acks[slot] += 1
            ends = self.produced[slot]
            p, o = _int(value.get("partition")), _int(value.get("offset"))
            if p is not None and o is not None:
                ends[p] = max(ends.get(p, 0), o + 1)
            else:
                ends[None] = ends.get(None, 0) + 1

    def add_commit(self, pod: str, event: Mapping[str, Any]) -> None:
        t_ns = _ns(event.get("ts_ns"))
        if t_ns is None:
            return
        slot = self._seen(t_ns)
        self.commits.setdefault(pod, Counter())[slot] += 1
        offsets = event.get("offsets")
        if isinstance(offsets, Mapping):
            done = self.committed[slot]
            for key, off in offsets.items():
                p, o = partition_of(key), _int(off)
                if p is not None and o is not None:
                    done[p] = max(done.get(p, 0), o)

    def _lag(self, bin_of: Any, nbins: int) -> list[float] | None:
        """Acked input minus committed input at the end of each bin: per partition when acks
        carry partition/offset (end offset = last acked + 1), else by counting acks."""
        if not self.committed:
            return None
        ends: dict[int | None, int] = {}
        done: dict[int, int] = {}
        by_bin: defaultdict[int, list[int]] = defaultdict(list)
        for slot in {*self.produced, *self.committed}:
            by_bin[bin_of(slot)].append(slot)
        lag: list[float] = []
        for b in range(nbins):
            for slot in sorted(by_bin.get(b, ())):
                for p, end in self.produced.get(slot, {}).items():
                    ends[p] = ends.get(p, 0) + end if p is None else max(ends.get(p, 0), end)
                for p, off in self.committed.get(slot, {}).items():
                    done[p] = max(done.get(p, 0), off)
            lag.append(max(0, sum(ends.values()) - sum(done.values())))
        return lag

    def finish(self, plan: Mapping[str, Any]) -> Timeline | None:
        """None when nothing with a time was seen."""
        if self.first_ns is None or self.last_ns is None or self.anchor_ns is None:
            return None
        origin, anchor = self.first_ns, self.anchor_ns
        span = max(1.0, (self.last_ns - origin) / 1e9)
        bin_s = float(max(1, math.ceil(span / MAX_BINS)))
        nbins = max(1, math.ceil(span / bin_s))

        def bin_of(slot: int) -> int:
            start_s = (anchor + slot * FINE_NS - origin) / 1e9
            return min(nbins - 1, max(0, int(start_s // bin_s)))

        def rates(counts: Counter[int]) -> list[float]:
            out = [0.0] * nbins
            for slot, n in counts.items():
                out[bin_of(slot)] += n / bin_s
            return out

        tl = Timeline(origin_ns=origin, bin_s=bin_s, span_s=span)
        tl.bins = [i * bin_s for i in range(nbins)]
        tl.acks = rates(self.acks)
        tl.indeterminate = rates(self.info)
        tl.commits = {pod: rates(c) for pod, c in sorted(self.commits.items())}
        tl.lag = self._lag(bin_of, nbins)
        tl.bands = fault_bands(self.nemesis, origin, span)
        if not tl.bands:
            tl.bands = plan_bands(plan, span)
            tl.band_source = "plan.json"
        tl.topic_rates, tl.group_lag = self._topic_series(bin_of, anchor, nbins)
        tl.pod_events = [
            PodEvent(str(v.get("target", "?")), f, max(0.0, (t - origin) / 1e9),
                     ", ".join(f"{k} {v[k]}" for k in sorted(v) if k != "target"))
            for t, f, v in sorted(self.pod_ops, key=lambda o: o[0])
        ]
        return tl


    def _topic_series(self, bin_of: Any, anchor: int, nbins: int
                      ) -> tuple[dict[str, list[float]], list[float] | None]:
        """From the samples: each topic's rate between two samples (the growth of its end
        offsets over the time between them) in every bin the interval covers, and the lag
        each sample saw carried forward to the next."""
        if not self.topic_samples:
            return {}, None
        samples = sorted(self.topic_samples, key=lambda s: s[0])
        rates: dict[str, list[float]] = {}
        lag: list[float | None] = [None] * nbins
        previous: tuple[int, dict[str, Any]] | None = None
        for t_ns, value in samples:
            b = bin_of((t_ns - anchor) // FINE_NS)
            seen = _int(value.get("lag"))
            if seen is not None:
                lag[b] = float(seen)
            if previous is not None and t_ns > previous[0]:
                first = bin_of((previous[0] - anchor) // FINE_NS)
                for side in ("in", "out"):
                    now, before = value.get(side), previous[1].get(side)
                    if not isinstance(now, Mapping) or not isinstance(before, Mapping):
                        continue
                    for topic, end in now.items():
                        grown, was = _int(end), _int(before.get(topic))
                        if grown is None or was is None:
                            continue
                        rate = max(0, grown - was) / ((t_ns - previous[0]) / 1e9)
                        series = rates.setdefault(f"{side}: {topic}", [0.0] * nbins)
                        for i in range(first, b + 1):
                            series[i] = rate
            previous = (t_ns, value)
        carried: list[float] = []
        last = 0.0
        for value_ in lag:
            last = value_ if value_ is not None else last
            carried.append(last)
        has_lag = any(v is not None for v in lag)
        return dict(sorted(rates.items())), carried if has_lag else None


def build_timeline(
    ops: Iterable[Mapping[str, Any]],
    commits_by_pod: Mapping[str, Iterable[Mapping[str, Any]]],
    plan: Mapping[str, Any],
) -> Timeline | None:
    """The timeline of in-memory data (tests, small histories)."""
    acc = Accumulator()
    for op in ops:
        acc.add_op(op)
    for pod, events in commits_by_pod.items():
        for event in events:
            acc.add_commit(pod, event)
    return acc.finish(plan)
