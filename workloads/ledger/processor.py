"""The ledger processor: dedup, running balance, join with the global accounts table.

A pure function of (event, its input position, what the stores hold): it returns the output
record and the store writes, and the runtime applies both in one transaction (store +
changelog + output), which is what makes it exactly-once under EOS. Under exactly-once a
seen event is always skipped, and a skip at its first position is evidence of a store
holding what was never committed (KAFKA-20685: dedup-skip).

Under at-least-once there is no transaction: the dedup record, the balance record and the
output go to three partitions, and a crash keeps any subset of them (the producer's
batches, and the stores' background memtable flushes, are independent). The input is then
processed again from the committed offset, and the processor stays idempotent without
trusting the dedup store to agree with the balance:
- the balance value carries the outputs of the events applied to it since the committed
  offset, by input offset, the newest being the last applied (contract.Balance), in one
  record, so "is this record already in the balance" has one answer;
- a record already in the balance re-emits its output (from the balance, or from its
  dedup entry), identical, and restores a lost dedup entry;
- a record not yet in the balance whose dedup entry remembers this very position (the
  balance update was lost) is applied again and re-emits the remembered output;
- a dedup entry from another position is a re-send of the event id: skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from workloads.ledger.contract import BALANCE_STORE, DEDUP_STORE, Balance, Event, Output

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
    reemitted: bool = False  # output is the one its first processing produced


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
    at_least_once: bool = False,
    committed_offset: int = 0,
) -> Processed:
    """`committed_offset`: the input partition's last committed offset; outputs kept in
    the balance for an at-least-once redelivery below it are dropped."""
    seen = get(DEDUP_STORE, event.event_id)
    account = Balance.decode(get(BALANCE_STORE, event.account))
    if not at_least_once:
        if seen is not None:
            return Processed(None, ())
        # Nothing is redelivered past a transaction: keep this output only (its offset).
        return _apply(event, partition, offset, account, None, global_version, offset)
    before = remembered(seen) if seen is not None else None
    if before is not None and (before.partition, before.offset) != (partition, offset):
        before = None  # the entry is from another position: this record is a re-send
    if account.offset >= offset:  # this record was processed before the balance's update
        out = account.recent.get(offset) or before
        if out is None:
            return Processed(None, ())  # it was skipped then, as it is now
        lost_entry = seen is None
        return Processed(out, _dedup_write(event, out) if lost_entry else (), reemitted=True)
    if seen is not None and before is None:
        return Processed(None, ())
    return _apply(event, partition, offset, account, before, global_version, committed_offset)


def _apply(
    event: Event,
    partition: int,
    offset: int,
    account: Balance,
    before: Output | None,
    global_version: GlobalGet,
    committed_offset: int,
) -> Processed:
    """Add the amount; `before`: the output a dedup entry remembers for this very record,
    emitted again instead of a new one."""
    balance = account.balance + event.amount
    out = before or Output(
        event_id=event.event_id,
        account=event.account,
        amount=event.amount,
        balance=balance,
        partition=partition,
        offset=offset,
        global_version=global_version(event.account),
    )
    updated = account.applied(out, balance, committed_offset)
    writes = () if before is not None else _dedup_write(event, out)
    writes += (Write(BALANCE_STORE, event.account, updated.encode()),)
    return Processed(out, writes, reemitted=before is not None)


def _dedup_write(event: Event, out: Output) -> tuple[Write, ...]:
    return (Write(DEDUP_STORE, event.event_id, dedup_value(out)),)
