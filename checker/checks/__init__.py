"""The anomaly checks, in report order (docs/architecture.md: adding a check).

Each is a pure function `(spark, frames, meta) -> CheckResult` over the collected history.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column, SparkSession

from checker.checks import balances, events, global_table
from checker.checks.availability import unavailable
from checker.checks.balances import lost_history, wrong_balance
from checker.checks.checkpoints import stale_checkpoint
from checker.checks.events import dedup_skip, duplicate_output, lost_event
from checker.checks.global_table import stale_global
from checker.checks.oracle import oracle
from checker.checks.windowed import window_lost_history, window_wrong
from checker.frames import Frames
from checker.meta import Meta
from checker.model import CheckResult

Check = Callable[[SparkSession, Frames, Meta], CheckResult]

CHECKS: dict[str, Check] = {
    "dedup-skip": dedup_skip,
    "lost-event": lost_event,
    "duplicate-output": duplicate_output,
    "lost-history": lost_history,
    "wrong-balance": wrong_balance,
    "window-lost-history": window_lost_history,
    "window-wrong": window_wrong,
    "stale-checkpoint": stale_checkpoint,
    "stale-global": stale_global,
    "unavailable": unavailable,
}
# An app's run knows nothing of the ledger: the oracle judges its records; the state
# directories and the drain are judged as for any Kafka Streams app.
APP_CHECKS: dict[str, Check] = {
    "oracle": oracle,
    "stale-checkpoint": stale_checkpoint,
    "unavailable": unavailable,
}


def checks_for(meta: Meta) -> dict[str, Check]:
    """The checks of a run: its workload's, and the oracle wherever a reference runs."""
    if meta.raw.get("workload") == "app":
        return APP_CHECKS
    if meta.raw.get("oracle"):
        return {**CHECKS, "oracle": oracle}
    return CHECKS


def principal_check(meta: Meta) -> str | None:
    """The check that carries a run's meaning, when one does: an app's is the oracle (its
    other checks judge only the state directories and availability). When it is not
    applicable, the verdict says the run was not judged (results.json's `not_judged`)."""
    return "oracle" if meta.raw.get("workload") == "app" else None


def event_tallies(meta: Meta, frames: Frames) -> dict[str, Column]:
    """The per-event predicates whose counts the checks read (Frames.count_events), all
    counted in the one job that computes the events view (Frames.tally; built here: a
    Column needs a session)."""
    return {
        events.WITHOUT_OUTPUT: events.without_output(),
        events.DUPLICATED: events.duplicated(),
        balances.BELOW: balances.below(),
        balances.OTHERWISE_WRONG: balances.otherwise_wrong(),
        global_table.STALE: global_table.stale(global_table.bound_ms(meta),
                                               global_table.nemesis_windows(frames, meta)),
    }
