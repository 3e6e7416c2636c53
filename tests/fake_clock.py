"""A hand-turned clock for tests of code that waits (the nightly's budget, supervision):
`clock()` is now, `clock.sleep(s)` moves it on at once."""

from __future__ import annotations


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now = round(self.now + seconds, 6)  # polls of 0.1 s add up to whole seconds
