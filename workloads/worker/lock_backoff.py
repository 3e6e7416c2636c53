"""When a task whose directory lock another thread holds may try the lock again (Kafka
Streams' TaskManager.BackoffRecord, KAFKA-17109: an exponential back-off of 1 s x 2^n,
at most 10 s, jitter 0.5). The thread that holds the lock releases it only when its own
loop gets to the rebalance; a retry on every loop iteration competes with that thread for
the interpreter's lock and filled the trace with one `lock-failed` line per try.

A streak of failures ends when the lock is taken or the task leaves the thread (Kafka
Streams keeps the record of a task that left until it is initialised somewhere; a task
assigned again here starts a new streak, tried at once)."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

INITIAL_S = 1.0
MULTIPLIER = 2
MAX_S = 10.0
JITTER = 0.5
_EXP_MAX = math.log(MAX_S / INITIAL_S) / math.log(MULTIPLIER)


@dataclass
class _Streak:
    attempts: int
    next_try: float


class LockBackoff:
    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 rng: random.Random | None = None) -> None:
        self._clock = clock
        self._rng = rng or random.Random()
        self._streaks: dict[str, _Streak] = {}

    def may_try(self, task: str) -> bool:
        streak = self._streaks.get(task)
        return streak is None or self._clock() >= streak.next_try

    def failed(self, task: str) -> int:
        """Record a failed try; returns the failures in a row, this one included."""
        streak = self._streaks.get(task)
        attempts = 1 if streak is None else streak.attempts + 1
        self._streaks[task] = _Streak(attempts, self._clock() + self.delay_s(attempts))
        return attempts

    def delay_s(self, attempts: int) -> float:
        """Kafka's ExponentialBackoff.backoff(attempts); the jitter never exceeds the cap."""
        term = INITIAL_S * MULTIPLIER ** min(attempts, _EXP_MAX)
        return min(self._rng.uniform(1 - JITTER, 1 + JITTER) * term, MAX_S)

    def end(self, task: str) -> None:
        """The lock was taken, or the task left the thread."""
        self._streaks.pop(task, None)

    def waiting(self) -> list[str]:
        return sorted(self._streaks)
