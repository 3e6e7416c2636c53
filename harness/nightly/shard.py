"""`kchaos nightly --shard I/N`: one machine's share of the matrix (docs/nightly-sharded.md).

The rule: the cells are taken in matrix order and each goes to the shard with the least
expected time so far (ties: the lowest shard). A cell's expected time is the nightly's own
estimate of a run before any has finished, ESTIMATE_FACTOR x its time limit (supervise.py):
the matrix's `time_limit_s`, or the cell's own `--time-limit`. With one time limit for all
cells this is round robin, i.e. balanced by count. The rule reads only the matrix, so
every machine computes the same shards; every cell is in exactly one; each shard keeps the
matrix order (seed-major, for the budget); appending cells to a matrix moves none of the
cells before them; shards differ in expected time by at most one cell's.

A shard's folder (`nightly-<stamp>-shard-I-of-N/`) holds `shard.json`, written before
its first run: which shard, of which matrix (the matrix itself and its hash), and which of
its cells. `kchaos nightly merge` (merge.py) reads it.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import heapq
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.nightly.matrix import Cell, Matrix
from harness.nightly.supervise import ESTIMATE_FACTOR
from harness.report.expect import Judgement
from harness.results import write_json

SHARD_JSON = "shard.json"
SHARD_KIND = "kchaos-nightly-shard"
SHARD_FORMAT = 1
_SHARD = re.compile(r"(\d{1,9})/(\d{1,9})")


@dataclass(frozen=True)
class Shard:
    index: int  # 1..count
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def suffix(self) -> str:
        """The shard's folder name ends with this (`nightly-<stamp>-shard-2-of-3`)."""
        return f"-shard-{self.index}-of-{self.count}"


def parse_shard(text: str) -> Shard:
    """`I/N` with 1 <= I <= N; an argparse type (the CLI turns its error into 254)."""
    match = _SHARD.fullmatch(text.strip())
    index, count = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
    if not match or count < 1 or not 1 <= index <= count:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a shard I/N with 1 <= I <= N (e.g. 1/4; a Kubernetes "
            "Indexed Job passes $((JOB_COMPLETION_INDEX + 1))/N)")
    return Shard(index, count)


# -- the matrix, as recorded and hashed -------------------------------------------------------


def matrix_doc(matrix: Matrix) -> dict[str, Any]:
    """What decides the runs (not `jobs`: how many at once is each machine's business)."""
    return {
        "cells": [dataclasses.asdict(c) for c in matrix.cells],
        "time_limit_s": matrix.time_limit_s,
        "run_timeout_s": matrix.run_timeout_s,
        "extra_args": list(matrix.extra_args),
    }


def doc_hash(doc: Mapping[str, Any]) -> str:
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def matrix_hash(matrix: Matrix) -> str:
    return doc_hash(matrix_doc(matrix))


def cell_of(raw: Any) -> Cell:
    """A cell as nightly.json and shard.json write it; ValueError if it is not one."""
    if not isinstance(raw, dict) or set(raw) != {"profile", "seed", "bugs", "args"}:
        raise ValueError(f"not a cell: {str(raw)[:80]}")
    profile, seed, bugs, args = raw["profile"], raw["seed"], raw["bugs"], raw["args"]
    if (not isinstance(profile, str) or isinstance(seed, bool) or not isinstance(seed, int)
            or not isinstance(bugs, list) or not isinstance(args, list)
            or not all(isinstance(x, str) for x in [*bugs, *args])):
        raise ValueError(f"not a cell: {str(raw)[:80]}")
    return Cell(profile, seed, tuple(bugs), tuple(args))


# -- the assignment ---------------------------------------------------------------------------


def expected_s(matrix: Matrix) -> list[float]:
    """Each cell's expected time: ESTIMATE_FACTOR x the time limit its run gets."""
    from harness.cli import build_parser

    parser = build_parser()
    default = ESTIMATE_FACTOR * matrix.time_limit_s
    weights = []
    for cell in matrix.cells:
        try:
            limit = parser.parse_args(cell.argv(matrix.time_limit_s, Path("."),
                                                matrix.extra_args)).time_limit_s
        except UsageError:  # the matrix was checked when loaded; not one that was
            limit = None
        good = isinstance(limit, float) and math.isfinite(limit) and limit > 0
        weights.append(ESTIMATE_FACTOR * limit if good else default)
    return weights


def assign(weights: Sequence[float], count: int) -> list[list[int]]:
    """Cell indexes per shard: each cell, in order, to the least loaded shard (ties: the
    lowest). Weights must be positive; shards past the number of cells stay empty (each of
    the first cells goes to an empty shard), so N may exceed the matrix."""
    shards: list[list[int]] = [[] for _ in range(count)]
    heap = [(0.0, k) for k in range(min(count, len(weights)))]
    for i, weight in enumerate(weights):
        load, k = heapq.heappop(heap)
        shards[k].append(i)
        heapq.heappush(heap, (load + weight, k))
    return shards


def shard_cells(matrix: Matrix, shard: Shard) -> list[int]:
    """The indexes (in `matrix.cells`) of the cells this shard runs, in matrix order."""
    return assign(expected_s(matrix), shard.count)[shard.index - 1]


def select(matrix: Matrix, shard: Shard) -> Matrix:
    picked = shard_cells(matrix, shard)
    return dataclasses.replace(matrix, cells=tuple(matrix.cells[i] for i in picked))


def write_shard_record(
    log_dir: Path, matrix: Matrix, shard: Shard, started_at: str
) -> dict[str, Any]:
    """shard.json, before the first run: a folder without it is no shard."""
    doc = matrix_doc(matrix)
    record = {
        "kind": SHARD_KIND, "format": SHARD_FORMAT, "shard": str(shard),
        "index": shard.index, "count": shard.count, "matrix_hash": doc_hash(doc),
        "matrix": doc, "cells": shard_cells(matrix, shard), "started_at": started_at,
        "stamp": log_dir.name.removeprefix("nightly-").removesuffix(shard.suffix),
    }
    write_json(log_dir / SHARD_JSON, record)
    return record


# -- a shard's own verdict --------------------------------------------------------------------


def shard_verdict(verdict: Judgement) -> tuple[bool, list[str], list[str]]:
    """(ok, failures, notes) of one shard. A bug switch's runs may be spread over shards
    and it only needs one of them to catch it, so a shard does not fail for a switch it
    did not catch: `kchaos nightly merge` judges that over every shard. A fixed-worker run
    that is not valid fails the shard (and the merge) as it fails a nightly."""
    fixed = Judgement(verdict.bad_fixed, verdict.lost_fixed, [])
    notes = [f"bug {d.name} not caught in this shard's {d.runs} run(s): "
             "`kchaos nightly merge` judges it over every shard" for d in verdict.undetected]
    return fixed.ok, fixed.reasons(), notes
