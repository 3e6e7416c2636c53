"""The event client and the accounts writer against a real broker."""

from __future__ import annotations

import threading

import pytest
from worker_io import read_all

from workloads.ledger.accounts import AccountsWriter
from workloads.ledger.client import ClientConfig, EventClient
from workloads.ledger.contract import Account, Event

pytestmark = pytest.mark.kafka


def test_event_client_reports_every_send(kafka_bootstrap, topics_factory):
    t = topics_factory(2)
    ops: list[tuple[str, str, dict]] = []
    lock = threading.Lock()

    def on_op(typ: str, f: str, value: dict) -> None:
        with lock:
            ops.append((typ, f, value))

    client = EventClient(kafka_bootstrap, ClientConfig(seed=3, rate=2000, accounts=5,
                                                       dup_fraction=0.2), on_op, topic=t.input)
    assert client.run(count=200) == 200
    client.close()
    invokes = [v for typ, _f, v in ops if typ == "invoke"]
    oks = [v for typ, _f, v in ops if typ == "ok"]
    assert len(invokes) == 200 and len(oks) == 200
    assert all({"partition", "offset", "event_id", "account", "amount"} <= set(v) for v in oks)
    logged = [Event.decode(r.value) for r in read_all(kafka_bootstrap, t.input)]
    assert len(logged) == 200 and len({e.event_id for e in logged}) < 200  # re-sends


def test_accounts_writer_publishes_and_bumps(kafka_bootstrap, topics_factory):
    t = topics_factory(1)
    writes: list[dict] = []
    w = AccountsWriter(kafka_bootstrap, accounts=4, seed=1, on_write=writes.append,
                       topic=t.accounts)
    w.publish_all()
    bumped = w.bump_one()
    w.close()
    recs = [Account.decode(r.value) for r in read_all(kafka_bootstrap, t.accounts)]
    assert [a.version for a in recs[:4]] == [1, 1, 1, 1]
    assert recs[4].account == bumped and recs[4].version == 2 and len(writes) == 5
