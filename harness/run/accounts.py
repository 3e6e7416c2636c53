"""The accounts (global) topic as the harness writes it: every account at setup, then
again (a new version) whenever the nemesis needs the topic to hold every account past a
truncation point. Each write is a history op, so the checker knows what the topic held."""

from __future__ import annotations

from harness.history import History
from harness.run.topics import delete_records_before, end_offsets
from kafka import KafkaProducer
from workloads.ledger.contract import ACCOUNTS_TOPIC, Account, account_name

PROCESS = "accounts"
TIERS = ("basic", "silver", "gold")


class AccountsTopic:
    """Implements `faults.kinds.GlobalTopic`."""

    def __init__(self, bootstrap: str, history: History, accounts: int) -> None:
        self.bootstrap = bootstrap
        self.history = history
        self.accounts = accounts
        self.version = 0

    def publish_all(self) -> int:
        self.version += 1
        producer = KafkaProducer(bootstrap_servers=self.bootstrap, acks="all",
                                 enable_idempotence=True)
        try:
            for i in range(self.accounts):
                record = Account(account_name(i), self.version, TIERS[(i + self.version) % 3])
                self.history.record(PROCESS, "invoke", "publish", {
                    "account": record.account, "version": record.version})
                metadata = producer.send(
                    ACCOUNTS_TOPIC, key=record.account.encode(), value=record.encode()
                ).get(timeout=30)
                self.history.record(PROCESS, "ok", "publish", {
                    "account": record.account, "version": record.version,
                    "offset": metadata.offset})
        finally:
            producer.close()
        return self.accounts

    def republish(self) -> int:
        return self.publish_all()

    def end_offset(self) -> int:
        return end_offsets(self.bootstrap, ACCOUNTS_TOPIC).get(0, 0)

    def delete_before(self, offset: int) -> None:
        delete_records_before(self.bootstrap, ACCOUNTS_TOPIC, 0, offset)
