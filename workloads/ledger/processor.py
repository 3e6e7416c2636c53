"""The ledger processor: dedup, running balance, join with the global accounts table.

A pure function of (event, its input position, what the stores hold): it returns the output
record and the store writes, and the runtime applies both in one transaction (store +
changelog + output), which is what makes it exactly-once under EOS.

The dedup entry remembers the output its event produced (the output record's JSON), so
that under at-least-once the processor is idempotent the standard way: without a
transaction the dedup store's changelog records may reach the broker while the output
does not (a crash between them); the input record is then processed again at the same
position, and must produce its output again, not be skipped. A duplicate at the position
its entry remembers re-emits that output, identical (`reemit_at_same_position`); anything
else the store has seen is skipped. Under exactly-once the output and the entry commit
together, so a seen event is always skipped, and a skip at its first position is evidence
of a store holding what was never committed (KAFKA-20685: dedup-skip).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from workloads.ledger.contract import BALANCE_STORE, DEDUP_STORE, Event, Output

# (store, key) -> value or None
StoreGet = Callable[[str, str], "str | None"]
# account -> joined global version or None
GlobalGet = Callable[[str], "int | None"]


@dataclass(frozen=True)
class Write:
    store: str
    key: str
    value: str


@dataclass(frozen=True)
class Processed:
    output: Output | None  # None: skipped as a duplicate
    writes: tuple[Write, ...]
    reemitted: bool = False  # output is the one the dedup entry remembered; no writes


def dedup_value(out: Output) -> str:
    """What a dedup entry holds: the output its event produced."""
    return out.encode().decode()


def remembered(value: str) -> Output | None:
    """The output a dedup entry remembers; None for an entry in another format."""
    try:
        return Output.decode(value.encode())
    except (ValueError, TypeError):
        return None


def process(
    event: Event,
    partition: int,
    offset: int,
    get: StoreGet,
    global_version: GlobalGet,
    reemit_at_same_position: bool = False,
) -> Processed:
    seen = get(DEDUP_STORE, event.event_id)
    if seen is not None:
        before = remembered(seen) if reemit_at_same_position else None
        if before is not None and (before.partition, before.offset) == (partition, offset):
            return Processed(before, (), reemitted=True)
        return Processed(None, ())
    balance = int(get(BALANCE_STORE, event.account) or 0) + event.amount
    out = Output(
        event_id=event.event_id,
        account=event.account,
        amount=event.amount,
        balance=balance,
        partition=partition,
        offset=offset,
        global_version=global_version(event.account),
    )
    writes = (
        Write(DEDUP_STORE, event.event_id, dedup_value(out)),
        Write(BALANCE_STORE, event.account, str(balance)),
    )
    return Processed(out, writes)
