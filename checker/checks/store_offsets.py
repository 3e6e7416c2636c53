"""stale-checkpoint where the stores keep their own changelog offsets (Kafka Streams 4.3 on,
KIP-1035): the offset a store reports, against what it holds.

Up to 4.2 a task's changelog offsets live in its `.checkpoint` file, which the harness sees
from outside (checkpoints.py, half (b)). From 4.3 a RocksDB store keeps them itself, in a
column family of its own (`offsets`: one key per changelog partition, plus `status`, 1
open / 0 closed, and the IQ position), written by `StateStore#commit(Map)` with the data
and read back by `StateStore#committedOffset` (read in the 4.3.1 sources:
`AbstractColumnFamilyAccessor`, `RocksDBStore#openDB`, `ProcessorStateManager`; and in the
4.4.0 classes). No `.checkpoint` file is written, so there is nothing for half (b) to see;
what took the file's place cannot be read from outside a live store without RocksDB and the
layout of internal classes. The question half (a) asks of a `task-init` can be asked of the
store itself, through the public API:

- the kstreams app writes `store-offsets` per store from the processor's init (the task
  turned RUNNING: restoration done, no record processed yet), under exactly-once on a
  release that has `StateStore#committedOffset` and whose store `managesOffsets()`: the
  offset `committedOffset` reports for the store's changelog partition, and the digest of
  what the store holds (`workloads.ledger.contract.store_digest`);
- judged as a task-init's checkpoint (digests.py): the digest must be the committed
  changelog replayed up to and including that offset, or up to a later offset (a
  committed prefix reaching it). At that moment Kafka Streams has just committed the
  restored position into the store (the state updater's `maybeCheckpoint` when a task's
  restoration completes), so a sound store matches exactly.

What it catches: a store that kept writes of an aborted transaction (KAFKA-20685's
consequence, should a store's own marker ever let such a store be trusted: 4.3 marks a
store open in the same column family and wipes it under exactly-once when it finds it
open; 4.4's transactional stores, `enable.transactional.statestores`, keep no marker and
are trusted after a crash), or a store behind the offset it reports (KAFKA-8187's shape).
Restoration overwrites the keys that come after the offset, so a stale store is seen
only through keys the changelog does not write again before the task turns RUNNING: the
dedup store's event ids, for one.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checker.checks.digests import trusted_offsets
from checker.frames import Frames, trace_field
from workloads.ledger.trace_contract import STORE_OFFSETS

# Processor inits are of active tasks only; the kind digests.inits gives a task-init.
ACTIVE = "active"


def store_offset_inits(frames: Frames) -> DataFrame:
    """`store-offsets` lines that report an offset, in the shape of digests.inits (the
    offset as `checkpoint`), so that one replay judges both."""
    return trusted_offsets(frames, STORE_OFFSETS, "offset", F.lit(ACTIVE))


def judged_lines(frames: Frames) -> int:
    """How many `store-offsets` lines reported an offset: what this half judged (a 4.3+
    run whose app wrote none was judged on nothing, and says so)."""
    return (
        frames.traces.where(
            (F.col("event") == STORE_OFFSETS) & trace_field("offset").isNotNull()
        ).count()
    )
