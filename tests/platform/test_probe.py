"""`kchaos probe`: its judgement of a partition's offsets, and its refusals of bad input
(exit 254, one line, no results folder)."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import assert_bad_input, kchaos

from harness.probes.leaderless_markers import (
    ABORTED_READ,
    DELIVERED,
    HANGING,
    KEPT,
    LOST,
    judge,
    judge_after_abort,
)


def test_a_partition_whose_lso_reaches_its_end_had_its_markers() -> None:
    assert judge(log_end=6, last_stable=6, open_start=None) == DELIVERED


def test_an_lso_below_the_end_is_a_hanging_transaction() -> None:
    assert judge(log_end=5, last_stable=0, open_start=0) == HANGING


def test_an_open_transaction_hangs_even_before_the_lso_is_read_behind_it() -> None:
    assert judge(log_end=5, last_stable=5, open_start=3) == HANGING


FIRST = [f"record-{n}" for n in range(5)]


def test_every_committed_record_read_after_the_abort_is_kept() -> None:
    assert judge_after_abort(FIRST) == KEPT


def test_committed_records_missing_after_the_abort_are_lost() -> None:
    assert judge_after_abort([]) == LOST
    assert judge_after_abort(FIRST[:4]) == LOST


def test_a_record_of_the_aborted_transaction_read_committed_is_its_own_verdict() -> None:
    assert judge_after_abort([*FIRST, "aborted-0"]) == ABORTED_READ
    assert judge_after_abort(["aborted-0"]) == ABORTED_READ


def test_an_unknown_probe_is_refused(tmp_path: Path) -> None:
    result = kchaos("--results-dir", str(tmp_path / "r"), "probe", "no-such-probe", cwd=tmp_path)
    assert_bad_input(result, "no-such-probe", "leaderless-markers")
    assert not (tmp_path / "r").exists()


def test_a_malformed_release_is_refused_before_any_folder(tmp_path: Path) -> None:
    result = kchaos("--results-dir", str(tmp_path / "r"), "probe", "leaderless-markers",
                    "--kafka-versions", "4.2.2,abc", cwd=tmp_path)
    assert_bad_input(result, "abc")
    assert not (tmp_path / "r").exists()


def test_an_empty_release_list_is_refused(tmp_path: Path) -> None:
    result = kchaos("--results-dir", str(tmp_path / "r"), "probe", "leaderless-markers",
                    "--kafka-versions", ",", cwd=tmp_path)
    assert_bad_input(result, "--kafka-versions")
