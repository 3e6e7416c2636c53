"""Helpers of the sharded-nightly tests: nightlies run against the fake `kchaos`
(tests/report/fake_kchaos.py) by the real `nightly()`, so their folders hold exactly the
files a nightly writes: the whole matrix on one "machine", and its two shards on two
others (each its own results folder, as CI artifacts or a Job's volume would hold them).
A plain module (conftest.py gives the fixture), free of pytest."""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.nightly import nightly
from harness.nightly.shard import Shard

FAKE = Path(__file__).resolve().parents[1] / "report" / "fake_kchaos.py"

# 9 cells, seed-major: seed 1 has five (move runs seed 1 only), so the round robin of two
# shards gives shard 2 two of KAFKA-7672's five runs, and only shard 1's move/1 catches it.
MATRIX = """
time_limit_s: 1
seeds: [1, 2]
profiles: [all, kill]
bugs: [[], [KAFKA-7672]]
include:
  - {profile: move, bugs: [KAFKA-7672], seeds: [1]}
"""
OUTCOMES: dict[str, object] = {"move/1/KAFKA-7672": 1, "default": 0}


def fake_kchaos(**outcomes: object) -> list[str]:
    return [sys.executable, str(FAKE), "--outcomes", json.dumps(outcomes)]


def run_nightly(results: Path, matrix: Path, outcomes: dict[str, object],
                shard: Shard | None = None) -> tuple[int, Path]:
    """The exit code and the folder of one nightly (or shard) into `results`."""
    before = {p for p in results.glob("nightly-*") if p.is_dir()}
    code = nightly(results, 3600, matrix, fake_kchaos(**outcomes), shard=shard)
    (folder,) = {p for p in results.glob("nightly-*") if p.is_dir()} - before
    return code, folder


def tree_digest(root: Path) -> str:
    """Every path, content and mtime under `root`: equal before and after = untouched."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        stat = path.lstat()
        digest.update(f"{stat.st_mtime_ns} {stat.st_mode}".encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class Nightlies:
    matrix: Path
    whole: Path  # the unsharded nightly's folder
    whole_code: int
    shards: tuple[Path, Path]  # shard 1/2 and 2/2, each in its own results folder
    shard_codes: tuple[int, int]


def make_nightlies(tmp: Path) -> Nightlies:
    matrix = tmp / "matrix.yaml"
    matrix.write_text(MATRIX)
    whole_code, whole = run_nightly(tmp / "whole" / "results", matrix, OUTCOMES)
    first = run_nightly(tmp / "machine-1" / "results", matrix, OUTCOMES, Shard(1, 2))
    second = run_nightly(tmp / "machine-2" / "results", matrix, OUTCOMES, Shard(2, 2))
    return Nightlies(matrix, whole, whole_code, (first[1], second[1]), (first[0], second[0]))
