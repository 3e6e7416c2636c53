"""What `kchaos nightly merge` refuses, each as one line on stderr and exit 254, with
nothing written and the inputs untouched: folders that are no shard, damaged shards,
shards of other matrices or splits, a shard twice, missing shards, an --out that would mix
a shard into the merged index or hold the merge already. And a merge that fails half-way
(a full disk) leaves nothing behind."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from sharded_fakes import Nightlies, tree_digest

from harness.cli import main
from harness.errors import UsageError
from harness.nightly import merge as merge_module
from harness.nightly.shard import SHARD_JSON, doc_hash
from harness.report.nightlies import NIGHTLY_JSON


class Case:
    """Copies of both shards' results folders, for one refusal to damage."""

    def __init__(self, nightlies: Nightlies, tmp: Path) -> None:
        self.shards = [
            Path(shutil.copytree(s.parent, tmp / f"machine-{k}" / "results")) / s.name
            for k, s in enumerate(nightlies.shards, start=1)]
        self.whole = nightlies.whole
        self.out = tmp / "merged"
        self.tmp = tmp
        for k in (0, 1):  # as a CI runner records them (`results/...`), not found from here
            doc = self.json(k, "nightly.json")
            for run in doc["runs"]:
                run["run_dir"] = f"results/{Path(run['run_dir']).name}"
            self.put(k, "nightly.json", doc)

    def json(self, shard: int, name: str) -> Any:
        return json.loads((self.shards[shard] / name).read_text())

    def put(self, shard: int, name: str, doc: object) -> None:
        (self.shards[shard] / name).write_text(json.dumps(doc))

    def run_dir(self, shard: int, n: int = 0) -> Path:
        runs = self.json(shard, NIGHTLY_JSON)["runs"]
        return self.shards[shard].parent / Path(runs[n]["run_dir"]).name


def _edit_record(case: Case, shard: int, change: Callable[[dict[str, Any]], None],
                 rehash: bool) -> list[Path]:
    record: dict[str, Any] = case.json(shard, SHARD_JSON)
    change(record)
    if rehash:
        record["matrix_hash"] = doc_hash(record["matrix"])
    case.put(shard, SHARD_JSON, record)
    return case.shards


def _slower(record: dict[str, Any]) -> None:
    record["matrix"]["time_limit_s"] = 90


def _other_split(record: dict[str, Any]) -> None:
    record.update(index=2, count=3, shard="2/3")


def _write(case: Case, shard: int, name: str, text: str) -> list[Path]:
    (case.shards[shard] / name).write_text(text)
    return case.shards


def _unfinished(case: Case) -> list[Path]:
    (case.shards[1] / NIGHTLY_JSON).unlink()
    return case.shards


def _foreign_cell(case: Case) -> list[Path]:
    doc: dict[str, Any] = case.json(1, NIGHTLY_JSON)
    doc["runs"][0]["cell"]["seed"] = 99
    case.put(1, NIGHTLY_JSON, doc)
    return case.shards


def _run_folder_left_behind(case: Case) -> list[Path]:
    shutil.rmtree(case.run_dir(1, 1))
    return case.shards


# name -> (what to do to the copies; returns the folders to merge), words of the one line
CASES: dict[str, tuple[Callable[[Case], list[Path]], str]] = {
    "absent folder": (lambda c: [c.shards[0], c.tmp / "absent"], "is not a folder"),
    "a run folder": (lambda c: [c.shards[0], c.run_dir(1)], "is not a nightly shard"),
    "a whole nightly": (lambda c: [c.shards[0], c.whole], "is a whole nightly, not a shard"),
    "corrupt shard.json": (lambda c: _write(c, 1, SHARD_JSON, '{"kind": "kch'),
                           "shard.json is damaged (not JSON"),
    "edited matrix": (lambda c: _edit_record(c, 1, _slower, rehash=False),
                      "does not match its hash"),
    "unfinished shard": (_unfinished, "did not finish (no nightly.json): run `kchaos nightly "
                                      "--shard 2/2` again"),
    "corrupt nightly.json": (lambda c: _write(c, 0, NIGHTLY_JSON, '{"runs": [{"ce'),
                             "nightly.json is damaged (not JSON"),
    "runs not a list": (lambda c: _write(c, 0, NIGHTLY_JSON, '{"runs": "garbage"}'),
                        "nightly.json is damaged (no list of runs)"),
    "a cell of no shard": (_foreign_cell, "is not a cell of shard 2/2"),
    "run folder left behind": (_run_folder_left_behind, "copy the shard's whole results folder"),
    "another matrix": (lambda c: _edit_record(c, 1, _slower, rehash=True),
                       "merge the shards of one nightly"),
    "another split": (lambda c: _edit_record(c, 1, _other_split, rehash=False),
                      "is shard 1/2 and"),
    "a shard twice": (lambda c: [c.shards[0], c.shards[0]], "shard 1/2 is given twice"),
    "a missing shard": (lambda c: [c.shards[0]], "shard(s) 2/2 of matrix"),
}


def _merge_cli(dirs: list[Path], out: Path, capsys: pytest.CaptureFixture[str]
               ) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["nightly", "merge", *map(str, dirs), "--out", str(out)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name", list(CASES))
def test_refused_in_one_line_with_nothing_written(
    name: str, nightlies: Nightlies, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = Case(nightlies, tmp_path)
    damage, words = CASES[name]
    dirs = damage(case)
    before = {p: tree_digest(p) for p in (tmp_path, nightlies.whole.parent)}
    code, err = _merge_cli(dirs, case.out, capsys)
    assert code == 254, err
    assert len(err.strip().splitlines()) == 1 and words in err, err
    assert not case.out.exists()
    assert {p: tree_digest(p) for p in before} == before


def test_missing_shard_names_its_cells_and_the_flag(
    nightlies: Nightlies, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = Case(nightlies, tmp_path)
    code, err = _merge_cli([case.shards[1]], case.out, capsys)
    assert code == 254
    assert "shard(s) 1/2 of matrix" in err and "5 cell(s) not run" in err
    assert "`move seed 1 bugs KAFKA-7672`" in err and "--partial" in err


def test_out_must_not_hold_a_shard_nor_the_merge_already(
    nightlies: Nightlies, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = Case(nightlies, tmp_path)
    code, err = _merge_cli(case.shards, case.shards[0].parent, capsys)
    assert code == 254 and "holds the shard folder" in err
    assert _merge_cli(case.shards, case.out, capsys)[0] == 0
    listing = sorted(p.name for p in case.out.iterdir())
    code, err = _merge_cli(case.shards, case.out, capsys)
    assert code == 254 and "exists already (merged before?)" in err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in case.out.iterdir()) == listing


def test_a_merge_that_fails_half_way_leaves_nothing(
    nightlies: Nightlies, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = Case(nightlies, tmp_path)
    copies: list[Path] = []
    real = shutil.copytree

    def full_disk(src: Path, dst: Path, *args: object, **kw: object) -> object:
        if Path(dst).parent.name.startswith(".merging-"):  # a run folder, not its insides
            copies.append(Path(dst))
            if len(copies) == 5:
                raise OSError(28, "No space left on device")
        return real(src, dst, *args, **kw)  # type: ignore[arg-type]  # shutil's own call

    monkeypatch.setattr(merge_module.shutil, "copytree", full_disk)
    with pytest.raises(UsageError, match="No space left on device"):
        merge_module.merge(case.shards, case.out)
    assert not case.out.exists()
    real_rename = merge_module.os.rename
    renames: list[object] = []

    def fail_on_the_folder(src: Path, dst: Path) -> None:
        if Path(dst).name.startswith("nightly-"):
            raise OSError(28, "No space left on device")
        renames.append(dst)
        real_rename(src, dst)

    monkeypatch.setattr(merge_module.shutil, "copytree", real)
    monkeypatch.setattr(merge_module.os, "rename", fail_on_the_folder)
    case.out.mkdir()
    with pytest.raises(UsageError, match="No space left on device"):
        merge_module.merge(case.shards, case.out)
    assert len(renames) == 18 and list(case.out.iterdir()) == []  # 9 runs in, then back
