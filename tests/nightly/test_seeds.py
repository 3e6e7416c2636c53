"""`kchaos nightly --seeds`: a matrix's seeds spread over nights. Only the runs of the
given seeds start, in matrix order; a list that is no seeds, or seeds the matrix has no run
of, is one line and 254 before any nightly folder is written."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sharded_fakes import MATRIX, OUTCOMES, fake_kchaos

from harness.cli import main
from harness.errors import UsageError
from harness.nightly import nightly, parse_matrix
from harness.nightly.matrix import only_seeds, parse_seeds

WHOLE = parse_matrix(__import__("yaml").safe_load(MATRIX))  # seeds 1 (5 runs) and 2 (4)


@pytest.mark.parametrize(("text", "seeds"), [
    ("2", {2}), ("2,3", {2, 3}), ("2-4", {2, 3, 4}), ("0, 7-8", {0, 7, 8}), ("3-3", {3}),
])
def test_seeds_are_listed_or_ranges(text: str, seeds: set[int]) -> None:
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["", "x", "3-2", "-1", "1,,2", "1.5", "2-"])
def test_what_is_no_list_of_seeds_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="2,3 or 2-3"):
        parse_seeds(text)


@given(st.sets(st.integers(1, 2), min_size=1))
def test_only_the_runs_of_the_seeds_are_kept_in_matrix_order(seeds: set[int]) -> None:
    kept = only_seeds(WHOLE, frozenset(seeds))
    assert kept.cells == tuple(c for c in WHOLE.cells if c.seed in seeds)
    assert kept.time_limit_s == WHOLE.time_limit_s and kept.jobs == WHOLE.jobs


def test_seeds_the_matrix_has_no_run_of_are_refused_with_its_seeds() -> None:
    with pytest.raises(UsageError, match=r"no run of these seeds \(its seeds: 1,2\)"):
        only_seeds(WHOLE, frozenset({3, 4}))


def test_a_nightly_of_one_seed_runs_that_seed_only(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(MATRIX)
    results = tmp_path / "results"
    code = nightly(results, 3600, matrix, fake_kchaos(**OUTCOMES), seeds=frozenset({2}))
    (folder,) = [p for p in results.glob("nightly-*") if p.is_dir()]
    runs = json.loads((folder / "nightly.json").read_text())["runs"]
    assert [r["cell"]["seed"] for r in runs] == [2, 2, 2, 2]
    assert code == 1  # seed 2 has no move/KAFKA-7672 run: the switch goes uncaught


@pytest.mark.parametrize("seeds", ["x", "9"])
def test_bad_seeds_are_one_line_and_no_nightly(tmp_path: Path, seeds: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(MATRIX)
    results = tmp_path / "results"
    assert main(["--results-dir", str(results), "nightly", "--matrix", str(matrix),
                 "--seeds", seeds]) == 254
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not results.exists()
