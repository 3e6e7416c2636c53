"""Knob combinations (issue 33): settings that disagree, or a setting met by the moment it
matters, which the broad profiles reach by drawing their settings from the seed
(faults/knobs.py). Each is a condition class of scope `knobs`: one run has one
configuration, so a nightly tells from all its runs which combinations its seeds met;
a run that did not reach one has not missed it.

A combination of settings alone is proven by the run's config (run.json); one that needs
a moment too, by the trace lines of that moment. Settings missing from an old run.json
read as the values runs had before the knobs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from checker.coverage.condition import ConditionClass, Hit
from checker.coverage.facts import Event, Facts
from common.fault_traits import Trait
from common.guarantees import AT_LEAST_ONCE
from workloads.ledger.trace_contract import ASSIGNED, CLEANER_DELETE, RESTORE_START

# What a run had before the knobs (harness/config/run.py): an old run.json lacks them.
BEFORE_KNOBS: dict[str, Any] = {
    "session_timeout_ms": 10_000, "transaction_timeout_ms": 10_000, "threads": 2,
    "standbys": 0, "pods": 2, "partitions": 4, "commit_interval_ms": 500,
    "restore_max_poll_records": 2000,
}
CONFIG_EVENT = "run-config"  # the evidence line of a combination of settings alone


def setting(f: Facts, name: str) -> Any:
    value = f.config.get(name)
    return BEFORE_KNOBS.get(name) if value is None else value


def _config_hit(f: Facts, *names: str) -> Hit:
    """A hit proven by settings: the run's first moment, the settings as its line."""
    line: Event = {"event": CONFIG_EVENT, **{n: setting(f, n) for n in names}}
    return Hit(f.origin_ns, (line,))


def _settings(predicate: Callable[[Facts], bool], *names: str) -> Callable[[Facts], list[Hit]]:
    def detect(f: Facts) -> list[Hit]:
        return [_config_hit(f, *names)] if predicate(f) else []
    return detect


def _session_over_txn(f: Facts) -> bool:
    return f.eos and setting(f, "session_timeout_ms") > setting(f, "transaction_timeout_ms")


def _txn_over_session(f: Facts) -> bool:
    return f.eos and setting(f, "transaction_timeout_ms") > setting(f, "session_timeout_ms")


def _pause_between_timeouts(f: Facts) -> list[Hit]:
    """Exactly-once, a pod paused or cut off longer than one of the two timeouts and
    shorter than the other: the window where they disagree (its open transaction is
    aborted while it is still a member, or it is evicted while its transaction stays
    open)."""
    if not f.eos:
        return []
    low, high = sorted((setting(f, "session_timeout_ms"), setting(f, "transaction_timeout_ms")))
    hits = []
    for start, end in f.spans_with(Trait.SILENCES):
        if end is not None and low * 1e6 < end.time_ns - start.time_ns < high * 1e6:
            hits.append(Hit(end.time_ns, (start.line, end.line)))
    return hits


def _alos_standbys(f: Facts) -> list[Hit]:
    """At-least-once with a standby assigned: a standby's store is built from a changelog
    that a non-transactional writer may leave ahead of the committed offsets."""
    if f.guarantee != AT_LEAST_ONCE:
        return []
    first = next((e for e in f.named(ASSIGNED) if e.get("standby")), None)
    return [] if first is None else [Hit(first["ts_ns"], (first,))]


def _poll_below_restore(f: Facts) -> list[Hit]:
    """A restoration of more changelog records than one poll of the restore consumer
    returns (`restore_max_poll_records`; Kafka Streams' max.poll.records): it spans polls,
    between which the thread processes and the group may rebalance."""
    size = setting(f, "restore_max_poll_records")
    hits = []
    for e in f.named(RESTORE_START):
        start, end = e.get("from_offset") or 0, e.get("end_offset")
        if isinstance(end, int) and end - start > size:
            hits.append(Hit(e["ts_ns"], (e,)))
    return hits


def _cleaner_in_run(f: Facts) -> list[Hit]:
    """The state-directory cleaner deleted a task directory during the run (Kafka
    Streams' 10-minute cleanup delay never lets it within a run)."""
    return [Hit(e["ts_ns"], (e,)) for e in f.named(CLEANER_DELETE)]


KNOB_CLASSES: tuple[ConditionClass, ...] = tuple(
    ConditionClass(name, title, detect, scope="knobs") for name, title, detect in (
        ("session-over-txn", "exactly-once, the session timeout longer than the transaction "
         "timeout", _settings(_session_over_txn, "session_timeout_ms", "transaction_timeout_ms")),
        ("txn-over-session", "exactly-once, the transaction timeout longer than the session "
         "timeout", _settings(_txn_over_session, "session_timeout_ms", "transaction_timeout_ms")),
        ("pause-between-timeouts", "exactly-once, a pod paused or cut off between the session "
         "and the transaction timeout", _pause_between_timeouts),
        ("alos-standbys", "at-least-once with a standby assigned", _alos_standbys),
        ("single-thread", "one stream thread per pod",
         _settings(lambda f: setting(f, "threads") == 1, "threads")),
        ("threads-over-tasks", "more stream threads than tasks (idle threads)",
         _settings(lambda f: setting(f, "threads") * setting(f, "pods")
                   > setting(f, "partitions"), "threads", "pods", "partitions")),
        ("standbys-unplaceable", "more standbys per task than other pods to hold them",
         _settings(lambda f: setting(f, "standbys") >= max(setting(f, "pods"), 1)
                   and setting(f, "standbys") > 0, "standbys", "pods")),
        ("commit-over-session", "a commit interval at least the session timeout (evicted "
         "between two commits)", _settings(
             lambda f: setting(f, "commit_interval_ms") >= setting(f, "session_timeout_ms"),
             "commit_interval_ms", "session_timeout_ms")),
        ("poll-below-restore", "a restoration longer than one poll of the restore consumer",
         _poll_below_restore),
        ("cleaner-in-run", "the state-directory cleaner deleted a task directory",
         _cleaner_in_run),
    )
)
