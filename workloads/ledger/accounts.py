"""The accounts (global table) writer: publishes every account at setup, then re-publishes
seeded random accounts with a bumped version, so joins have versions to be checked against.
Like the event client it reports each write to a callback and records nothing itself."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

from kafka import KafkaProducer

from workloads.ledger.contract import ACCOUNTS_TOPIC, Account, account_name

TIERS = ("basic", "silver", "gold")
OnWrite = Callable[[dict[str, Any]], None]


class AccountsWriter:
    def __init__(
        self, bootstrap: str, accounts: int, seed: int, on_write: OnWrite | None = None,
        topic: str = ACCOUNTS_TOPIC,
    ) -> None:
        self.accounts = accounts
        self.topic = topic
        self.rng = random.Random(seed)
        self.on_write = on_write
        self.versions: dict[str, int] = {}
        self.producer = KafkaProducer(
            bootstrap_servers=bootstrap, client_id="ledger-accounts", acks="all",
            enable_idempotence=True,
        )

    def _publish(self, account: str, version: int) -> None:
        rec = Account(account, version, self.rng.choice(TIERS))
        # Taken before the send: a send that times out may still land (the producer
        # retries), and a version must never name two different records.
        self.versions[account] = version
        md = self.producer.send(self.topic, key=account.encode(), value=rec.encode()).get(30)
        self._written(rec, md.offset)

    def _written(self, rec: Account, offset: int) -> None:
        self.versions[rec.account] = rec.version
        if self.on_write is not None:
            self.on_write({"account": rec.account, "version": rec.version, "tier": rec.tier,
                           "offset": offset})

    def publish_all(self) -> None:
        """Every account, one version up (at setup: version 1); synchronous, so it is done
        before any event. Called again, the topic holds every account past that point."""
        # Sent together, then awaited in order: one round trip per account would make a
        # few thousand accounts take minutes on a loaded machine.
        sent = []
        for i in range(self.accounts):
            name = account_name(i)
            rec = Account(name, self.versions.get(name, 0) + 1, self.rng.choice(TIERS))
            future = self.producer.send(self.topic, key=name.encode(), value=rec.encode())
            sent.append((rec, future))
        self.producer.flush()
        for rec, future in sent:
            self._written(rec, future.get(30).offset)

    def bump_one(self) -> str:
        account = account_name(self.rng.randrange(self.accounts))
        self._publish(account, self.versions.get(account, 0) + 1)
        return account

    def run(self, period_s: float, stop: threading.Event) -> None:
        """Re-publish one bumped account every `period_s` until `stop`."""
        while not stop.wait(period_s):
            self.bump_one()

    def close(self) -> None:
        self.producer.flush()
        self.producer.close()
