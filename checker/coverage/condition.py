"""What a condition class is (`ConditionClass`, its `Hit`s) and the trace lookups the
classes of classes.py, crashes.py and knobs.py share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from checker.coverage.facts import Event, Facts


@dataclass(frozen=True)
class Hit:
    time_ns: int
    lines: tuple[Event, ...]


@dataclass(frozen=True)
class ConditionClass:
    name: str
    title: str
    detect: Callable[[Facts], list[Hit]]
    # "nightly": reached by the matrix as a whole (one run has one mode); "knobs": a
    # combination of drawn settings (checker/coverage/knobs.py), met by some seeds.
    scope: str = "run"


def hit(time_ns: int, *lines: Event | None) -> Hit:
    return Hit(time_ns, tuple(line for line in lines if line is not None))


def last_before(events: list[Event], time_ns: int, names: tuple[str, ...],
                **match: object) -> Event | None:
    """The last of `events` named one of `names` (and matching `match`) by `time_ns`."""
    found = None
    for e in events:
        if e["ts_ns"] > time_ns:
            break
        if e["event"] in names and all(e.get(k) == v for k, v in match.items()):
            found = e
    return found


def stream_threads(events: list[Event]) -> set[str]:
    """The stream threads (not the global one) that traced among `events`."""
    return {str(e.get("thread")) for e in events if str(e.get("thread")).startswith("Stream")}
