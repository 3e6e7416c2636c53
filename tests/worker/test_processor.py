"""The ledger processor (a pure function): dedup, balances, and idempotence under
at-least-once whatever subset of an uncommitted batch's writes a crash kept."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from workloads.ledger.contract import BALANCE_STORE, DEDUP_STORE, Balance, Event, Output
from workloads.ledger.processor import Write, process, remembered

Stores = dict[tuple[str, str], str]


def _runner(stores: Stores, at_least_once: bool = False, version: int = 7):
    def get(store: str, key: str) -> str | None:
        return stores.get((store, key))

    def run(ev: Event, offset: int, committed: int = 0):
        r = process(ev, 3, offset, get, lambda a: version, at_least_once=at_least_once,
                    committed_offset=committed)
        for w in r.writes:
            stores[(w.store, w.key)] = w.value
        return r

    return run


def test_processor_dedups_and_accumulates() -> None:
    stores: Stores = {}
    run = _runner(stores)
    o1 = run(Event("e1", "acct-1", 10), 0).output
    o2 = run(Event("e2", "acct-1", 5), 1).output
    assert o1 is not None and o2 is not None
    assert (o1.balance, o2.balance, o2.global_version, o2.partition, o2.offset) == (10, 15, 7, 3, 1)
    assert run(Event("e1", "acct-1", 10), 2).output is None  # re-sent id: skipped
    balance = Balance.decode(stores[(BALANCE_STORE, "acct-1")])
    # exactly-once redelivers nothing past a commit: only the newest output is kept
    assert (balance.balance, balance.offset, sorted(balance.recent)) == (15, 1, [1])
    assert remembered(stores[(DEDUP_STORE, "e1")]) == o1  # the entry remembers its output


def test_balance_keeps_outputs_from_the_committed_offset_on() -> None:
    stores: Stores = {}
    run = _runner(stores, at_least_once=True)
    run(Event("e1", "acct-1", 10), 4)
    run(Event("e2", "acct-1", 5), 6, committed=5)
    balance = Balance.decode(stores[(BALANCE_STORE, "acct-1")])
    assert sorted(balance.recent) == [6]  # offset 4 is committed: never redelivered
    assert Balance.decode(balance.encode()) == balance


def test_exactly_once_skips_every_seen_event() -> None:
    """Under exactly-once the output committed with the entry: a seen event is skipped
    even at its own position (a skip there flags a store gone wrong, KAFKA-20685)."""
    stores: Stores = {}
    run = _runner(stores)
    run(Event("e1", "acct-1", 10), 40)
    again = run(Event("e1", "acct-1", 10), 40)
    assert again.output is None and not again.reemitted and again.writes == ()


def test_at_least_once_redelivery_cases() -> None:
    """Each subset of (dedup record, balance record) a crash can keep, met by the same
    input record again: the amount is in the balance once, and the output is the first
    one, identical, wherever a record of it survived (with none, the event is new)."""
    ev = Event("e1", "acct-1", 10)
    first = _runner({}, at_least_once=True)(ev, 40).output
    assert first is not None
    dedup_entry = (DEDUP_STORE, "e1"), first.encode().decode()
    balance_entry = (BALANCE_STORE, "acct-1"), Balance(10, {40: first}).encode()
    for kept in ([], [dedup_entry], [balance_entry], [dedup_entry, balance_entry]):
        stores: Stores = dict(kept)
        again = _runner(stores, at_least_once=True, version=9)(ev, 40)
        assert again.output is not None and again.reemitted == bool(kept)
        assert Balance.decode(stores[(BALANCE_STORE, "acct-1")]).balance == 10
        if kept:
            assert again.output.encode() == first.encode()
            assert remembered(stores[(DEDUP_STORE, "e1")]) == first
        else:
            assert (again.output.balance, again.output.global_version) == (10, 9)


def test_at_least_once_skips_a_resend_and_an_entry_of_another_format() -> None:
    stores: Stores = {}
    run = _runner(stores, at_least_once=True)
    run(Event("e1", "acct-1", 10), 40)
    assert run(Event("e1", "acct-1", 10), 41).output is None  # re-sent id at 41
    assert run(Event("e1", "acct-1", 10), 41).output is None  # and its redelivery
    stores[(DEDUP_STORE, "e2")] = "3:12"  # not an output: a seen id, skipped
    assert run(Event("e2", "acct-1", 5), 42).output is None
    assert Balance.decode(stores[(BALANCE_STORE, "acct-1")]).balance == 10


# -- the property: any crash, any surviving prefixes, the ledger stays exact ------------


@dataclass
class _Ledger:
    """One input partition processed at-least-once: a commit makes everything before it
    durable; a crash keeps, per store and for the outputs, a prefix of the writes made
    since (a producer's batches to one partition, and a memtable flush, keep order)."""

    durable: Stores = field(default_factory=dict)
    pending: list[Write] = field(default_factory=list)
    outputs: list[Output] = field(default_factory=list)
    pending_outputs: list[Output] = field(default_factory=list)
    committed: int = 0

    def run(self, events: list[Event], until: int) -> None:
        stores = dict(self.durable)
        for w in self.pending:
            stores[(w.store, w.key)] = w.value
        get = lambda store, key: stores.get((store, key))  # noqa: E731
        for offset in range(self.committed, until):
            r = process(events[offset], 0, offset, get, lambda a: None, at_least_once=True,
                        committed_offset=self.committed)
            for w in r.writes:
                stores[(w.store, w.key)] = w.value
            self.pending.extend(r.writes)
            if r.output is not None:
                self.pending_outputs.append(r.output)

    def commit(self, offset: int) -> None:
        for w in self.pending:
            self.durable[(w.store, w.key)] = w.value
        self.outputs.extend(self.pending_outputs)
        self.pending, self.pending_outputs, self.committed = [], [], offset

    def crash(self, kept: dict[str, int], outputs_kept: int) -> None:
        for store in (DEDUP_STORE, BALANCE_STORE):
            writes = [w for w in self.pending if w.store == store]
            for w in writes[: kept[store]]:
                self.durable[(w.store, w.key)] = w.value
        self.outputs.extend(self.pending_outputs[:outputs_kept])
        self.pending, self.pending_outputs = [], []


_events = st.lists(
    st.tuples(st.integers(0, 5), st.sampled_from(["a", "b"]), st.integers(-20, 20)),
    min_size=1, max_size=30,
).map(lambda xs: [Event(f"e{i}", acct, amt) for i, acct, amt in xs])  # ids repeat: re-sends
_steps = st.lists(
    st.tuples(st.integers(1, 30), st.booleans(), st.integers(0, 30), st.integers(0, 30),
              st.integers(0, 30)),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(_events, _steps)
def test_at_least_once_is_exact_after_any_crashes(events: list[Event], steps) -> None:
    ledger = _Ledger()
    for until, crash, dedup_kept, balance_kept, outputs_kept in steps:
        until = ledger.committed + min(until, len(events) - ledger.committed)
        ledger.run(events, until)
        if crash:
            ledger.crash({DEDUP_STORE: dedup_kept, BALANCE_STORE: balance_kept}, outputs_kept)
        else:
            ledger.commit(until)
    ledger.run(events, len(events))
    ledger.commit(len(events))

    first: dict[str, int] = {}
    for offset, ev in enumerate(events):
        first.setdefault(ev.event_id, offset)
    by_event: dict[str, set[str]] = {}
    for out in ledger.outputs:
        by_event.setdefault(out.event_id, set()).add(out.encode().decode())
    assert set(by_event) == set(first)  # every event has an output, nothing else does
    expected: dict[str, int] = {}
    for event_id, offset in sorted(first.items(), key=lambda kv: kv[1]):
        ev = events[offset]
        expected[ev.account] = expected.get(ev.account, 0) + ev.amount
        assert len(by_event[event_id]) == 1  # duplicates only identical
        out = Output.decode(next(iter(by_event[event_id])).encode())
        assert (out.offset, out.balance) == (offset, expected[ev.account])
    for acct, total in expected.items():
        assert Balance.decode(ledger.durable[(BALANCE_STORE, acct)]).balance == total
