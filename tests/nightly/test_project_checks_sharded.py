"""Project checks across shards: each held by one shard, after every cell (so adding one
moves no cell); a shard runs and records its own; `kchaos nightly merge` carries them into
the merged nightly (logs under the shard's folder), judges them, and names those of a
missing shard."""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from sharded_fakes import run_nightly

from harness.errors import UsageError
from harness.nightly import load_matrix
from harness.nightly.merge import merge
from harness.nightly.project_checks import JUNIT_SUITE
from harness.nightly.shard import SHARD_JSON, Shard, matrix_doc, matrix_hash, shard_items
from harness.report.nightlies import NIGHTLY_JSON, read_nightly

PY = sys.executable
CELLS = {"time_limit_s": 1, "seeds": [1], "profiles": ["all", "kill", "move", "checkpoint"]}
CHECKS = [{"name": "good", "command": [PY, "-c", "print('ok')"], "timeout_s": 60},
          {"name": "bad", "command": [PY, "-c", "raise SystemExit(5)"], "timeout_s": 60}]


def _write(tmp: Path, doc: dict[str, Any]) -> Path:
    path = tmp / "matrix.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _checks(folder: Path) -> list[tuple[str, str, int | None]]:
    doc = json.loads((folder / NIGHTLY_JSON).read_text())
    return [(c["name"], c["status"], c["exit_code"]) for c in doc["project_checks"]]


def test_checks_are_shared_out_after_every_cell(tmp_path: Path) -> None:
    without = load_matrix(_write(tmp_path, CELLS))
    with_checks = load_matrix(_write(tmp_path, {**CELLS, "project_checks": CHECKS}))
    for count in (1, 2, 3, 7):
        shards = [shard_items(with_checks, Shard(k, count)) for k in range(1, count + 1)]
        assert [c for c, _ in shards] == [
            shard_items(without, Shard(k, count))[0] for k in range(1, count + 1)]
        assert sorted(i for _, checks in shards for i in checks) == [0, 1]
    # Two shards: a check each (the cells weigh 2 s apiece, a check its 60 s timeout).
    assert [shard_items(with_checks, Shard(k, 2))[1] for k in (1, 2)] == [[0], [1]]
    # A matrix without checks hashes as before them; one with checks does not.
    assert "project_checks" not in matrix_doc(without)
    assert matrix_hash(without) != matrix_hash(with_checks)


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("checks")
    matrix = _write(tmp, {**CELLS, "project_checks": CHECKS})
    whole = run_nightly(tmp / "whole" / "results", matrix, {"default": 0})
    first = run_nightly(tmp / "machine-1" / "results", matrix, {"default": 0}, Shard(1, 2))
    second = run_nightly(tmp / "machine-2" / "results", matrix, {"default": 0}, Shard(2, 2))
    return {"tmp": tmp, "whole": whole, "shards": (first, second)}


def test_each_shard_runs_and_records_its_own_check(sharded: dict[str, Any]) -> None:
    (code1, shard1), (code2, shard2) = sharded["shards"]
    assert [json.loads((s / SHARD_JSON).read_text())["project_checks"]
            for s in (shard1, shard2)] == [[0], [1]]
    assert _checks(shard1) == [("good", "passed", 0)] and code1 == 0
    assert _checks(shard2) == [("bad", "failed", 5)] and code2 == 1  # a check fails a shard


def test_the_merge_carries_and_judges_the_checks_as_one_machine_would(
    sharded: dict[str, Any], tmp_path: Path
) -> None:
    whole_code, whole = sharded["whole"]
    shards = [folder for _, folder in sharded["shards"]]
    out = tmp_path / "merged"
    code = merge(shards, out)
    (folder,) = [p for p in out.glob("nightly-*") if p.is_dir()]
    assert code == whole_code == 1
    assert _checks(folder) == _checks(whole) == [("good", "passed", 0), ("bad", "failed", 5)]
    merged = json.loads((folder / NIGHTLY_JSON).read_text())
    assert merged["ok"] is False and "project check bad failed (exit 5)" in merged["reasons"]
    logs = [c["log"] for c in merged["project_checks"]]
    assert logs == ["shards/1-of-2/check-good.log", "shards/2-of-2/check-bad.log"]
    assert (folder / logs[0]).read_text() == "ok\n"
    assert 'data-check="bad" data-status="failed"' in (folder / "nightly.html").read_text()
    root = ET.parse(folder / "junit.xml").getroot()
    (suite,) = [s for s in root if s.get("name") == JUNIT_SUITE]
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")


def test_a_missing_shard_s_check_is_named_and_partial_lists_it(
    sharded: dict[str, Any], tmp_path: Path
) -> None:
    _, shard1 = sharded["shards"][0]
    with pytest.raises(UsageError, match="project check\\(s\\) not run: `bad`"):
        merge([shard1], tmp_path / "refused")
    code = merge([shard1], tmp_path / "partial", partial=True)
    (folder,) = [p for p in (tmp_path / "partial").glob("nightly-*") if p.is_dir()]
    assert code == 2  # no failure among what ran, no verdict over the whole matrix
    checks = read_nightly(folder).checks
    assert [(c.name, c.status, c.note) for c in checks] == [
        ("good", "passed", ""), ("bad", "not started", "its shard is missing")]


def test_a_shard_that_says_nothing_of_its_check_is_refused(
    sharded: dict[str, Any], tmp_path: Path
) -> None:
    copies = []
    for k, (_, shard) in enumerate(sharded["shards"], start=1):
        results = Path(shutil.copytree(shard.parent, tmp_path / f"machine-{k}"))
        copies.append(results / shard.name)
    doc = json.loads((copies[1] / NIGHTLY_JSON).read_text())
    doc["project_checks"] = []
    (copies[1] / NIGHTLY_JSON).write_text(json.dumps(doc))
    with pytest.raises(UsageError, match="says nothing of project check bad"):
        merge(copies, tmp_path / "out")
    doc["project_checks"] = [{**_record("good"), "status": "passed"}]
    (copies[1] / NIGHTLY_JSON).write_text(json.dumps(doc))
    with pytest.raises(UsageError, match="project check `good` is not one of shard 2/2"):
        merge(copies, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def _record(name: str) -> dict[str, Any]:
    return {"name": name, "command": [], "status": "passed", "exit_code": 0,
            "duration_s": 1.0, "log": "", "note": ""}
