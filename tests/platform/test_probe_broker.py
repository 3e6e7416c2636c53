"""The leaderless-markers probe on a real 4.4.0 cluster: the coordinator drops the commit
marker of a partition without a leader, the partition keeps an open transaction after its
broker is back, and the same producer's next transaction, aborted, takes the committed
records with it (docs/findings/txn-markers-dropped-leaderless-partition.md).
4.4.0's jars do not change, so this is deterministic; 4.2.2, which holds the marker, is
the probe's other row in that page."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.probes.leaderless_markers import HANGING, LOST, RECORDS, TOPIC, probe
from harness.procs import load_records

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def test_4_4_0_keeps_the_partition_open_and_the_next_abort_takes_the_commit(tmp_path: Path) -> None:
    result = probe("4.4.0", tmp_path)
    assert result.verdict == HANGING
    assert (result.log_end, result.last_stable, result.open_transaction_start) == (RECORDS, 0, 0)
    assert result.coordinator_state == "CompleteCommit"  # the coordinator forgot it
    assert "likely deleted already" in result.coordinator_log and TOPIC in result.coordinator_log
    assert result.partition_broker != result.coordinator
    # the aborted second transaction closed the open one whole: the committed records are
    # in the log (read uncommitted) and lost to a read-committed consumer
    assert result.after_abort == LOST
    assert (result.first_read_committed, result.first_read_uncommitted) == (0, RECORDS)
    assert result.second_read_committed == 0
    # nothing left open: the stable offset reached the end (read after it, so the abort's
    # marker may have landed in between: 9 against 8 in a CI rehearsal)
    assert result.last_stable_after_abort >= result.log_end_after_abort
    assert load_records(tmp_path / "pids.json") == []  # every broker stopped
