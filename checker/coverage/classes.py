"""The condition classes: moments a crash-consistency bug in a stream processor needs
(issue 17). Each is a pure function of a run's `Facts` returning its hits: when the
moment happened and the stored lines (trace events, nemesis ops) that prove it.

A class says only that the moment was created, not that anything went wrong in it. Those
a crash makes are in crashes.py; a class finds its faults by what they do (their traits,
`Facts.spans_with`), never by a kind's name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from checker.coverage import crashes
from checker.coverage.condition import ConditionClass, Hit, hit, last_before, stream_threads
from checker.coverage.facts import Event, Facts
from common.fault_traits import Trait
from common.guarantees import AT_LEAST_ONCE, EXACTLY_ONCE_V2
from workloads.ledger.trace_contract import (
    ASSIGNED,
    CHECKPOINT_DELAY,
    CHECKPOINT_READ,
    CLEANER_DELETE,
    COMMIT,
    GLOBAL_RESTORE_START,
    RESTORE_END,
    RESTORE_START,
    REVOKED,
    TASK_INIT,
    TASK_RUNNING,
    TXN_BEGIN,
    TXN_COMMIT,
    TXN_EVENTS,
)

# "Soon after an update of the global topic": the restart began this soon after a publish.
GLOBAL_UPDATE_NS = 1_000_000_000
REBALANCE_EVENTS = (ASSIGNED, REVOKED)
DEFAULT_SESSION_MS = 10_000  # a run that recorded none: the worker's and the app's default


def _zombie(f: Facts) -> list[Hit]:
    """Paused (SIGSTOP) past its session: another process made one of its RUNNING tasks
    RUNNING during the pause and still ran it when the paused process resumed."""
    hits = []
    for start, end in f.spans_with(Trait.FREEZES):
        pid = f.pid_at(start.target, start.time_ns)
        if end is None or pid is None:
            continue
        if f.session_timeout_ms and end.time_ns - start.time_ns < f.session_timeout_ms * 1e6:
            continue
        mine = f.running_tasks(pid, start.time_ns)
        for e in f.named(TASK_RUNNING):
            if not start.time_ns < e["ts_ns"] <= end.time_ns or e["pid"] == pid:
                continue
            if e.get("task") in mine and f.running_since(e["pid"], e["task"], end.time_ns) is e:
                hits.append(hit(end.time_ns, mine[e["task"]], start.line, e, end.line))
                break
    return hits


def _task_returns(f: Facts) -> list[Hit]:
    """A task RUNNING in a process, then RUNNING in another one, then RUNNING again in the
    first (same pid: the process lived through it)."""
    hits = []
    last_here: dict[tuple[str, int], Event] = {}  # (task, pid) -> its last task-running
    last_any: dict[str, Event] = {}
    for e in f.named(TASK_RUNNING):
        task, pid = str(e.get("task")), e["pid"]
        before, elsewhere = last_here.get((task, pid)), last_any.get(task)
        if before is not None and elsewhere is not None and elsewhere["pid"] != pid:
            hits.append(hit(e["ts_ns"], before, elsewhere, e))
        last_here[(task, pid)] = e
        last_any[task] = e
    return hits


def _moves(f: Facts, keep_volume: bool) -> Iterator[tuple[Event, list[Event]]]:
    """Each move with (or without) its volume and the trace of the pod's next process."""
    for start, _ in f.spans_with(Trait.MOVES):
        if bool(start.params.get("keep_volume", True)) != keep_volume:
            continue
        old = f.pid_at(start.target, start.time_ns)
        nxt = next((e["pid"] for e in f.events if e["ts_ns"] > start.time_ns
                    and e.get("pod") == start.target and e["pid"] != old), None)
        if nxt is not None:
            yield start.line, f.by_pid[nxt]


def _move_full_restore(f: Facts) -> list[Hit]:
    """Moved without its volume: the pod's next process restored a task from the beginning
    of a non-empty changelog."""
    hits = []
    for op, events in _moves(f, keep_volume=False):
        empty = {e.get("task") for e in events if e["event"] == TASK_INIT
                 and e.get("checkpoint") is None and e.get("task") != "global"}
        end = next((e for e in events if e["event"] == RESTORE_END
                    and e.get("task") in empty and (e.get("restored") or 0) > 0), None)
        if end is not None:
            hits.append(hit(end["ts_ns"], op, end))
    return hits


def _move_checkpoint_reuse(f: Facts) -> list[Hit]:
    """Moved with its volume: the pod's next process initialised a task from a checkpoint
    its previous process left on that volume."""
    hits = []
    for op, events in _moves(f, keep_volume=True):
        init = next((e for e in events if e["event"] == TASK_INIT
                     and e.get("checkpoint") is not None and e.get("task") != "global"), None)
        if init is not None:
            hits.append(hit(init["ts_ns"], op, init))
    return hits


def _restart_after_global_update(f: Facts) -> list[Hit]:
    """A global thread (re)started its restoration within GLOBAL_UPDATE_NS of a publish on
    the accounts topic and had records to catch up on."""
    hits = []
    for e in f.named(GLOBAL_RESTORE_START):
        if (e.get("end_offset") or 0) <= (e.get("from_offset") or 0):
            continue
        last = max((t for t in f.publishes if t <= e["ts_ns"]), default=None)
        if last is not None and e["ts_ns"] - last <= GLOBAL_UPDATE_NS:
            hits.append(hit(e["ts_ns"], e))
    return hits


def _rebalance_during_checkpoint(f: Facts) -> list[Hit]:
    """A rebalance (an assignment or revocation in any process) while a task's checkpoint
    write was held back by the checkpoint-delay fault (the global store's checkpoints
    live outside the task directories a rebalance hands over: not counted)."""
    hits = []
    for delay in f.named(CHECKPOINT_DELAY):
        if delay.get("task") == "global":
            continue
        until = delay["ts_ns"] + int(delay.get("delay_ms") or 0) * 1_000_000
        seen = next((e for e in f.named(*REBALANCE_EVENTS)
                     if delay["ts_ns"] < e["ts_ns"] < until), None)
        if seen is not None:
            hits.append(hit(seen["ts_ns"], delay, seen))
    return hits


def _power_loss_unsynced(f: Facts) -> list[Hit]:
    """Power lost while the pod's volume held writes it had not made durable: the fault
    filesystem rolled back file data or names (a store's files, a checkpoint), as its op's
    details say."""
    hits = []
    for start, _ in f.spans_with(Trait.DROPS_UNSYNCED):
        details = start.line.get("value", {}).get("details") or {}
        undone = details.get("undone") or {}
        if undone.get("names_undone") or undone.get("files_rolled_back"):
            hits.append(hit(start.time_ns, start.line))
    return hits


def _cut_off_in_commit_or_rebalance(f: Facts) -> list[Hit]:
    """A pod cut off from the network (`partition`) in a commit: one of its stream threads
    had a transaction open, or (at-least-once) it had been committing and the cut outlasted
    the commit interval, so a commit fell due while it reached nobody; or in a rebalance:
    an assignment or revocation in any process during the cut."""
    hits = []
    last_ns = f.events[-1]["ts_ns"] if f.events else 0
    interval_ns = int(f.config.get("commit_interval_ms") or 0) * 1_000_000
    for start, end in f.spans_with(Trait.CUTS_OFF):
        pid = f.pid_at(start.target, start.time_ns)
        if pid is None:  # a broker, or a pod that had not traced yet
            continue
        until = end.time_ns if end is not None else last_ns
        seen = next((e for e in f.named(*REBALANCE_EVENTS)
                     if start.time_ns < e["ts_ns"] < until), None)
        if seen is not None:
            hits.append(hit(seen["ts_ns"], start.line, seen))
            continue
        events = f.by_pid.get(pid, [])
        for thread in sorted(stream_threads(events)):
            last = last_before(events, start.time_ns, (*TXN_EVENTS, COMMIT), thread=thread)
            in_txn = last is not None and last["event"] == TXN_BEGIN
            due = (last is not None and last["event"] == COMMIT and interval_ns > 0
                   and until - start.time_ns > interval_ns)
            if in_txn or due:
                hits.append(hit(start.time_ns, last, start.line))
                break
    return hits


def _clock_jump_in_txn_or_session(f: Facts) -> list[Hit]:
    """A pod's clock stepped (a clock fault's jump, or its heal stepping it back) while a
    stream thread of its process had a transaction open (what the worker traces), or by
    more than the session timeout while the process was a member of the group (it ran a
    task, or had been assigned some)."""
    hits = []
    session_ns = (f.session_timeout_ms or DEFAULT_SESSION_MS) * 1_000_000
    for op in f.ops_with(Trait.STEPS_CLOCK):
        details = op.line.get("value", {}).get("details") or {}
        step_ns = abs(float(details.get("jump_s" if op.phase == "start" else "offset_s") or 0))
        pid = f.pid_at(op.target, op.time_ns)
        if pid is None or step_ns == 0:
            continue
        events = f.by_pid.get(pid, [])
        open_txn = next((last for thread in sorted(stream_threads(events))
                         if (last := last_before(events, op.time_ns, TXN_EVENTS, thread=thread))
                         is not None and last["event"] == TXN_BEGIN), None)
        # A member: it ran a task then (what Kafka Streams traces), or had been assigned.
        running = f.running_tasks(pid, op.time_ns)
        member = (min(running.values(), key=lambda e: e["ts_ns"]) if running
                  else last_before(events, op.time_ns, (ASSIGNED,)))
        if open_txn is not None:
            hits.append(hit(op.time_ns, open_txn, op.line))
        elif step_ns * 1e9 > session_ns and member is not None:
            hits.append(hit(op.time_ns, member, op.line))
    return hits


def _checkpoint_read_then_cleaned(f: Facts) -> list[Hit]:
    """A task read offsets from its `.checkpoint`, the state-directory cleaner of the same
    process deleted the task's directory, and the task then restored (or ran) from those
    offsets without reading the checkpoint again (KAFKA-8187's family: the read comes
    before the lock, the deletion in between). A read the deletion makes moot (the next
    read finds no file, as when the lock comes first) is no hit, nor is one for another
    purpose that no restore follows. The lines: the read, the deletion, the use."""
    hits = []
    for _pid, events in sorted(f.by_pid.items()):
        read: dict[str, Event] = {}  # task -> its last read with offsets
        deleted: dict[str, Event] = {}  # task -> the deletion after that read
        for e in events:
            task = str(e.get("task"))
            if e["event"] == CHECKPOINT_READ:
                read.pop(task, None)
                deleted.pop(task, None)
                if e.get("offsets"):
                    read[task] = e
            elif e["event"] == CLEANER_DELETE and task in read:
                deleted[task] = e
            elif e["event"] in (RESTORE_START, TASK_RUNNING) and task in read:
                before, gone = read.pop(task), deleted.pop(task, None)
                if gone is not None and (e["event"] == TASK_RUNNING
                                         or (e.get("from_offset") or 0) > 0):
                    hits.append(hit(gone["ts_ns"], before, gone, e))
    return sorted(hits, key=lambda h: h.time_ns)


def _guarantee(name: str, commit: str) -> Callable[[Facts], list[Hit]]:
    def detect(f: Facts) -> list[Hit]:
        if f.guarantee != name:
            return []
        first = next(f.named(commit), None)
        return [] if first is None else [hit(first["ts_ns"], first)]
    return detect


CLASSES: tuple[ConditionClass, ...] = (
    ConditionClass("zombie", "paused past its session, resumed while its tasks run elsewhere",
                   _zombie),
    ConditionClass("task-returns", "a task leaves a live process and returns to it",
                   _task_returns),
    ConditionClass("restored-then-killed",
                   "a task restored from a non-empty changelog, killed while RUNNING",
                   crashes.restored_then_killed),
    ConditionClass("crash-in-txn", "a crash inside an open transaction", crashes.crash_in_txn),
    ConditionClass("crash-after-commit", "a crash right after a commit",
                   crashes.crash_after_commit),
    ConditionClass("flush-then-abort",
                   "a memtable flush persisted writes of a transaction later aborted",
                   crashes.flush_then_abort),
    ConditionClass("standby-promoted",
                   "a standby promoted to active after its active's pod crashed or moved",
                   crashes.standby_promoted),
    ConditionClass("move-full-restore", "a move without the volume: full restore",
                   _move_full_restore),
    ConditionClass("move-checkpoint-reuse", "a move with the volume: checkpoint reuse",
                   _move_checkpoint_reuse),
    ConditionClass("restart-after-global-update",
                   "a pod or global thread restarted soon after a global-topic update",
                   _restart_after_global_update),
    ConditionClass("rebalance-during-checkpoint",
                   "a rebalance while a checkpoint write is in flight",
                   _rebalance_during_checkpoint),
    ConditionClass("power-loss-unsynced",
                   "power lost with un-fsynced writes in a store or a checkpoint",
                   _power_loss_unsynced),
    ConditionClass("cut-off-in-commit-or-rebalance",
                   "a pod cut off from the network with a commit due or in a rebalance",
                   _cut_off_in_commit_or_rebalance),
    ConditionClass("clock-jump-in-txn-or-session",
                   "a pod's clock jumped inside a transaction or past its session timeout",
                   _clock_jump_in_txn_or_session),
    ConditionClass("checkpoint-read-then-cleaned",
                   "a task read its checkpoint, then the cleaner deleted its directory "
                   "before the task used the offsets", _checkpoint_read_then_cleaned),
    ConditionClass("exactly-once", f"the run used exactly-once ({EXACTLY_ONCE_V2})",
                   _guarantee(EXACTLY_ONCE_V2, TXN_COMMIT), scope="nightly"),
    ConditionClass("at-least-once", "the run used at-least-once",
                   _guarantee(AT_LEAST_ONCE, COMMIT), scope="nightly"),
)
