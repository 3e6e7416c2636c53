"""Window partitions whose rows sort by a long first.

A window sorts its rows by its partition keys, then its order keys, and Spark's sort
compares an 8-byte prefix of the first key before whole rows. Our keys are strings that
share their first 8 bytes ("acct-000...", a store name), so every comparison fell through
to a whole-row compare. Leading with a 64-bit hash of the keys settles almost every
comparison on the prefix; the keys themselves follow, so rows of different keys never
share a window partition, even when their hashes collide.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F


def hashed_keys(*names: str) -> list[Column]:
    """Partition keys for Window.partitionBy: a hash of `names`, then `names`."""
    cols = [F.col(n) for n in names]
    return [F.xxhash64(*cols), *cols]
