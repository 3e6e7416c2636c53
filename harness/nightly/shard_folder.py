"""A shard's folder read back and checked, alone and beside the other shards, for
`kchaos nightly merge` (merge.py). Every refusal is a UsageError: one line, exit 254, and
nothing written.

A shard folder is what `kchaos nightly --shard I/N` wrote: `shard.json` (shard.py) and
`nightly.json` (command.py), with the run folders it names beside it, in the same results
folder, as on the machine that ran it. Its project checks (those shard.json says it holds)
are checked as its cells are: each reported once in nightly.json, none it does not hold.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.nightly.matrix import Cell
from harness.nightly.shard import SHARD_FORMAT, SHARD_JSON, SHARD_KIND, Shard, cell_of, doc_hash
from harness.report.nightlies import NIGHTLY_JSON, CheckRecord

RUN_LISTS = ("not_started", "not_started_no_engine")  # nightly.json's cells that never ran
STAMP = re.compile(r"\d{8}T\d{6}")  # time.strftime('%Y%m%dT%H%M%S'), as nightly names folders
WHAT_TO_PASS = "pass the nightly-*-shard-I-of-N folders `kchaos nightly --shard I/N` wrote"


class _Damaged(ValueError):
    """What is wrong inside one file; the caller names the file."""


@dataclass(frozen=True)
class ShardRun:
    index: int  # in the matrix
    entry: dict[str, Any]  # as the shard's nightly.json has it
    folder: Path | None  # the run folder found beside the shard's folder


@dataclass(frozen=True)
class ShardFolder:
    path: Path
    shard: Shard
    matrix_hash: str
    cells: tuple[Cell, ...]  # the whole matrix's, in order
    held: tuple[int, ...]  # the cells this shard holds (indexes into `cells`)
    stamp: str  # the shard's folder stamp, YYYYmmddTHHMMSS
    nightly: dict[str, Any]
    runs: tuple[ShardRun, ...]
    left: dict[str, tuple[int, ...]]  # RUN_LISTS -> cells
    checks: tuple[str, ...] = ()  # the whole matrix's project checks (names), in order
    held_checks: tuple[int, ...] = ()  # those this shard holds (indexes into `checks`)
    check_records: tuple[tuple[int, CheckRecord], ...] = ()  # as its nightly.json has them

    @property
    def interrupted(self) -> bool:
        return self.nightly.get("interrupted") is True


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise _Damaged(f"unreadable: {exc}") from exc
    except ValueError as exc:
        raise _Damaged(f"not JSON: {exc}") from exc


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise _Damaged(what)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _indexes(raw: Any, size: int, what: str) -> tuple[int, ...]:
    _need(isinstance(raw, list) and all(_int(i) and 0 <= i < size for i in raw)
          and raw == sorted(set(raw)), f"its {what} are not indexes of the matrix")
    return tuple(raw)


def _checks(matrix: dict[str, Any], doc: dict[str, Any]) -> tuple[tuple[str, ...],
                                                                  tuple[int, ...]]:
    """The matrix's project checks (names) and those the shard holds; none in a shard
    record from before them."""
    raw = matrix.get("project_checks", [])
    _need(isinstance(raw, list) and all(isinstance(c, dict) and isinstance(c.get("name"), str)
                                        for c in raw), "its project checks are damaged")
    names = tuple(str(c["name"]) for c in raw)
    _need(len(set(names)) == len(names), "a project check is named twice")
    return names, _indexes(doc.get("project_checks", []), len(names), "project checks")


Record = tuple[Shard, str, tuple[Cell, ...], tuple[int, ...], str, tuple[str, ...],
               tuple[int, ...]]


def _record(path: Path) -> Record:
    doc = _load(path)
    _need(isinstance(doc, dict) and doc.get("kind") == SHARD_KIND, "not a shard record")
    _need(doc.get("format") == SHARD_FORMAT,
          f"format {doc.get('format')!r}, this kchaos reads {SHARD_FORMAT}")
    index, count = doc.get("index"), doc.get("count")
    _need(_int(index) and _int(count) and 1 <= index <= count, "no shard I/N")
    matrix = doc.get("matrix")
    _need(isinstance(matrix, dict) and isinstance(matrix.get("cells"), list), "no matrix")
    try:
        cells = tuple(cell_of(c) for c in matrix["cells"])
    except ValueError as exc:
        raise _Damaged(str(exc)) from None
    _need(doc_hash(matrix) == doc.get("matrix_hash"), "the matrix does not match its hash")
    held = list(_indexes(doc.get("cells"), len(cells), "cells"))
    stamp = doc.get("stamp")
    _need(isinstance(stamp, str) and STAMP.fullmatch(stamp) is not None, "no stamp")
    names, held_checks = _checks(matrix, doc)
    return (Shard(index, count), str(doc["matrix_hash"]), cells, tuple(held), stamp, names,
            held_checks)


def _run_folder(shard_dir: Path, recorded: str) -> Path | None:
    """Beside the shard's folder first (a results folder copied whole from the machine that
    ran it), else where it was recorded; None when it is in neither place."""
    name = Path(recorded).name
    if name in ("", ".", ".."):
        return None
    for candidate in (shard_dir.parent / name, Path(recorded)):
        if candidate.is_dir():
            return candidate
    return None


def _runs(
    doc: Any, shard: Shard, cells: Sequence[Cell], held: Sequence[int]
) -> tuple[tuple[ShardRun, ...], dict[str, tuple[int, ...]]]:
    _need(isinstance(doc, dict) and isinstance(doc.get("runs"), list), "no list of runs")
    where = {cell: i for i, cell in enumerate(cells)}
    seen: set[int] = set()

    def index(raw: Any) -> int:
        try:
            cell = cell_of(raw)
        except ValueError as exc:
            raise _Damaged(str(exc)) from None
        i = where.get(cell, -1)
        _need(i in held, f"`{cell.name}` is not a cell of shard {shard}")
        _need(i not in seen, f"`{cell.name}` is there twice")
        seen.add(i)
        return i

    runs = []
    for entry in doc["runs"]:
        _need(isinstance(entry, dict), "a run that is not an object")
        code, took = entry.get("exit_code"), entry.get("duration_s")
        _need(code is None or _int(code), "an exit code that is not a number")
        _need(_int(took) or isinstance(took, float), "a run without its duration")
        _need(isinstance(entry.get("run_dir", ""), str), "a run folder that is not a path")
        runs.append(ShardRun(index(entry.get("cell")), entry, None))
    left = {}
    for key in RUN_LISTS:
        raw = doc.get(key) or []
        _need(isinstance(raw, list), f"{key} is not a list")
        left[key] = tuple(index(c) for c in raw)
    missing = [cells[i].name for i in held if i not in seen]
    _need(not missing, f"says nothing of {'; '.join(missing[:3])}")
    return tuple(runs), left


def _check_records(doc: dict[str, Any], shard: Shard, names: Sequence[str],
                   held: Sequence[int]) -> tuple[tuple[int, CheckRecord], ...]:
    raw = doc.get("project_checks") or []
    _need(isinstance(raw, list), "project_checks is not a list")
    found: dict[int, CheckRecord] = {}
    for entry in raw:
        try:
            record = CheckRecord.from_json(entry)
        except ValueError as exc:
            raise _Damaged(str(exc)) from None
        i = names.index(record.name) if record.name in names else -1
        _need(i in held, f"project check `{record.name}` is not one of shard {shard}")
        _need(i not in found, f"project check `{record.name}` is there twice")
        found[i] = record
    missing = [names[i] for i in held if i not in found]
    _need(not missing, f"says nothing of project check {', '.join(missing)}")
    return tuple(sorted(found.items(), key=lambda item: item[0]))


def read_shard(path: Path) -> ShardFolder:
    if not path.is_dir():
        raise UsageError(f"{path} is not a folder: {WHAT_TO_PASS}")
    record, nightly = path / SHARD_JSON, path / NIGHTLY_JSON
    if not record.is_file():
        if nightly.is_file():
            raise UsageError(f"{path} is a whole nightly, not a shard (no {SHARD_JSON}): "
                             f"{WHAT_TO_PASS}")
        raise UsageError(f"{path} is not a nightly shard (no {SHARD_JSON}): {WHAT_TO_PASS}")
    try:
        shard, hashed, cells, held, stamp, names, held_checks = _record(record)
    except _Damaged as exc:
        raise UsageError(f"{record} is damaged ({exc}): run that shard again") from None
    again = f"run `kchaos nightly --shard {shard}` again"
    if not nightly.is_file():
        raise UsageError(f"shard {shard} in {path} did not finish (no {NIGHTLY_JSON}): {again}")
    try:
        doc = _load(nightly)
        runs, left = _runs(doc, shard, cells, held)
        records = _check_records(doc, shard, names, held_checks)
    except _Damaged as exc:
        raise UsageError(f"{nightly} is damaged ({exc}): {again}") from None
    found = []
    for run in runs:
        recorded = str(run.entry.get("run_dir") or "")
        folder = _run_folder(path, recorded) if recorded else None
        if recorded and folder is None:
            raise UsageError(
                f"the run folder {Path(recorded).name} of shard {shard} is not beside {path}: "
                "copy the shard's whole results folder (its runs sit beside its nightly folder)")
        found.append(ShardRun(run.index, run.entry, folder))
    return ShardFolder(path, shard, hashed, cells, held, stamp, doc, tuple(found), left,
                       names, held_checks, records)


def _names(cells: Sequence[Cell], indexes: Sequence[int], most: int = 10) -> str:
    names = [f"`{cells[i].name}`" for i in indexes[:most]]
    more = f" and {len(indexes) - most} more" if len(indexes) > most else ""
    return "; ".join(names) + more


def check_together(shards: Sequence[ShardFolder], partial: bool) -> tuple[list[int], list[int]]:
    """The cells and the project checks of the matrix no shard holds (allowed only with
    `partial`); a UsageError for shards of different matrices or splits, a shard given
    twice, a cell or check in two."""
    first = shards[0]
    for other in shards[1:]:
        if other.matrix_hash != first.matrix_hash:
            raise UsageError(
                f"{first.path} holds a shard of matrix {first.matrix_hash} and {other.path} "
                f"one of matrix {other.matrix_hash}: merge the shards of one nightly")
        if other.shard.count != first.shard.count:
            raise UsageError(
                f"{first.path} is shard {first.shard} and {other.path} shard {other.shard}: "
                "merge the shards of one split (one N)")
    by_shard: dict[int, ShardFolder] = {}
    for s in shards:
        if s.shard.index in by_shard:
            raise UsageError(f"shard {s.shard} is given twice ({by_shard[s.shard.index].path} "
                             f"and {s.path}): pass one folder per shard")
        by_shard[s.shard.index] = s
    holder: dict[int, ShardFolder] = {}
    for s in shards:
        twice = [i for i in s.held if i in holder]
        if twice:  # only shards from different kchaos versions could
            raise UsageError(
                f"shards {holder[twice[0]].shard} and {s.shard} both hold "
                f"{_names(first.cells, twice)}: run every shard with one kchaos version")
        holder.update((i, s) for i in s.held)
    checker: dict[int, ShardFolder] = {}
    for s in shards:
        twice = [i for i in s.held_checks if i in checker]
        if twice:
            raise UsageError(
                f"shards {checker[twice[0]].shard} and {s.shard} both hold project check "
                f"`{first.checks[twice[0]]}`: run every shard with one kchaos version")
        checker.update((i, s) for i in s.held_checks)
    missing = [i for i in range(len(first.cells)) if i not in holder]
    missing_checks = [i for i in range(len(first.checks)) if i not in checker]
    if (missing or missing_checks) and not partial:
        absent = [str(Shard(k, first.shard.count)) for k in range(1, first.shard.count + 1)
                  if k not in by_shard]
        checks = ", ".join(f"`{first.checks[i]}`" for i in missing_checks)
        raise UsageError(
            f"shard(s) {', '.join(absent) or '?'} of matrix {first.matrix_hash} missing, "
            f"{len(missing)} cell(s) not run: {_names(first.cells, missing) or '-'}"
            f"{'; project check(s) not run: ' + checks if checks else ''}; pass their "
            "folders too, or --partial to merge without them (no verdict then)")
    return missing, missing_checks
