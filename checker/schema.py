"""Arrow schemas of the collected history files (results/README.md, `history/`).

Collection, the synthetic-history generators (tests, bench) and the checker's loader all
use these, so a column renamed in one place fails loudly everywhere else.
"""

from __future__ import annotations

import pyarrow as pa

INPUT = pa.schema(
    [
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp_ms", pa.int64()),
        ("event_id", pa.string()),
        ("account", pa.string()),
        ("amount", pa.int64()),
    ]
)

# An output record is the event it answers plus what processing it produced.
OUTPUT = pa.schema(
    [
        *INPUT,
        ("balance", pa.int64()),
        ("in_partition", pa.int32()),
        ("in_offset", pa.int64()),
        ("global_version", pa.int64()),  # null: the join found no account value
    ]
)

CHANGELOG = pa.schema(
    [
        ("store", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("key", pa.string()),
        ("value", pa.string()),  # null: tombstone
    ]
)

ACCOUNTS = pa.schema(
    [
        ("offset", pa.int64()),
        ("timestamp_ms", pa.int64()),
        ("account", pa.string()),
        ("version", pa.int64()),
        ("tier", pa.string()),
    ]
)

OFFSETS = pa.schema(
    [
        ("partition", pa.int32()),
        ("committed", pa.int64()),  # null: the group never committed this partition
        ("end", pa.int64()),
    ]
)

TRACES = pa.schema(
    [
        ("pod", pa.string()),
        ("pid", pa.int64()),
        ("ts_ns", pa.int64()),
        ("thread", pa.string()),
        ("event", pa.string()),
        ("task", pa.string()),
        ("data", pa.string()),  # the whole trace line, JSON
    ]
)

OPS = pa.schema(
    [
        ("index", pa.int64()),
        ("time_ns", pa.int64()),
        ("process", pa.string()),
        ("type", pa.string()),
        ("f", pa.string()),
        ("value", pa.string()),  # JSON
    ]
)

# file stem -> schema; every file is `history/<stem>.parquet`
HISTORY_FILES: dict[str, pa.Schema] = {
    "input": INPUT,
    "output": OUTPUT,
    "changelog": CHANGELOG,
    "accounts": ACCOUNTS,
    "offsets": OFFSETS,
    "traces": TRACES,
    "ops": OPS,
}

META_FILE = "meta.json"
