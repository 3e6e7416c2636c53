"""The clock fault: a pod's wall clock jumps forward or back (`jump_s`), or runs fast or
slow (`rate`), until the heal steps it back to the true time.

The pods of a plan with a clock fault run with kchaos's clock shim preloaded
(harness/platforms/clock.py): it adds to CLOCK_REALTIME (gettimeofday, time) the
nanoseconds written in the pod's clock file, `<run>/pods/<pod>/clock`, which the nemesis
rewrites. A skew is the nemesis rewriting that offset every SKEW_STEP_S. Only the wall
clock moves, as under a real clock step: Kafka clients time polls, heartbeats, sessions,
transactions and commit intervals on it (Java's `System.currentTimeMillis`, Python's
`time.time`), while sleeps and the monotonic clock stay the kernel's.

The pods' traces are stamped with their own wall clock: a faked one lies. After the pods
stop, `settle_traces` puts every line of a faulted pod back on the harness's clock (the
pod's stamp kept as `pod_ts_ns`), so traces and nemesis ops still order together.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common.files import write_atomically
from faults.params import ClockParams, parse

if TYPE_CHECKING:
    from faults.context import FaultContext, Step


CLOCK_FILE = "clock"  # in the pod's folder, beside its control file
SKEW_STEP_S = 0.05  # a skew's offset is rewritten this often
ADOPT_NS = 200_000_000  # the shim reads the file every 50 ms: adopted within this (margin)
ORDER_SLACK_NS = 500_000_000  # a process's lines may be this much out of order in its file

_skews: dict[Path, threading.Event] = {}  # a running skew's stop signal, by clock file
_lock = threading.Lock()


def clock_path(ctx: FaultContext, pod: str) -> Path:
    return ctx.platform.control_path(pod).with_name(CLOCK_FILE)


def _write(path: Path, offset_ns: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, f"{offset_ns}\n")


def _stop_skew(path: Path) -> None:
    with _lock:
        stop = _skews.pop(path, None)
    if stop is not None:
        stop.set()


def _skew(path: Path, rate: float, start_ns: int, stop: threading.Event) -> None:
    while not stop.wait(SKEW_STEP_S):
        _write(path, round((time.time_ns() - start_ns) * (rate - 1.0)))


def apply_clock(ctx: FaultContext, step: Step) -> dict[str, Any]:
    args = parse(ClockParams, step.params, step.fault, f"step {step.id} ({step.fault})")
    path = clock_path(ctx, step.target)
    _stop_skew(path)
    written = time.time_ns()
    _write(path, round(args.jump_s * 1e9))
    if args.rate != 1.0:
        stop = threading.Event()
        with _lock:
            _skews[path] = stop
        threading.Thread(target=_skew, args=(path, args.rate, written, stop), daemon=True,
                         name=f"clock-skew-{step.target}").start()
    return {"written_ns": written, "jump_s": args.jump_s, "rate": args.rate}


def heal_clock(ctx: FaultContext, step: Step) -> dict[str, Any]:
    path = clock_path(ctx, step.target)
    _stop_skew(path)
    before = _offset(path)
    written = time.time_ns()
    _write(path, 0)
    return {"written_ns": written, "offset_s": round(before / 1e9, 3)}


def _offset(path: Path) -> int:
    try:
        return int(path.read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


# -- the pods' traces back on the harness's clock -------------------------------------------

@dataclass(frozen=True)
class Span:
    """A pod's clock off the true time: from `start_ns` (harness clock) to `end_ns`."""

    start_ns: int
    end_ns: int | None
    jump_ns: int
    rate: float

    def true_ns(self, stamp: int) -> int:
        """The harness time of a line the pod stamped `stamp` within the span."""
        if self.rate == 1.0:
            return stamp - self.jump_ns
        return self.start_ns + round((stamp - self.jump_ns - self.start_ns) / self.rate)

    def holds(self, true: int) -> bool:
        return self.start_ns <= true <= (self.end_ns or 2**63) + ADOPT_NS


def spans(ops: list[Mapping[str, Any]]) -> dict[str, list[Span]]:
    """Each pod's clock spans, from the nemesis's clock ops of history.jsonl."""
    opened: dict[str, Mapping[str, Any]] = {}
    found: dict[str, list[Span]] = {}
    for op in ops:
        value = op.get("value")
        if op.get("f") != "clock" or op.get("process") != "nemesis" or not isinstance(value, dict):
            continue
        details, target = value.get("details") or {}, str(value.get("target"))
        if value.get("phase") == "start" and "written_ns" in details:
            opened[target] = details
        elif value.get("phase") == "end" and target in opened:
            start = opened.pop(target)
            found.setdefault(target, []).append(_span(start, details.get("written_ns")))
    for target, start in opened.items():
        found.setdefault(target, []).append(_span(start, None))
    return found


def _span(start: Mapping[str, Any], end_ns: object) -> Span:
    return Span(int(start["written_ns"]), int(end_ns) if isinstance(end_ns, int) else None,
                round(float(start.get("jump_s") or 0.0) * 1e9), float(start.get("rate") or 1.0))


def true_times(stamps: list[int], pod_spans: list[Span]) -> list[int]:
    """The harness times of a trace file's stamps, in file order: each line the reading
    closest after the line before it among those its stamp allows (outside every span, or
    inside one), since a file's lines were written in time order."""
    out: list[int] = []
    for stamp in stamps:
        candidates = [t for t in (s.true_ns(stamp) for s in pod_spans) if _inside(t, pod_spans)]
        if not any(s.start_ns + ADOPT_NS < stamp <= (s.end_ns or 2**63) for s in pod_spans):
            candidates.append(stamp)  # as stamped: the pod's clock was true then
        if not candidates:
            candidates = [stamp]
        previous = out[-1] if out else None
        if previous is None:
            out.append(min(candidates, key=lambda t: abs(t - stamp)))
            continue
        onward = [t for t in candidates if t >= previous - ORDER_SLACK_NS] or candidates
        out.append(min(onward, key=lambda t: abs(t - previous)))
    return out


def _inside(true: int, pod_spans: list[Span]) -> bool:
    return any(s.holds(true) for s in pod_spans)


def settle_traces(run_dir: Path) -> int:
    """Rewrites the traces of the pods whose clock was faulted with harness times (the
    pod's own stamp kept as `pod_ts_ns`); returns how many lines moved. Idempotent."""
    from common.files import jsonl_objects

    history = run_dir / "history.jsonl"
    if not history.exists():
        return 0
    by_pod = spans([op for _, _, op in jsonl_objects(history) if isinstance(op, dict)])
    moved = 0
    for pod, pod_spans in by_pod.items():
        path = run_dir / "pods" / pod / "trace.jsonl"
        if not path.exists():
            continue
        lines = [(line.rstrip("\n"), obj, _stamp(obj)) for _, line, obj in jsonl_objects(path)]
        times = iter(true_times([stamp for _, _, stamp in lines if stamp is not None], pod_spans))
        out = []
        for line, obj, stamp in lines:
            if obj is None or stamp is None:
                out.append(line)  # a torn line stays as it was
                continue
            true = next(times)
            moved += true != obj["ts_ns"]
            out.append(json.dumps({**obj, "ts_ns": true, "pod_ts_ns": stamp},
                                  separators=(",", ":")))
        write_atomically(path, "\n".join(out) + "\n")
    return moved


def _stamp(obj: dict[str, Any] | None) -> int | None:
    """The pod's own stamp of a trace line (kept as `pod_ts_ns` once settled)."""
    if obj is None:
        return None
    stamp = obj.get("pod_ts_ns", obj.get("ts_ns"))
    return stamp if isinstance(stamp, int) else None
