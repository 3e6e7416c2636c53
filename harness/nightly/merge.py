"""`kchaos nightly merge SHARD_DIR... [--out DIR] [--partial]`: the shards of one nightly
(`kchaos nightly --shard I/N` on N machines) joined into one nightly folder, as if one
machine had run the whole matrix: `OUT/nightly-<first shard's stamp>/` with the runs in
matrix order, the run folders copied beside it, its nightly.json, JUnit file, coverage
table, page and Markdown table, and `OUT/index.html`.

Every check comes first (shard_folder.py): a folder that is no shard, a damaged one, shards
of different matrices or splits, a shard given twice, cells or project checks no shard ran
(unless `--partial`). A refusal is one line and exit 254, with nothing written. The inputs are only
read: runs are copied, and OUT may not be a shard's results folder. The copy is built in a
hidden folder of OUT and moved into place once complete.

Exit code: the nightly's over all cells: 0 passed, 1 failed; 2 when no verdict is possible
(a shard was interrupted, no run at all, or a `--partial` merge that found no failure).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.console import out
from harness.errors import EXIT_INVALID, EXIT_UNKNOWN, EXIT_VALID, UsageError
from harness.nightly.matrix import Cell
from harness.nightly.project_checks import add_to_junit
from harness.nightly.shard_folder import (
    RUN_LISTS,
    WHAT_TO_PASS,
    ShardFolder,
    check_together,
    read_shard,
)
from harness.nightly.table import LOG_WIDTH, detections_table
from harness.report.expect import LostRun
from harness.report.junit import JUNIT_FILE, write_junit
from harness.report.nightlies import (
    NIGHTLY_JSON,
    NIGHTLY_PAGE,
    NIGHTLY_TABLE,
    NOT_STARTED,
    CheckRecord,
    Nightly,
    read_nightly,
)
from harness.report.summary import parse_time
from harness.results import write_json

SHARDS_DIR = "shards"  # in the merged folder: each shard's own files (logs, nightly.json)


def _check_out(out_dir: Path, shards: Sequence[ShardFolder], name: str) -> None:
    target = out_dir.resolve()
    for s in shards:
        here = s.path.resolve()
        if target == here.parent or target.is_relative_to(here):
            raise UsageError(f"--out {out_dir} holds the shard folder {s.path}: merge into a "
                             "results folder of its own (the inputs stay as they are)")
    if (out_dir / name).exists():
        raise UsageError(f"{out_dir / name} exists already (merged before?): pass another "
                         "--out, or remove it to merge again")


def _when(values: list[Any], latest: bool) -> str | None:
    times = [t for t in (parse_time(v) for v in values) if t is not None]
    chosen = (max if latest else min)(times, default=None)
    return chosen.isoformat(timespec="seconds") if chosen else None


def _free_name(name: str, taken: set[str]) -> str:
    """Run folders of different machines may share a name (one second, one profile)."""
    unique, n = name, 0
    while unique in taken:
        n += 1
        unique = f"{name}-{n}"
    taken.add(unique)
    return unique


def _shard_dir(s: ShardFolder) -> str:
    """Where a shard's own files go in the merged nightly's folder."""
    return f"{SHARDS_DIR}/{s.shard.index}-of-{s.shard.count}"


def _checks(shards: Sequence[ShardFolder], missing: list[int]) -> list[dict[str, Any]]:
    """Every project check of the matrix in order: each shard's record, its log now under
    the shard's folder in the merged one; a check of a missing shard (--partial) not
    started."""
    by_index: dict[int, CheckRecord] = {}
    for s in shards:
        for i, record in s.check_records:
            log = f"{_shard_dir(s)}/{record.log}" if record.log else ""
            by_index[i] = dataclasses.replace(record, log=log)
    for i in missing:
        name = shards[0].checks[i]
        by_index[i] = CheckRecord(name, (), NOT_STARTED, note="its shard is missing")
    return [by_index[i].to_json() for i in sorted(by_index)]


def _plan(
    shards: Sequence[ShardFolder], missing: list[int], missing_checks: list[int], out_dir: Path
) -> tuple[dict[str, Any], list[tuple[Path, str]]]:
    """The merged nightly.json, and the run folders to copy (source, new name)."""
    cells = shards[0].cells
    taken = set(os.listdir(out_dir)) if out_dir.is_dir() else set()
    runs = sorted((r for s in shards for r in s.runs), key=lambda r: r.index)
    copies: list[tuple[Path, str]] = []
    entries = []
    for run in runs:
        entry = dict(run.entry)
        if run.folder is not None:
            copies.append((run.folder, _free_name(run.folder.name, taken)))
            entry["run_dir"] = str(out_dir / copies[-1][1])
        entries.append(entry)
    left = {key: sorted(i for s in shards for i in s.left[key]) for key in RUN_LISTS}
    budgets = [s.nightly.get("budget_s") for s in shards]
    doc: dict[str, Any] = {
        "started_at": _when([s.nightly.get("started_at") for s in shards], latest=False),
        "finished_at": _when([s.nightly.get("finished_at") for s in shards], latest=True),
        "budget_s": max((b for b in budgets if isinstance(b, int | float)), default=None),
        "runs": entries,
        # Cells of absent shards (--partial) are listed as not started, and on their own.
        "not_started": [_cell(cells, i) for i in sorted([*left["not_started"], *missing])],
        "not_started_no_engine": [_cell(cells, i) for i in left["not_started_no_engine"]],
        "not_started_missing_shard": [_cell(cells, i) for i in missing],
        "project_checks": _checks(shards, missing_checks),
        "interrupted": any(s.interrupted for s in shards),
        "matrix_hash": shards[0].matrix_hash,
        "shards": shards[0].shard.count,
        "merged_from": [{"shard": str(s.shard), "folder": str(s.path),
                         "started_at": s.nightly.get("started_at")}
                        for s in sorted(shards, key=lambda s: s.shard.index)],
    }
    return doc, copies


def _cell(cells: Sequence[Cell], i: int) -> dict[str, Any]:
    return dataclasses.asdict(cells[i])  # as the nightly writes its cells


def _lost(n: Nightly) -> list[LostRun]:
    return [LostRun(r.name, r.profile, r.seed, r.bugs,
                    f"{'stopped' if r.exit_code is None else f'exit {r.exit_code}'}: {r.note}")
            for r in n.runs if r.summary is None]


def _stage(stage: Path, name: str, shards: Sequence[ShardFolder], doc: dict[str, Any],
           copies: list[tuple[Path, str]]) -> None:
    """The run folders and the nightly's folder with its nightly.json, in `stage`."""
    for source, new in copies:
        shutil.copytree(source, stage / new, symlinks=True)
    folder = stage / name
    folder.mkdir()
    for s in shards:  # each shard's logs and records, for whoever digs
        shutil.copytree(s.path, folder / _shard_dir(s), symlinks=True,
                        ignore=shutil.ignore_patterns(NIGHTLY_PAGE, NIGHTLY_TABLE))
    write_json(folder / NIGHTLY_JSON, doc)
    verdict = read_nightly(folder).judgement  # reads the runs beside it, here in `stage`
    complete = not doc["interrupted"] and not doc["not_started_missing_shard"]
    doc.update(ok=verdict.ok and complete, reasons=verdict.reasons())
    write_json(folder / NIGHTLY_JSON, doc)


def merge(dirs: Sequence[Path], out_dir: Path, partial: bool = False) -> int:
    shards = [read_shard(Path(d)) for d in dirs]
    if not shards:
        raise UsageError(f"no shard folder given: {WHAT_TO_PASS}")
    missing, missing_checks = check_together(shards, partial)
    out_dir = Path(out_dir)
    name = f"nightly-{min(s.stamp for s in shards)}"
    _check_out(out_dir, shards, name)
    doc, copies = _plan(shards, missing, missing_checks, out_dir)
    stage = out_dir / f".merging-{name}-{os.getpid()}"
    made_out = not out_dir.exists()
    moved: list[str] = []
    try:
        stage.mkdir(parents=True)
        _stage(stage, name, shards, doc, copies)
        for new in [*(new for _, new in copies), name]:  # the nightly's folder last
            os.rename(stage / new, out_dir / new)
            moved.append(new)
    except BaseException as exc:
        _undo(stage, out_dir, moved, made_out)
        if isinstance(exc, OSError):
            raise UsageError(f"cannot write the merged nightly into {out_dir}: "
                             f"{exc.strerror or exc}; pass a writable --out") from exc
        raise
    with contextlib.suppress(OSError):
        stage.rmdir()
    return _finish(out_dir / name, doc, len(shards), bool(missing or missing_checks))


def _undo(stage: Path, out_dir: Path, moved: list[str], made_out: bool) -> None:
    """A merge that failed half-way leaves nothing: what it moved into --out goes back to
    its stage, the stage goes, and so does the --out it made."""
    for new in moved:
        with contextlib.suppress(OSError):
            os.rename(out_dir / new, stage / new)
    shutil.rmtree(stage, ignore_errors=True)
    if made_out:
        with contextlib.suppress(OSError):
            out_dir.rmdir()


def _finish(folder: Path, doc: dict[str, Any], given: int, partial: bool) -> int:
    """In place: the JUnit files (they name each run's report), the coverage table, the
    pages; then the verdict. The pages are one line when they fail, as in a nightly."""
    from harness.nightly.command import NIGHTLY_JUNIT
    from harness.report.coverage import nightly_coverage
    from harness.report.index import render_index
    from harness.report.nightly_page import render_nightly

    nightly = read_nightly(folder)
    judged = [r.summary for r in nightly.runs if r.summary]
    junit = write_junit(judged, folder / JUNIT_FILE, _lost(nightly))
    add_to_junit(junit, nightly.checks)
    shutil.copyfile(junit, folder.parent / NIGHTLY_JUNIT)
    nightly_coverage([s.run_dir for s in judged], folder, Console(width=LOG_WIDTH, quiet=True))
    pages = []
    for what, render in (("nightly page", render_nightly), ("index", render_index)):
        try:
            pages.append(f"{what}: {render(folder if what == 'nightly page' else folder.parent)}")
        except Exception as exc:
            pages.append(f"{what}: not written ({type(exc).__name__}: {exc})")
    verdict = nightly.judgement
    out.print(f"merged {given} shard(s) of {doc['shards']} (matrix {doc['matrix_hash']}): "
              f"{len(nightly.runs)} run(s) in {folder}", highlight=False, soft_wrap=True)
    out.print("\n".join([*pages, f"junit: {folder.parent / NIGHTLY_JUNIT}"]), highlight=False,
              soft_wrap=True)
    if verdict.detections:
        out.print(detections_table(verdict))
    for reason in verdict.reasons():
        out.print(f"[red]FAIL[/] {reason}", highlight=False)
    ran = bool(nightly.runs) or any(c.status != NOT_STARTED for c in nightly.checks)
    if doc["interrupted"] or not ran:
        out.print("[yellow]no verdict[/]: "
                  f"{'a shard was interrupted' if ran else 'no shard ran a run'}")
        return EXIT_UNKNOWN
    if not verdict.ok:
        return EXIT_INVALID
    if partial:
        out.print(f"[yellow]partial merge[/]: {len(doc['not_started_missing_shard'])} cell(s) "
                  "of the missing shard(s) not run: no verdict over the whole matrix")
        return EXIT_UNKNOWN
    checks = f" and {len(nightly.checks)} project check(s)" if nightly.checks else ""
    out.print(f"[green]nightly passed[/]: {len(nightly.runs)} run(s){checks}", highlight=False)
    return EXIT_VALID
