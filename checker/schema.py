"""Arrow schemas of the collected history files (results/README.md, `history/`).

Collection, the synthetic-history generators (tests, bench) and the checker's loader all
use these, so a column renamed in one place fails loudly everywhere else.
"""

from __future__ import annotations

import pyarrow as pa

# Where a record is in its topic, and when: the first columns of the topics' rows that keep
# them (checker/records.py _where).
POSITION = [("partition", pa.int32()), ("offset", pa.int64()), ("timestamp_ms", pa.int64())]

INPUT = pa.schema(
    [
        *POSITION,
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

# A windows-topic or sessions-topic record (workloads/ledger/windowed.py):
# where it is, and the window or session it reports.
WINDOWED = pa.schema(
    [
        *POSITION,
        ("account", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("count", pa.int64()),  # null: a session withdrawn by a merge
        ("sum", pa.int64()),
        ("removed", pa.bool_()),
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

# Any app's records, as raw bytes (the oracle, checker/oracle): what its input and output
# topics committed, read_committed.
TOPIC_RECORDS = pa.schema(
    [
        ("topic", pa.string()),
        *POSITION,
        ("key", pa.binary()),  # null: no key
        ("value", pa.binary()),  # null: tombstone
    ]
)

# What the reference execution (TopologyTestDriver) produced from the committed input:
# `seq` orders each topic's records, `input_index` names the input record (0-based, in
# the order piped into the reference's drivers, a global record once per driver) whose
# processing produced it.
REFERENCE = pa.schema(
    [
        ("topic", pa.string()),
        ("seq", pa.int64()),
        ("input_index", pa.int64()),
        ("timestamp_ms", pa.int64()),
        ("key", pa.binary()),
        ("value", pa.binary()),
    ]
)

# file stem -> schema; every file is `history/<stem>.parquet`
HISTORY_FILES: dict[str, pa.Schema] = {
    "input": INPUT,
    "output": OUTPUT,
    "changelog": CHANGELOG,
    "accounts": ACCOUNTS,
    # the Kafka Streams ledger app's windows and sessions (absent: a SUT that keeps none)
    "windows": WINDOWED,
    "sessions": WINDOWED,
    "offsets": OFFSETS,
    "traces": TRACES,
    "ops": OPS,
    "app_input": TOPIC_RECORDS,
    "app_output": TOPIC_RECORDS,
    # made at check time from app_input (checker/oracle/reference.py): the same input fed
    # in two orders, the second with wall-clock time advancing
    "reference": REFERENCE,
    "reference_alt": REFERENCE,
}

META_FILE = "meta.json"
