"""Synthetic run folders for the report tests, written the way a run writes them
(results/README.md): two pods, a client at a steady rate, a nemesis that kills pod-1,
pauses pod-0 and kills a broker, commits in the pods' traces, and a results.json that is
valid, invalid (dedup-skip and lost-history with checker-style context) or unknown.

Also imported by fake_kchaos.py, so keep it free of pytest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

T0_NS = 1_760_000_000 * 10**9
SECONDS = 30
RATE = 20  # sends per second
PARTITIONS = 4
PODS = ("pod-0", "pod-1")
# (fault, target, start_s, end_s): the pause and the broker kill are visible as dips.
FAULTS = (
    ("kill", "pod-1", 8.0, 8.2),
    ("pause", "pod-0", 12.0, 17.0),
    ("kill-broker", "broker-2", 20.0, 24.0),
)
VERDICTS = {"valid": True, "invalid": False, "unknown": "unknown"}


@dataclass(frozen=True)
class Spec:
    verdict: str = "valid"  # valid / invalid / unknown
    profile: str = "all"
    seed: int = 7
    bugs: tuple[str, ...] = ()
    exit_code: int | None = None  # default: from the verdict
    started_at: datetime = field(default_factory=lambda: datetime(2025, 10, 9, 2, 0, tzinfo=UTC))
    missing: tuple[str, ...] = ()  # files not to write (relative names)
    corrupt: tuple[str, ...] = ()  # files to write as garbage


def _ns(t: float) -> int:
    return T0_NS + int(t * 1e9)


def _paused(pod: str, t: float) -> bool:
    return any(target == pod and s <= t < e + 2.0 for f, target, s, e in FAULTS
               if f in ("pause", "kill"))


def history() -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    offsets = [0] * PARTITIONS
    n = 0
    for i in range(SECONDS * RATE):
        t = i / RATE
        # Sends stall while the broker is down: throughput drops, the lag line shows it.
        if 20.0 <= t < 22.0 and i % 3:
            continue
        n += 1
        p = n % PARTITIONS
        value = {"event_id": f"e{n}", "account": f"acct-{n % 5}", "amount": n % 7 + 1}
        proc = f"client-{n % 2}"
        ops.append({"time_ns": _ns(t), "process": proc, "type": "invoke", "f": "send",
                    "value": value})
        kind = "info" if 20.0 <= t < 22.0 and n % 4 == 0 else "ok"
        done = dict(value)
        if kind == "ok":
            done.update(partition=p, offset=offsets[p])
            offsets[p] += 1
        ops.append({"time_ns": _ns(t + 0.004), "process": proc, "type": kind, "f": "send",
                    "value": done})
    for fault, target, start, end in FAULTS:
        for phase, t in (("start", start), ("end", end)):
            params = {"signal": "SIGKILL"} if fault == "kill" else {}
            ops.append({"time_ns": _ns(t), "process": "nemesis", "type": "info", "f": fault,
                        "value": {"target": target, "params": params, "phase": phase}})
    ops.sort(key=lambda op: op["time_ns"])
    for i, op in enumerate(ops):
        op["index"] = i
    return ops


def traces(ops: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each pod owns two partitions and commits what was acked twice a second."""
    acked = [(op["time_ns"], op["value"]) for op in ops if op["type"] == "ok"]
    out: dict[str, list[dict[str, Any]]] = {pod: [] for pod in PODS}
    for k, pod in enumerate(PODS):
        mine = [p for p in range(PARTITIONS) if p % len(PODS) == k]
        out[pod].append({"ts_ns": _ns(0), "pod": pod, "pid": 100 + k, "thread": "main",
                         "event": "client-state", "from": "CREATED", "to": "RUNNING"})
        for step in range(SECONDS * 2):
            t = step / 2
            if _paused(pod, t):
                continue
            upto = _ns(t)
            offsets = {}
            for p in mine:
                last = [v["offset"] for ts, v in acked if ts <= upto and v["partition"] == p]
                offsets[str(p)] = (max(last) + 1) if last else 0
            out[pod].append({"ts_ns": upto, "pod": pod, "pid": 100 + k,
                             "thread": "StreamThread-1", "event": "txn-commit",
                             "offsets": offsets, "records": len(offsets)})
    return out


def _trace_row(pod: str, t: float, event: str, task: str, **data: Any) -> dict[str, Any]:
    return {"pod": pod, "pid": 101, "ts_ns": _ns(t), "thread": "StreamThread-1",
            "event": event, "task": task, "data": {"task": task, **data}}


def checks(verdict: str) -> dict[str, dict[str, Any]]:
    names = ("dedup-skip", "lost-event", "duplicate-output", "lost-history", "wrong-balance",
             "stale-checkpoint", "stale-global", "unavailable")
    out: dict[str, dict[str, Any]] = {n: {"valid": True, "count": 0, "examples": []}
                                      for n in names}
    if verdict == "invalid":
        inputs = [{"partition": 1, "offset": o, "timestamp_ms": 1_760_000_009_000 + o,
                   "event_id": f"e{40 + o}", "account": "acct-3", "amount": 2}
                  for o in range(10, 15)]
        outputs = [{"partition": 1, "offset": o - 1, "event_id": f"e{40 + o}",
                    "account": "acct-3", "balance": 7 * o, "in_partition": 1, "in_offset": o}
                   for o in (10, 11, 13, 14)]
        trace = [_trace_row("pod-1", 8.3, "task-init", "0_1", checkpoint=9, digest="ab12"),
                 _trace_row("pod-1", 8.4, "task-running", "0_1"),
                 _trace_row("pod-1", 9.1, "dedup-skip", "0_1", event_id="e52", offset=12)]
        out["dedup-skip"] = {
            "valid": False, "count": 3,
            "examples": [{"event_id": "e52", "partition": 1, "offset": 12,
                          "timestamp_ms": 1_760_000_009_012,
                          "context": {"input": inputs, "output": outputs}, "traces": trace}],
        }
        out["lost-history"] = {
            "valid": False, "count": 1,
            "examples": [{"account": "acct-3", "partition": 1, "offset": 14, "balance": 2,
                          "expected_at_least": 61}],
        }
    if verdict == "unknown":
        out["stale-global"] = {"valid": "unknown", "count": 0, "examples": [],
                               "error": "Py4JJavaError: stage failed: executor lost"}
    return out


def results(verdict: str) -> dict[str, Any]:
    found = checks(verdict)
    return {
        "verdict": VERDICTS[verdict],
        "checks": found,
        "anomaly_counts": {n: c["count"] for n, c in found.items() if c["count"]},
        "figures": {"events": 587, "total_s": 6.2, "check_s": {"dedup-skip": 0.8}},
    }


def run_json(run_id: str, spec: Spec, run_dir: Path) -> dict[str, Any]:
    code = spec.exit_code
    if code is None:
        code = {"valid": 0, "invalid": 1, "unknown": 2}[spec.verdict]
    return {
        "run_id": run_id,
        "config": {"profile": spec.profile, "seed": spec.seed, "time_limit_s": SECONDS,
                   "pods": len(PODS), "threads": 2, "standbys": 0, "brokers": 3,
                   "rate": RATE, "bugs": list(spec.bugs), "guarantee": "exactly_once_v2"},
        "versions": {"kafka": "4.1.0", "python": "3.11.2", "kchaos": "c7797f0"},
        "timings": {"setup_s": 6.1, "load_s": 30.0, "drain_s": 4.2, "collect_s": 2.0,
                    "check_s": 6.2},
        "started_at": spec.started_at.isoformat(),
        "finished_at": (spec.started_at + timedelta(seconds=48.5)).isoformat(),
        "repro_command": f"kchaos repro {run_dir}",
        "exit_code": code,
    }


def plan_json(spec: Spec) -> dict[str, Any]:
    steps = [{"id": i, "fault": f, "target": target, "params": {},
              "trigger": {"at_s": s, "condition": None}, "applied_at_s": s,
              "healed_at_s": e, "status": "healed"}
             for i, (f, target, s, e) in enumerate(FAULTS)]
    return {"seed": spec.seed, "profile": spec.profile, "steps": steps}


def _write(path: Path, text: str, spec: Spec, name: str) -> None:
    if name in spec.missing:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"truncated": [1, 2' if name in spec.corrupt else text)


def make_run(results_dir: Path, name: str, spec: Spec) -> Path:
    run_dir = results_dir / name
    run_dir.mkdir(parents=True)
    ops = history()

    def put(rel: str, payload: Any) -> None:
        _write(run_dir / rel, json.dumps(payload, indent=1), spec, rel)

    def put_lines(rel: str, rows: list[dict[str, Any]]) -> None:
        _write(run_dir / rel, "".join(json.dumps(r) + "\n" for r in rows), spec, rel)

    put("run.json", run_json(name, spec, run_dir))
    put("plan.json", plan_json(spec))
    put_lines("history.jsonl", ops)
    for pod, events in traces(ops).items():
        put_lines(f"pods/{pod}/trace.jsonl", events)
        _write(run_dir / f"pods/{pod}/worker.log", f"{pod} started\n", spec,
               f"pods/{pod}/worker.log")
    _write(run_dir / "kafka/broker-1.log", "[KafkaServer id=1] started\n", spec,
           "kafka/broker-1.log")
    put("results.json", results(spec.verdict))
    return run_dir
