"""A run's stored evidence as plain data for the condition classes: every pod's trace
events, the nemesis ops of `history.jsonl`, the guarantee. Questions the classes share
(which process a pod was at a moment, which tasks a process ran, which processes
crashed) are answered here once.

Trace lines and history ops carry wall-clock nanoseconds from the same machine, so they
order together.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.fault_traits import BEFORE_PLANS_CARRIED_TRAITS, PlanTraits, Trait, load_plan_traits
from common.guarantees import EXACTLY_ONCE_V2
from workloads.ledger.trace_contract import ASSIGNED, REVOKED, TASK_INIT, TASK_RUNNING

Event = dict[str, Any]



@dataclass(frozen=True)
class FaultOp:
    """One nemesis op: a fault starting or ending on a target."""

    time_ns: int
    fault: str
    target: str
    phase: str  # start | end
    params: dict[str, Any]
    line: Event  # the op as stored


@dataclass(frozen=True)
class Crash:
    pod: str
    pid: int
    time_ns: int
    op: FaultOp
    exact: bool  # time_ns is the kill's (Trait.CRASH_AT_OP), not the killed process's last line


@dataclass
class Facts:
    events: list[Event]  # every trace event, in time order
    faults: list[FaultOp]  # nemesis ops, in time order
    publishes: list[int] = field(default_factory=list)  # accounts-topic writes (time_ns)
    guarantee: str = ""
    session_timeout_ms: int | None = None
    config: dict[str, Any] = field(default_factory=dict)  # run.json's settings (knobs)
    # What each fault kind of the run does (plan.json's traits): the classes ask by trait.
    traits: PlanTraits = BEFORE_PLANS_CARRIED_TRAITS
    by_pid: dict[int, list[Event]] = field(default_factory=dict)
    pod_of: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.events.sort(key=lambda e: e["ts_ns"])
        self.faults.sort(key=lambda f: f.time_ns)
        self.publishes.sort()
        by_pid: dict[int, list[Event]] = defaultdict(list)
        for e in self.events:
            by_pid[e["pid"]].append(e)
            self.pod_of.setdefault(e["pid"], str(e.get("pod")))
        self.by_pid = dict(by_pid)

    @property
    def eos(self) -> bool:
        return self.guarantee == EXACTLY_ONCE_V2

    @property
    def origin_ns(self) -> int:
        times = [self.events[0]["ts_ns"]] if self.events else []
        times += [self.faults[0].time_ns] if self.faults else []
        return min(times, default=0)

    def named(self, *names: str) -> Iterator[Event]:
        return (e for e in self.events if e["event"] in names)

    def pid_at(self, pod: str, time_ns: int) -> int | None:
        """The pod's process at `time_ns`: the one of its last trace line before then."""
        pid = None
        for e in self.events:
            if e["ts_ns"] > time_ns:
                break
            if e.get("pod") == pod:
                pid = e["pid"]
        return pid

    def running_since(self, pid: int, task: str, time_ns: int) -> Event | None:
        """The line by which `pid` still ran `task` as active at `time_ns`, if it did: its
        `task-running`, or the `assigned` that resumed it (a task revoked and assigned
        back to its thread resumes RUNNING without a new `task-running`)."""
        since: Event | None = None
        suspended_by: object = None  # the thread holding it suspended
        for e in self.by_pid.get(pid, ()):
            if e["ts_ns"] > time_ns:
                break
            name = e["event"]
            if name == TASK_RUNNING and e.get("task") == task:
                since, suspended_by = e, None
            elif name == REVOKED and task in (e.get("tasks") or ()):
                suspended_by = e.get("thread") if since is not None else None
                since = None
            elif (name == ASSIGNED and suspended_by is not None
                  and e.get("thread") == suspended_by and task in (e.get("active") or ())):
                since, suspended_by = e, None
            elif name == TASK_INIT and e.get("task") == task:
                since, suspended_by = None, None  # a new task object: restoration again
        return since

    def running_tasks(self, pid: int, time_ns: int) -> dict[str, Event]:
        tasks = {str(e.get("task")) for e in self.by_pid.get(pid, ())
                 if e["event"] == TASK_RUNNING and e["ts_ns"] <= time_ns}
        found = {t: self.running_since(pid, t, time_ns) for t in tasks}
        return {t: e for t, e in found.items() if e is not None}

    def crashes(self) -> list[Crash]:
        """Every SIGKILL the nemesis dealt to a pod (Trait.CRASHES) with a process that had
        traced. An op is recorded once its fault is applied: after most, the process is
        dead (its restart is the heal); a kind that is back before its op
        (Trait.BACK_BEFORE_OP) has already restarted the pod, whose new process may have
        traced its start, so the killed one is the last that ran a task, and its last line
        stands for the moment it died."""
        found = []
        for op in self.faults:
            if op.phase != "start" or not self.traits.has(op.fault, Trait.CRASHES):
                continue
            if self.traits.has(op.fault, Trait.BACK_BEFORE_OP):
                pid = self._last_pid_running(op.target, op.time_ns)
                at = self.by_pid[pid][-1]["ts_ns"] if pid is not None else 0
            else:
                pid, at = self.pid_at(op.target, op.time_ns), op.time_ns
            if pid is not None:
                found.append(Crash(op.target, pid, at, op,
                                   exact=self.traits.has(op.fault, Trait.CRASH_AT_OP)))
        return found

    def _last_pid_running(self, pod: str, time_ns: int) -> int | None:
        pid = None
        for e in self.named(TASK_RUNNING):
            if e["ts_ns"] > time_ns:
                break
            if e.get("pod") == pod:
                pid = e["pid"]
        return pid

    def ops_with(self, trait: Trait) -> Iterator[FaultOp]:
        """The nemesis ops (start and end) of the kinds with `trait`, in time order."""
        return (op for op in self.faults if self.traits.has(op.fault, trait))

    def spans_with(self, trait: Trait) -> list[tuple[FaultOp, FaultOp | None]]:
        """`spans` of every kind with `trait`."""
        return [pair for kind in sorted(self.traits.kinds_with(trait))
                for pair in self.spans(kind)]

    def spans(self, fault: str) -> list[tuple[FaultOp, FaultOp | None]]:
        """(start, end) op pairs of a fault kind per target; end None if it never healed."""
        open_: dict[str, FaultOp] = {}
        pairs: list[tuple[FaultOp, FaultOp | None]] = []
        for op in self.faults:
            if op.fault != fault:
                continue
            if op.phase == "start":
                open_[op.target] = op
            elif op.phase == "end" and op.target in open_:
                pairs.append((open_.pop(op.target), op))
        pairs.extend((op, None) for op in open_.values())
        return pairs


def _json_lines(path: Path) -> Iterator[Event]:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue  # a torn last line of a SIGKILLed writer
                if isinstance(obj, dict):
                    yield obj
    except FileNotFoundError:
        return


def trace_events(lines: Iterable[Event]) -> list[Event]:
    """Trace lines with the fields every class relies on (others are dropped)."""
    return [e for e in lines
            if isinstance(e.get("ts_ns"), int) and isinstance(e.get("pid"), int)
            and isinstance(e.get("event"), str)]


def fault_ops(ops: Iterable[Event]) -> list[FaultOp]:
    found = []
    for op in ops:
        value = op.get("value")
        if op.get("process") != "nemesis" or not isinstance(value, dict):
            continue
        if not isinstance(op.get("time_ns"), int) or value.get("phase") not in ("start", "end"):
            continue
        found.append(FaultOp(op["time_ns"], str(op.get("f")), str(value.get("target")),
                             str(value["phase"]), dict(value.get("params") or {}), op))
    return found


def publish_times(ops: Iterable[Event]) -> list[int]:
    return [op["time_ns"] for op in ops if op.get("process") == "accounts"
            and op.get("f") == "publish" and isinstance(op.get("time_ns"), int)]


def _run_setting(run_dir: Path, key: str) -> Any:
    for name in ("history/meta.json", "run.json"):
        try:
            doc = json.loads((run_dir / name).read_text())
        except (OSError, ValueError):
            continue
        for where in (doc, doc.get("config") or {}):
            if isinstance(where, dict) and where.get(key) is not None:
                return where[key]
    return None


def _run_config(run_dir: Path) -> dict[str, Any]:
    try:
        config = json.loads((run_dir / "run.json").read_text()).get("config")
    except (OSError, ValueError, AttributeError):
        return {}
    return config if isinstance(config, dict) else {}


def load_facts(run_dir: Path) -> Facts:
    """The evidence of one run folder (results/README.md): pods/*/trace.jsonl,
    history.jsonl, the guarantee from history/meta.json or run.json, the run's settings
    from run.json, its fault kinds' traits from plan.json."""
    run_dir = Path(run_dir)
    events = trace_events(e for path in sorted(run_dir.glob("pods/*/trace.jsonl"))
                          for e in _json_lines(path))
    timeout = _run_setting(run_dir, "session_timeout_ms")
    ops = list(_json_lines(run_dir / "history.jsonl"))
    return Facts(
        events=events,
        faults=fault_ops(ops),
        publishes=publish_times(ops),
        guarantee=str(_run_setting(run_dir, "guarantee") or ""),
        session_timeout_ms=int(timeout) if isinstance(timeout, int | float) else None,
        config=_run_config(run_dir),
        traits=load_plan_traits(run_dir),
    )
