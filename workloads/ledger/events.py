"""The seeded input stream: ledger events over a fixed set of accounts, re-sending a
fraction of earlier event ids on purpose (duplicates the processor must drop)."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterator

from workloads.ledger.contract import Event, account_name

RECENT = 1000  # duplicates re-send one of the last RECENT distinct events


def event_stream(seed: int, accounts: int, duplicate_fraction: float) -> Iterator[Event]:
    """Infinite and deterministic: the same seed gives the same events in the same order.
    Amounts are positive, so a balance that goes down is always a lost update."""
    rng = random.Random(f"ledger:{seed}")
    recent: deque[Event] = deque(maxlen=RECENT)
    n = 0
    while True:
        if recent and rng.random() < duplicate_fraction:
            yield rng.choice(recent)
            continue
        event = Event(
            event_id=f"e{seed}-{n}",
            account=account_name(rng.randrange(accounts)),
            amount=rng.randint(1, 100),
        )
        n += 1
        recent.append(event)
        yield event
