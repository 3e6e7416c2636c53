"""The `.checkpoint` file round trip, for any offsets: what is written reads back, less the
negative offsets, which (as in Kafka Streams) are never written."""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from hypothesis import strategies as st

from workloads.worker.checkpoint import read_checkpoint, write_checkpoint

# Kafka topic names: ASCII letters, digits, '.', '_' and '-'.
topics = st.text(st.sampled_from("abcxyzABC019._-"), min_size=1, max_size=40)
offsets = st.dictionaries(
    st.tuples(topics, st.integers(0, 2**31 - 1)),
    st.integers(-(2**63), 2**63 - 1),
    max_size=20,
)


@given(offsets, offsets)
@settings(max_examples=150, deadline=None)
def test_checkpoint_reads_back_what_was_written(
    first: dict[tuple[str, int], int], second: dict[tuple[str, int], int],
) -> None:
    with TemporaryDirectory() as tmp:
        path = Path(tmp) / "0_1" / ".checkpoint"
        write_checkpoint(path, first)
        assert read_checkpoint(path) == {k: v for k, v in first.items() if v >= 0}
        write_checkpoint(path, second)  # replaces, never merges
        assert read_checkpoint(path) == {k: v for k, v in second.items() if v >= 0}
        assert [p.name for p in path.parent.iterdir()] == [".checkpoint"]  # no temp file left
