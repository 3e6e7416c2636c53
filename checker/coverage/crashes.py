"""The condition classes a crash makes (a pod's process SIGKILLed: `Facts.crashes`, the
kinds with Trait.CRASHES) or a move: a task restored then killed, a crash inside a
transaction or right after a commit, a flush of a transaction the crash aborted, a
standby promoted in the crashed or moved pod's place."""

from __future__ import annotations

from checker.coverage.condition import Hit, hit, last_before, stream_threads
from checker.coverage.facts import Crash, Facts
from common.fault_traits import Trait
from workloads.ledger.trace_contract import (
    ASSIGNED,
    COMMIT_EVENTS,
    MEMTABLE_FLUSH,
    RESTORE_END,
    TASK_INIT,
    TASK_RUNNING,
    TXN_ABORT,
    TXN_BEGIN,
    TXN_EVENTS,
)

# "Right after a commit": the kill came this soon after the process's last commit.
AFTER_COMMIT_NS = 250_000_000


def restored_then_killed(f: Facts) -> list[Hit]:
    """A task restored records from its changelog, became RUNNING, and its process was
    SIGKILLed while it still ran."""
    hits = []
    for c in f.crashes():
        events = f.by_pid.get(c.pid, [])
        for task, running in sorted(f.running_tasks(c.pid, c.time_ns).items()):
            init = last_before(events, running["ts_ns"], (TASK_INIT,), task=task)
            end = next((e for e in events
                        if e["event"] == RESTORE_END and e.get("task") == task
                        and (e.get("restored") or 0) > 0
                        and (init is None or e["ts_ns"] >= init["ts_ns"])
                        and e["ts_ns"] <= running["ts_ns"]), None)
            if end is not None:
                hits.append(hit(c.time_ns, end, running, c.op.line))
                break
    return hits


def crash_in_txn(f: Facts) -> list[Hit]:
    """SIGKILL while a stream thread of the process had a transaction open."""
    hits = []
    for c in f.crashes():
        events = f.by_pid.get(c.pid, [])
        for thread in sorted(stream_threads(events)):
            last = last_before(events, c.time_ns, TXN_EVENTS, thread=thread)
            if last is not None and last["event"] == TXN_BEGIN:
                hits.append(hit(c.time_ns, last, c.op.line))
                break
    return hits


def crash_after_commit(f: Facts) -> list[Hit]:
    """SIGKILL within AFTER_COMMIT_NS of a commit (transactional or at-least-once); only
    kills whose moment is known (truncate-global's is not)."""
    hits = []
    for c in f.crashes():
        if not c.exact:
            continue
        last = last_before(f.by_pid.get(c.pid, []), c.time_ns, COMMIT_EVENTS)
        if last is not None and c.time_ns - last["ts_ns"] <= AFTER_COMMIT_NS:
            hits.append(hit(c.time_ns, last, c.op.line))
    return hits


def flush_then_abort(f: Facts) -> list[Hit]:
    """A memtable flush started inside an open transaction, and that transaction was then
    aborted: its thread's next transaction event is `txn-abort`, or the process was
    SIGKILLed before the thread committed again."""
    hits = []
    crashes: dict[int, Crash] = {c.pid: c for c in f.crashes()}
    for flush in f.named(MEMTABLE_FLUSH):
        if not flush.get("in_txn"):
            continue
        pid, thread = flush["pid"], flush.get("thread")
        after = next((e for e in f.by_pid.get(pid, [])
                      if e["ts_ns"] > flush["ts_ns"] and e.get("thread") == thread
                      and e["event"] in TXN_EVENTS), None)
        if after is not None and after["event"] == TXN_ABORT:
            hits.append(hit(after["ts_ns"], flush, after))
        elif after is None and pid in crashes and crashes[pid].time_ns > flush["ts_ns"]:
            hits.append(hit(crashes[pid].time_ns, flush, crashes[pid].op.line))
    return hits


def standby_promoted(f: Facts) -> list[Hit]:
    """A process held a standby of a task when the task's active process was SIGKILLed or
    moved; the standby's process then made the task RUNNING."""
    hits = []
    losses = [(c.pid, c.time_ns, c.op.line) for c in f.crashes()]
    for start, _ in f.spans_with(Trait.MOVES):
        pid = f.pid_at(start.target, start.time_ns)
        if pid is not None:
            losses.append((pid, start.time_ns, start.line))
    for lost_pid, at, op in losses:
        for task, ran in f.running_tasks(lost_pid, at).items():
            for pid, events in f.by_pid.items():
                if pid == lost_pid:
                    continue
                mention = next((e for e in reversed(events) if e["ts_ns"] <= at
                                and e["event"] == ASSIGNED
                                and task in (e.get("active") or []) + (e.get("standby") or [])),
                               None)
                if mention is None or task not in (mention.get("standby") or []):
                    continue
                promoted = next((e for e in events if e["ts_ns"] > at
                                 and e["event"] == TASK_RUNNING and e.get("task") == task),
                                None)
                if promoted is not None:
                    hits.append(hit(promoted["ts_ns"], ran, op, mention, promoted))
    return hits
