"""`--shard I/N`: the assignment is a partition of the matrix's cells for any matrix and
any N, the same on every machine, in matrix order, stable when cells are appended, and
balanced by expected time (by count when every cell has one time limit); a bad I/N is
one line and 254."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.nightly import Cell, Matrix, load_matrix
from harness.nightly.shard import (
    Shard,
    assign,
    expected_s,
    matrix_hash,
    parse_shard,
    select,
    shard_cells,
)

ARGS = [(), ("--time-limit", "30"), ("--rate", "5"), ("--guarantee", "at_least_once"),
        ("--platform", "docker", "--time-limit", "300")]
cells = st.builds(
    Cell,
    profile=st.sampled_from(["all", "kill", "move", "KAFKA-7672"]),
    seed=st.integers(0, 5),
    bugs=st.sampled_from([(), ("KAFKA-7672",), ("KIP-406", "KAFKA-8187")]),
    args=st.sampled_from(ARGS),
)
matrices = st.builds(
    Matrix,
    cells=st.lists(cells, min_size=1, max_size=40).map(lambda cs: tuple(dict.fromkeys(cs))),
    time_limit_s=st.sampled_from([1.0, 60.0, 90.5]),
    run_timeout_s=st.just(900.0),
    extra_args=st.sampled_from([(), ("--pods", "3"), ("--time-limit", "45")]),
)


@settings(max_examples=100, deadline=None)
@given(matrix=matrices, extra_shards=st.integers(0, 45), data=st.data())
def test_shards_partition_the_matrix(matrix: Matrix, extra_shards: int, data: st.DataObject
                                     ) -> None:
    count = data.draw(st.integers(1, len(matrix.cells) + extra_shards))
    weights = expected_s(matrix)
    shards = assign(weights, count)
    assert len(shards) == count
    # Every cell in exactly one shard, each shard in matrix order.
    assert sorted(i for s in shards for i in s) == list(range(len(matrix.cells)))
    assert all(s == sorted(s) for s in shards)
    assert Counter(matrix.cells[i] for s in shards for i in s) == Counter(matrix.cells)
    # What a machine runs is its shard's cells, nothing else (a few shards: each select
    # parses every cell's options again).
    for k in {1, count, data.draw(st.integers(1, count))}:
        assert list(select(matrix, Shard(k, count)).cells) == [
            matrix.cells[i] for i in shards[k - 1]]
    # Balanced: shards differ by at most one cell's expected time; by count when equal.
    loads = [sum(weights[i] for i in s) for s in shards]
    assert max(loads) - min(loads) <= max(weights) + 1e-6
    if len(set(weights)) == 1:
        assert max(map(len, shards)) - min(map(len, shards)) <= 1
    # Stable: the same again, and a prefix of the matrix keeps its cells' shards.
    assert assign(list(weights), count) == shards
    cut = data.draw(st.integers(0, len(weights)))
    assert assign(weights[:cut], count) == [[i for i in s if i < cut] for s in shards]


def test_expected_time_is_the_cell_s_own_time_limit() -> None:
    matrix = Matrix(cells=(Cell("all", 1), Cell("kill", 1, args=("--time-limit", "300")),
                           Cell("move", 1), Cell("all", 2)), time_limit_s=60.0,
                    run_timeout_s=900.0)
    assert expected_s(matrix) == [120.0, 600.0, 120.0, 120.0]
    # The long cell alone on shard 2; the three short ones on shard 1.
    assert [shard_cells(matrix, Shard(k, 2)) for k in (1, 2)] == [[0, 2, 3], [1]]


SHARDS_OF_DEFAULT = """
import json
from harness.nightly import load_matrix
from harness.nightly.shard import Shard, matrix_hash, shard_cells
m = load_matrix(None)
print(json.dumps([matrix_hash(m), [shard_cells(m, Shard(k, 4)) for k in range(1, 5)]]))
"""


def test_the_same_shards_on_every_machine() -> None:
    """Another process, another hash seed (set and dict orders of strings): the same."""
    root = Path(__file__).resolve().parents[2]
    seen = set()
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        done = subprocess.run([sys.executable, "-c", SHARDS_OF_DEFAULT], env=env, cwd="/",
                              capture_output=True, text=True, timeout=120, check=True)
        seen.add(done.stdout)
    (printed,) = seen
    matrix = load_matrix(None)
    assert json.loads(printed) == [
        matrix_hash(matrix), [shard_cells(matrix, Shard(k, 4)) for k in range(1, 5)]]


def test_matrix_hash_ignores_jobs_only() -> None:
    matrix = load_matrix(None)
    assert matrix_hash(matrix) == matrix_hash(Matrix(**{**matrix.__dict__, "jobs": 7}))
    assert matrix_hash(matrix) != matrix_hash(Matrix(**{**matrix.__dict__,
                                                        "cells": matrix.cells[1:]}))
    assert len(matrix_hash(matrix)) == 16


@pytest.mark.parametrize("text", ["1/1", "1/2", "2/2", "7/30"])
def test_shard_spec(text: str) -> None:
    shard = parse_shard(text)
    assert str(shard) == text and shard.suffix == f"-shard-{shard.index}-of-{shard.count}"


@pytest.mark.parametrize("text", ["0/2", "3/2", "x/y", "1/0", "0/0", "", "2", "1/2/3", "-1/2",
                                  "1.0/2", "1/2x", "/2"])
def test_bad_shard_is_one_line_and_254(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["nightly", f"--shard={text}"]) == 254
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--shard" in err, err
