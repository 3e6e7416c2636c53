"""`kchaos nightly --shard I/N`: one machine's share of the matrix (docs/nightly-sharded.md).

The rule: the cells are taken in matrix order, then the project checks, and each goes to
the shard with the least expected time so far (ties: the lowest shard). A cell's expected
time is the nightly's own estimate of a run before any has finished, ESTIMATE_FACTOR x its
time limit (supervise.py): the matrix's `time_limit_s`, or the cell's own `--time-limit`;
a project check's is its timeout. With one time limit for all cells this is round robin,
i.e. balanced by count. The rule reads only the matrix, so every machine computes the
same shards; every cell and check is in exactly one; each shard keeps the matrix order
(seed-major, for the budget); appending cells or checks to a matrix moves none of the
cells before them (checks come after every cell); shards differ in expected time by at
most one item's.

A shard's folder (`nightly-<stamp>-shard-I-of-N/`) holds `shard.json`, written before
its first run: which shard, of which matrix (the matrix itself and its hash), and which of
its cells and project checks. `kchaos nightly merge` (merge.py) reads it.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import heapq
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.nightly.matrix import Cell, Matrix, ProjectCheck, time_limits
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
    """What decides the runs (not `jobs`: how many at once is each machine's business).
    `project_checks` only when there are some: a matrix without keeps its hash."""
    doc: dict[str, Any] = {
        "cells": [dataclasses.asdict(c) for c in matrix.cells],
        "time_limit_s": matrix.time_limit_s,
        "run_timeout_s": matrix.run_timeout_s,
        "extra_args": list(matrix.extra_args),
    }
    if matrix.project_checks:
        doc["project_checks"] = [check_doc(c) for c in matrix.project_checks]
    return doc


def check_doc(check: ProjectCheck) -> dict[str, Any]:
    return {"name": check.name, "command": list(check.command), "timeout_s": check.timeout_s,
            "needs": list(check.needs)}


def doc_hash(doc: Mapping[str, Any]) -> str:
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def matrix_hash(matrix: Matrix) -> str:
    return doc_hash(matrix_doc(matrix))


def cell_of(raw: Any) -> Cell:
    """A cell as nightly.json and shard.json write it; ValueError if it is not one."""
    keys = {"profile", "seed", "bugs", "args"}
    if not isinstance(raw, dict) or not keys <= set(raw) <= {*keys, "settings"}:
        raise ValueError(f"not a cell: {str(raw)[:80]}")
    profile, seed, bugs, args = raw["profile"], raw["seed"], raw["bugs"], raw["args"]
    settings = raw.get("settings", [])  # written since cells have settings
    if (not isinstance(profile, str) or isinstance(seed, bool) or not isinstance(seed, int)
            or not isinstance(bugs, list) or not isinstance(args, list)
            or not all(isinstance(x, str) for x in [*bugs, *args])
            or not isinstance(settings, list)
            or not all(isinstance(p, list) and len(p) == 2
                       and all(isinstance(x, str) for x in p) for p in settings)):
        raise ValueError(f"not a cell: {str(raw)[:80]}")
    return Cell(profile, seed, tuple(bugs), tuple(args), tuple((k, v) for k, v in settings))


# -- the assignment ---------------------------------------------------------------------------


def expected_s(matrix: Matrix) -> list[float]:
    """Each cell's expected time: ESTIMATE_FACTOR x the time limit its run gets."""
    return [ESTIMATE_FACTOR * limit for limit in time_limits(matrix)]


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


def shard_items(matrix: Matrix, shard: Shard) -> tuple[list[int], list[int]]:
    """The indexes of the cells (in `matrix.cells`) and of the project checks (in
    `matrix.project_checks`) this shard runs, in matrix order. The checks are weighed
    after every cell, so they move no cell."""
    weights = [*expected_s(matrix), *(c.timeout_s for c in matrix.project_checks)]
    mine = assign(weights, shard.count)[shard.index - 1]
    cells = len(matrix.cells)
    return [i for i in mine if i < cells], [i - cells for i in mine if i >= cells]


def shard_cells(matrix: Matrix, shard: Shard) -> list[int]:
    """The indexes (in `matrix.cells`) of the cells this shard runs, in matrix order."""
    return shard_items(matrix, shard)[0]


def select(matrix: Matrix, shard: Shard) -> Matrix:
    cells, checks = shard_items(matrix, shard)
    return dataclasses.replace(matrix, cells=tuple(matrix.cells[i] for i in cells),
                               project_checks=tuple(matrix.project_checks[i] for i in checks))


def write_shard_record(
    log_dir: Path, matrix: Matrix, shard: Shard, started_at: str
) -> dict[str, Any]:
    """shard.json, before the first run: a folder without it is no shard."""
    doc = matrix_doc(matrix)
    cells, checks = shard_items(matrix, shard)
    record = {
        "kind": SHARD_KIND, "format": SHARD_FORMAT, "shard": str(shard),
        "index": shard.index, "count": shard.count, "matrix_hash": doc_hash(doc),
        "matrix": doc, "cells": cells, "project_checks": checks, "started_at": started_at,
        "stamp": log_dir.name.removeprefix("nightly-").removesuffix(shard.suffix),
    }
    write_json(log_dir / SHARD_JSON, record)
    return record


# -- a shard's own verdict --------------------------------------------------------------------


def shard_verdict(verdict: Judgement) -> tuple[bool, list[str], list[str]]:
    """(ok, failures, notes) of one shard. A bug switch's runs may be spread over shards
    and it only needs one of them to catch it, so a shard does not fail for a switch it
    did not catch: `kchaos nightly merge` judges that over every shard. A fixed-worker run
    that is not valid, or a project check that failed, fails the shard (and the merge) as
    it fails a nightly."""
    fixed = dataclasses.replace(verdict, detections=[])  # a failed project check stays
    notes = [f"bug {d.name} not caught in this shard's {d.runs} run(s): "
             "`kchaos nightly merge` judges it over every shard" for d in verdict.undetected]
    return fixed.ok, fixed.reasons(), notes
