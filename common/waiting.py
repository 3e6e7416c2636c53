"""Polling until a condition holds or a deadline passes: the one loop every wait uses."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(
    condition: Callable[[], bool], timeout_s: float, interval_s: float = 0.5,
    sleep: Callable[[float], object] = time.sleep,
) -> bool:
    """Call `condition` until it returns true (then True) or `timeout_s` has passed (then
    False, after one last call at the deadline, so a slow machine gets its full time).
    `sleep` can be an Event's wait, to stop early when the event is set."""
    deadline = time.monotonic() + timeout_s
    while True:
        if condition():
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        sleep(min(interval_s, left))
