"""The workload client: sends the seeded event stream at a fixed rate, recording each
send as invoke + ok (with partition and offset) or info (outcome unknown)."""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from dataclasses import dataclass

from kafka.producer.future import RecordMetadata

from harness.history import History
from kafka import KafkaProducer
from workloads.ledger.contract import INPUT_TOPIC, Event
from workloads.ledger.events import event_stream

PROCESS = "client-0"


@dataclass
class LoadCounters:
    sent: int = 0
    acked: int = 0
    unknown: int = 0


class LoadClient:
    def __init__(
        self, bootstrap: str, history: History, seed: int, accounts: int,
        duplicate_fraction: float, rate: float,
    ) -> None:
        self.history = history
        self.rate = rate
        self.events = event_stream(seed, accounts, duplicate_fraction)
        self.counters = LoadCounters()
        self._lock = threading.Lock()
        self.producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            enable_idempotence=True,
            acks="all",
            linger_ms=5,
            request_timeout_ms=10000,
            delivery_timeout_ms=30000,
        )

    def run(self, duration_s: float, stop: threading.Event) -> None:
        """Send for `duration_s` (or until `stop`), paced to the rate."""
        started = time.monotonic()
        for n in itertools.count():
            due = started + n / self.rate
            now = time.monotonic()
            if now - started >= duration_s or stop.is_set():
                break
            if due > now:
                time.sleep(due - now)
            self._send(next(self.events))

    def close(self, timeout_s: float = 30.0) -> None:
        """Wait for outstanding sends; those still unresolved stay `info` (indeterminate)."""
        with contextlib.suppress(Exception):
            self.producer.flush(timeout=timeout_s)
        self.producer.close(timeout=5)

    def _send(self, event: Event) -> None:
        value: dict[str, object] = {
            "event_id": event.event_id, "account": event.account, "amount": event.amount,
        }
        self.history.record(PROCESS, "invoke", "send", value)
        with self._lock:
            self.counters.sent += 1
        try:
            future = self.producer.send(
                INPUT_TOPIC, key=event.account.encode(), value=event.encode()
            )
        except Exception as exc:
            self._failed(value, exc)
            return
        future.add_callback(self._acked, value)
        future.add_errback(self._failed_cb, value)

    def _acked(self, value: dict[str, object], metadata: RecordMetadata) -> None:
        self.history.record(
            PROCESS, "ok", "send",
            {**value, "partition": metadata.partition, "offset": metadata.offset},
        )
        with self._lock:
            self.counters.acked += 1

    def _failed_cb(self, value: dict[str, object], exc: BaseException) -> None:
        self._failed(value, exc)

    def _failed(self, value: dict[str, object], exc: BaseException) -> None:
        # A send that errored may still have been written (a lost ack): indeterminate.
        self.history.record(PROCESS, "info", "send", {**value, "error": type(exc).__name__})
        with self._lock:
            self.counters.unknown += 1
