"""The leaderless-markers probe on a real 4.4.0 cluster: the coordinator drops the commit
marker of a partition without a leader, and the partition keeps an open transaction
after its broker is back (docs/findings/txn-markers-dropped-leaderless-partition.md).
4.4.0's jars do not change, so this is deterministic; 4.2.2, which holds the marker, is
the probe's other row in that page."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.probes.leaderless_markers import HANGING, RECORDS, TOPIC, probe
from harness.procs import load_records

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def test_4_4_0_leaves_the_leaderless_partition_in_an_open_transaction(tmp_path: Path) -> None:
    result = probe("4.4.0", tmp_path)
    assert result.verdict == HANGING
    assert (result.log_end, result.last_stable, result.open_transaction_start) == (RECORDS, 0, 0)
    assert result.coordinator_state == "CompleteCommit"  # the coordinator forgot it
    assert "likely deleted already" in result.coordinator_log and TOPIC in result.coordinator_log
    assert result.partition_broker != result.coordinator
    assert load_records(tmp_path / "pids.json") == []  # every broker stopped
