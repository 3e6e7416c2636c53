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
    "stale-checkpoint": stale_checkpoint,
    "stale-global": stale_global,
    "unavailable": unavailable,
}


def event_tallies(meta: Meta) -> dict[str, Column]:
    """The per-event predicates whose counts the checks read (Frames.count_events), all
    counted in the one job that computes the events view (Frames.tally; built here: a
    Column needs a session)."""
    return {
        events.WITHOUT_OUTPUT: events.without_output(),
        events.DUPLICATED: events.duplicated(),
        balances.BELOW: balances.below(),
        balances.OTHERWISE_WRONG: balances.otherwise_wrong(),
        global_table.STALE: global_table.stale(global_table.bound_ms(meta)),
    }
