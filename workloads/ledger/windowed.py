"""The ledger's windowed and session state: topics, stores, records and window geometry.

Besides balances, the Kafka Streams ledger app aggregates each account's input records
into hopping windows and into sessions (kstreams-common WindowAggregations), as most Kafka
Streams apps keep windowed or session state. Those stores are segmented (each segment its
own RocksDB, rolled and dropped by time), and the geometry below is chosen so that, at the
input's own record timestamps (the client's send time), segments roll and expire inside a
60 s run. The Python worker keeps no windows.

Every record is aggregated, re-sends included (no dedup): a window's or session's value is
the count and sum of the amounts of its account's input records whose timestamps fall in
it, which the checker recomputes from the committed input (checker/checks/windowed.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

WINDOWS_TOPIC = "ledger-windows"
SESSIONS_TOPIC = "ledger-sessions"

# The app's fixed geometry: a window of 4 s every 2 s with 2 s of grace (several windows
# open per account at once, each closing a few seconds after its end), and sessions that
# end after 500 ms without a record (at 100 events/s over 40 accounts, about one record per
# account every 400 ms: sessions both grow and split).
WINDOW_SIZE_MS = 4000
WINDOW_ADVANCE_MS = 2000
WINDOW_GRACE_MS = 2000
SESSION_GAP_MS = 500
SESSION_GRACE_MS = 2000


@dataclass(frozen=True)
class WindowSpec:
    """A run's windows as the pods ran them: the fixed geometry above and the durability
    settings of the run (retention, segment interval: harness/config/run.py)."""

    retention_ms: int
    segment_ms: int
    size_ms: int = WINDOW_SIZE_MS
    advance_ms: int = WINDOW_ADVANCE_MS
    grace_ms: int = WINDOW_GRACE_MS
    session_gap_ms: int = SESSION_GAP_MS
    session_grace_ms: int = SESSION_GRACE_MS

    def flag(self) -> str:
        """The pod flag's value (`--windows`), `key=value` pairs the Java app parses
        (kstreams-common WindowSpec.java)."""
        return ",".join(f"{k}={v}" for k, v in asdict(self).items())

    def to_json(self) -> dict[str, int]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, int]) -> WindowSpec:
        return WindowSpec(**{k: int(v) for k, v in data.items()})

    def starts(self, timestamp_ms: int) -> list[int]:
        """The starts of the hopping windows a record at `timestamp_ms` falls in (Kafka
        Streams' TimeWindows.windowsFor: aligned to the epoch, none before it)."""
        first = max(0, timestamp_ms - self.size_ms + self.advance_ms) // self.advance_ms
        first *= self.advance_ms
        return list(range(first, timestamp_ms + 1, self.advance_ms))


# Windows-topic and sessions-topic records: key = account, value = JSON
#   {"account", "start", "end", "count", "sum", "removed"}
# `end` is exclusive for a window and the last record's timestamp for a session; a session
# merged into a larger one is withdrawn: "removed": true with null count and sum (Kafka
# Streams forwards the old session with a null value). Written by the Java apps
# (kstreams-common WindowSpec.record), read by checker/records.py windowed_row.
