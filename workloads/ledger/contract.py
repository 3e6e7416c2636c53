"""The ledger workload contract: topic names, record schemas, store digests.

This is the only module the worker (system under test), the harness and the checker all
share. It holds data shapes and pure functions, nothing that talks to Kafka.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

DEFAULT_APPLICATION_ID = "ledger-app"
INPUT_TOPIC = "ledger-events"
OUTPUT_TOPIC = "ledger-output"
ACCOUNTS_TOPIC = "ledger-accounts"  # the global table: compacted, one partition

BALANCE_STORE = "balances"
DEDUP_STORE = "dedup"
STORES = (BALANCE_STORE, DEDUP_STORE)


def changelog_topic(application_id: str, store: str) -> str:
    """Kafka Streams names changelogs `<application.id>-<store>-changelog`."""
    return f"{application_id}-{store}-changelog"


def task_id(partition: int) -> str:
    """One sub-topology, so task `0_<p>` owns input partition p (Kafka Streams naming)."""
    return f"0_{partition}"


def task_partition(task: str) -> int:
    return int(task.split("_", 1)[1])


@dataclass(frozen=True)
class Event:
    """An input record; key = account."""

    event_id: str
    account: str
    amount: int

    def encode(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @staticmethod
    def decode(raw: bytes) -> Event:
        return Event(**json.loads(raw))


@dataclass(frozen=True)
class Output:
    """An output record; key = account. `partition`/`offset` locate the input record
    that produced it; `global_version` is the joined account version (None: no value)."""

    event_id: str
    account: str
    amount: int
    balance: int
    partition: int
    offset: int
    global_version: int | None

    def encode(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @staticmethod
    def decode(raw: bytes) -> Output:
        return Output(**json.loads(raw))


@dataclass(frozen=True)
class Account:
    """A global-table record; key = account."""

    account: str
    version: int
    tier: str

    def encode(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @staticmethod
    def decode(raw: bytes) -> Account:
        return Account(**json.loads(raw))


def account_name(i: int) -> str:
    return f"acct-{i:05d}"


@dataclass(frozen=True)
class Balance:
    """A balances-store value. Besides the running balance it carries the outputs of the
    account's events applied since its partition's last committed input offset, by input
    offset; the newest of them is the last event applied. Both ride in the one changelog
    record of the update, so a redelivery after a crash can tell, whatever else survived,
    whether its event is already in the balance, and re-emit that event's output
    identically (at-least-once; workloads/ledger/processor.py)."""

    balance: int = 0
    recent: dict[int, Output] = field(default_factory=dict)

    @property
    def offset(self) -> int:
        """The input offset of the last event applied (-1: none since the commit): an
        event is applied only past it, and its entry is never dropped by that update."""
        return max(self.recent, default=-1)

    def encode(self) -> str:
        recent = {str(o): asdict(out) for o, out in sorted(self.recent.items())}
        return json.dumps({"balance": self.balance, "recent": recent}, separators=(",", ":"))

    @staticmethod
    def decode(value: str | None) -> Balance:
        if value is None:
            return Balance()
        data = json.loads(value)
        recent = {int(o): Output(**out) for o, out in data["recent"].items()}
        return Balance(int(data["balance"]), recent)

    def applied(self, out: Output, balance: int, keep_from: int) -> Balance:
        """This balance after the event `out` reports: entries of `recent` below
        `keep_from` (the committed input offset: never redelivered) are dropped."""
        recent = {o: r for o, r in self.recent.items() if o >= keep_from}
        recent[out.offset] = out
        return Balance(balance, recent)


# Changelog records: key and value are UTF-8 strings.
#   balances: key = account,  value = Balance.encode() (JSON: balance, recent)
#   dedup:    key = event_id, value = the JSON of the Output the event produced (its input
#             position included), so an at-least-once redelivery can re-emit it
# A tombstone (value None) deletes the key.


def entry_hash(key: str, value: str) -> int:
    """CRC32 of `key \\0 value` in UTF-8. Spark computes the same with
    `crc32(concat(key, '\\u0000', value))`, so the checker can recompute digests."""
    return zlib.crc32(key.encode() + b"\x00" + value.encode())


def store_digest(entries: Iterable[tuple[str, str]]) -> str:
    """Order-independent digest of a store's contents: `<count>:<sum of entry hashes>`."""
    count = 0
    total = 0
    for key, value in entries:
        count += 1
        total += entry_hash(key, value)
    return f"{count}:{total}"
