"""The ledger processor: dedup, running balance, join with the global accounts table.

A pure function of (event, its input position, what the stores hold): it returns the output
record and the store writes, and the runtime applies both in one transaction (store +
changelog + output), which is what makes it exactly-once under EOS.
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


def dedup_value(partition: int, offset: int) -> str:
    return f"{partition}:{offset}"


def process(
    event: Event, partition: int, offset: int, get: StoreGet, global_version: GlobalGet
) -> Processed:
    if get(DEDUP_STORE, event.event_id) is not None:
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
        Write(DEDUP_STORE, event.event_id, dedup_value(partition, offset)),
        Write(BALANCE_STORE, event.account, str(balance)),
    )
    return Processed(out, writes)
