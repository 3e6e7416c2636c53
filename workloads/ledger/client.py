"""The ledger event client: a seeded stream of events sent at a fixed rate.

A library class the harness drives. It writes nothing itself: every send is reported to
the `on_op` callback as `invoke`, then `ok` (with partition and offset), `fail` (definitely
not written) or `info` (unknown: a timed-out send may or may not be in the log), and the
harness turns those into history ops. A fraction of sends re-send an earlier event id on
purpose (same id, account and amount), which the processor must deduplicate.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import kafka.errors as Errors
from kafka import KafkaProducer

from workloads.ledger.contract import INPUT_TOPIC, Event, account_name

OnOp = Callable[[str, str, dict[str, Any]], None]  # (type, f, value)


@dataclass(frozen=True)
class ClientConfig:
    seed: int
    rate: float = 200.0  # events per second
    accounts: int = 50
    dup_fraction: float = 0.05
    max_amount: int = 100
    client: int = 0  # event ids are `c<client>-<n>`, unique across clients


def generate(cfg: ClientConfig) -> Iterator[Event]:
    """The deterministic event stream of a seed: new events and re-sends of earlier ones."""
    rng = random.Random(cfg.seed)
    sent: list[Event] = []
    n = 0
    while True:
        if sent and rng.random() < cfg.dup_fraction:
            yield sent[rng.randrange(len(sent))]
            continue
        ev = Event(
            event_id=f"c{cfg.client}-{n}",
            account=account_name(rng.randrange(cfg.accounts)),
            amount=rng.randint(1, cfg.max_amount),
        )
        n += 1
        sent.append(ev)
        yield ev


class EventClient:
    def __init__(
        self, bootstrap: str, cfg: ClientConfig, on_op: OnOp, topic: str = INPUT_TOPIC
    ) -> None:
        self.cfg = cfg
        self.topic = topic
        self.on_op = on_op
        self.events = generate(cfg)
        self.producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            client_id=f"ledger-client-{cfg.client}",
            acks="all",
            enable_idempotence=True,
            request_timeout_ms=10_000,
            delivery_timeout_ms=30_000,
        )
        self.sent = 0

    def send_one(self) -> None:
        ev = next(self.events)
        value = asdict(ev)
        self.on_op("invoke", "send", value)
        try:
            fut = self.producer.send(self.topic, key=ev.account.encode(), value=ev.encode())
        except Errors.KafkaError as e:
            self.on_op("fail", "send", {**value, "error": type(e).__name__})
            return
        fut.add_callback(
            lambda md: self.on_op("ok", "send", {**value, "partition": md.partition,
                                                 "offset": md.offset})
        )
        # Any error after the send was accepted is indeterminate: it may have been written.
        fut.add_errback(lambda e: self.on_op("info", "send", {**value, "error": type(e).__name__}))
        self.sent += 1

    def run(self, count: int | None = None, duration_s: float | None = None,
            stop: threading.Event | None = None) -> int:
        """Send at `rate` until `count` events, `duration_s` seconds or `stop`; returns sent."""
        start = time.monotonic()
        period = 1.0 / self.cfg.rate if self.cfg.rate > 0 else 0.0
        i = 0
        while (count is None or i < count) and not (stop is not None and stop.is_set()):
            if duration_s is not None and time.monotonic() - start >= duration_s:
                break
            due = start + i * period
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.send_one()
            i += 1
        return i

    def close(self, timeout_s: float = 30.0) -> None:
        self.producer.flush(timeout=timeout_s)
        self.producer.close(timeout=timeout_s)
