"""Send an app run's input (harness/app/spec.py): the `first` topics in full before the
pods start, then the others at the run's rate, each its weight's share, until the time
limit or until every topic's records are sent.

Sends are idempotent with acks=all, like the ledger client's; what each topic sent, had
acknowledged and left unknown goes into the run's history at the end (the oracle judges
what the topics committed, not what was sent)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import kafka.errors as Errors
from kafka import KafkaProducer

from harness.app.spec import InputSpec, Record, records
from harness.history import History, LoadCounters

PROCESS = "client-0"


@dataclass
class TopicCounts:
    sent: int = 0
    acked: int = 0
    unknown: int = 0
    errors: dict[str, int] = field(default_factory=dict)


class AppLoad:
    def __init__(self, bootstrap: str, history: History, spec: InputSpec, seed: int,
                 rate: float) -> None:
        self.history = history
        self.spec = spec
        self.rate = rate
        self.counters = LoadCounters()
        self.per_topic = {t.name: TopicCounts() for t in spec.topics}
        self._lock = threading.Lock()
        self._streams: dict[str, Iterator[Record]] = {
            t.name: records(t, seed) for t in spec.topics}
        self._rng = random.Random(seed)
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="kchaos-app-input",
                                      acks="all", enable_idempotence=True,
                                      request_timeout_ms=10_000, delivery_timeout_ms=30_000)

    def send_first(self, timeout_s: float = 60.0) -> None:
        """The topics sent before the others (a table's contents), all acknowledged."""
        for topic in (t for t in self.spec.topics if t.first):
            for record in self._streams.pop(topic.name):
                self._send(record)
        self.producer.flush(timeout=timeout_s)

    def run(self, duration_s: float, stop: threading.Event) -> None:
        """The other topics, interleaved by weight, at the rate."""
        weights = {t.name: t.weight for t in self.spec.topics
                   if t.name in self._streams and t.weight > 0}
        start = time.monotonic()
        period = 1.0 / self.rate if self.rate > 0 else 0.0
        i = 0
        while weights and not stop.is_set() and time.monotonic() - start < duration_s:
            delay = start + i * period - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            name = self._rng.choices(list(weights), list(weights.values()))[0]
            record = next(self._streams[name], None)
            if record is None:  # this topic has sent all it has
                del weights[name]
                continue
            self._send(record)
            i += 1

    def _send(self, record: Record) -> None:
        counts = self.per_topic[record.topic]
        key = None if record.key is None else record.key.encode()
        value = None if record.value is None else record.value.encode()
        with self._lock:
            counts.sent += 1
            self.counters.sent += 1
        try:
            future = self.producer.send(record.topic, key=key, value=value)
        except Errors.KafkaError as exc:
            self._done(counts, error=type(exc).__name__)
            return
        future.add_callback(lambda _: self._done(counts))
        # an error after the send was accepted is indeterminate: it may have been written
        future.add_errback(lambda exc: self._done(counts, error=type(exc).__name__))

    def _done(self, counts: TopicCounts, error: str | None = None) -> None:
        with self._lock:
            if error is None:
                counts.acked += 1
                self.counters.acked += 1
            else:
                counts.unknown += 1
                counts.errors[error] = counts.errors.get(error, 0) + 1
                self.counters.unknown += 1

    def close(self, timeout_s: float = 30.0) -> None:
        try:
            self.producer.flush(timeout=timeout_s)
            self.producer.close(timeout=timeout_s)
        except Exception as exc:  # a flush that times out must not lose the run
            self.history.record(PROCESS, "info", "close", {"error": type(exc).__name__})
        for topic, counts in self.per_topic.items():
            self.history.record(PROCESS, "info", "sent", {
                "topic": topic, "sent": counts.sent, "acked": counts.acked,
                "unknown": counts.unknown, "errors": counts.errors})
