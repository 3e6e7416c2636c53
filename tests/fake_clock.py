"""A hand-turned clock for tests of code that waits (the nightly's budget, supervision,
the nemesis): `clock()` and `clock.monotonic()` are now, `clock.wall_ns()` the same
instant on a wall clock, `clock.sleep(s)` moves it on at once."""

from __future__ import annotations


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now = round(self.now + seconds, 6)  # polls of 0.1 s add up to whole seconds

    def monotonic(self) -> float:
        return self.now

    def wall_ns(self) -> int:
        return 1_700_000_000_000_000_000 + int(self.now * 1e9)
