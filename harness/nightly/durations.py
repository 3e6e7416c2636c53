"""Durations as people write them: "90" or "90s", "45m", "2h", "1h30m" -> seconds."""

from __future__ import annotations

import re

_DURATION = re.compile(r"(\d+(?:\.\d+)?)([hms]?)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "": 1.0}


def seconds_of(text: str) -> float | None:
    """The positive number of seconds `text` spells, or None if it spells none."""
    spec = text.strip().lower()
    parts = _DURATION.findall(spec)
    if not spec or not parts or "".join(n + u for n, u in parts) != spec:
        return None
    seconds = sum(float(n) * _UNIT_S[u] for n, u in parts)
    return seconds if seconds > 0 else None


def parse_duration(text: str, option: str = "--budget") -> float:
    """`text` in seconds; a UsageError naming `option` if it is not a positive duration."""
    from harness.errors import UsageError

    seconds = seconds_of(text)
    if seconds is None:
        raise UsageError(
            f"{option} {text!r}: give a positive duration such as 90s, 45m, 2h or 1h30m"
        )
    return seconds
