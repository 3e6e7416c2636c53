"""`kchaos nightly merge` of the two shards gives the nightly one machine would have
written over the same cells: the same runs in the same order, verdicts, detection table,
false positives, JUnit counts and coverage (everything but times and folder names)."""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from sharded_fakes import Nightlies, run_nightly, tree_digest

from harness.nightly import load_matrix
from harness.nightly.command import NIGHTLY_JUNIT
from harness.nightly.merge import merge
from harness.nightly.shard import SHARD_JSON, Shard, matrix_hash, shard_cells
from harness.report.nightlies import markdown_table, read_nightly


def _runs(folder: Path) -> list[tuple[object, ...]]:
    n = read_nightly(folder)
    return [(r.name, r.exit_code, r.summary.outcome if r.summary else None,
             r.summary.anomalies_text if r.summary else None) for r in n.runs]


def _table(folder: Path) -> list[str]:
    """nightly.md without its first line (folder name, wall time) and the time column."""
    lines = markdown_table(read_nightly(folder)).splitlines()[1:]
    return [re.sub(r"\| [^|]* \|$", "|", ln) if ln.count("|") == 8 else ln for ln in lines]


def _doc(folder: Path) -> dict[str, object]:
    doc = json.loads((folder / "nightly.json").read_text())
    reasons = [re.sub(r": \S+ \(", ": RUN (", r) for r in doc["reasons"]]
    return {"ok": doc["ok"], "reasons": reasons, "interrupted": doc["interrupted"],
            "not_started": doc["not_started"], "runs": [r["cell"] for r in doc["runs"]]}


def _junit(path: Path) -> dict[str, str | None]:
    root = ET.parse(path).getroot()
    return {k: root.get(k) for k in ("tests", "failures", "errors")}


def test_each_shard_records_its_share_of_which_matrix(nightlies: Nightlies) -> None:
    matrix = load_matrix(nightlies.matrix)
    held = []
    for k, folder in enumerate(nightlies.shards, start=1):
        assert folder.name.endswith(f"-shard-{k}-of-2")
        record = json.loads((folder / SHARD_JSON).read_text())
        assert record["shard"] == f"{k}/2" and record["matrix_hash"] == matrix_hash(matrix)
        assert record["cells"] == shard_cells(matrix, Shard(k, 2))
        runs = json.loads((folder / "nightly.json").read_text())["runs"]
        assert [r["cell"]["profile"] for r in runs] == [
            matrix.cells[i].profile for i in record["cells"]]
        held += record["cells"]
    assert sorted(held) == list(range(len(matrix.cells))) == list(range(9))


def test_a_shard_leaves_detection_to_the_merge(nightlies: Nightlies) -> None:
    # Shard 2 holds two KAFKA-7672 runs and caught it in neither: not its failure to judge.
    assert nightlies.shard_codes == (0, 0)
    doc = json.loads((nightlies.shards[1] / "nightly.json").read_text())
    assert doc["ok"] is True and doc["reasons"] == []
    assert [r["exit_code"] for r in doc["runs"] if r["cell"]["bugs"]] == [0, 0]


def test_merge_of_two_shards_is_the_unsharded_nightly(
    nightlies: Nightlies, tmp_path: Path
) -> None:
    inputs = {p: tree_digest(p.parent) for p in nightlies.shards}
    out = tmp_path / "results"
    assert merge(list(reversed(nightlies.shards)), out) == nightlies.whole_code == 0
    (merged,) = [p for p in out.glob("nightly-*") if p.is_dir()]
    assert _runs(merged) == _runs(nightlies.whole)
    assert len(_runs(merged)) == 9 and all(r[2] is not None for r in _runs(merged))
    assert _table(merged) == _table(nightlies.whole)
    assert "| `KAFKA-7672` | 5 | 1 | 1 | 0 of 2 |" in _table(merged)
    assert _doc(merged) == _doc(nightlies.whole)
    whole, joined = read_nightly(nightlies.whole), read_nightly(merged)
    assert joined.judgement.detections == whole.judgement.detections and joined.judgement.ok
    assert [d.name for d in joined.judgement.detections] == ["KAFKA-7672"]
    assert (joined.false_positives, joined.fixed_runs) == (whole.false_positives, 4)
    for name in ("coverage.json", "coverage.md"):
        assert (merged / name).read_text() == (nightlies.whole / name).read_text()
    assert _junit(merged / "junit.xml") == _junit(nightlies.whole / "junit.xml")
    assert _junit(out / NIGHTLY_JUNIT) == _junit(nightlies.whole / "junit.xml")
    # The page links every run's report, copied beside it; the index lists the nightly.
    page = (merged / "nightly.html").read_text()
    links = re.findall(r'href="(\.\./[^"]+/report\.html)"', page)
    assert len(links) == 9 and all((merged / link).resolve().is_file() for link in links)
    assert "nightly passed" in page
    assert merged.name in (out / "index.html").read_text()
    record = json.loads((merged / "nightly.json").read_text())
    assert [m["shard"] for m in record["merged_from"]] == ["1/2", "2/2"]
    assert (merged / "shards" / "2-of-2" / SHARD_JSON).is_file()
    assert not list(out.glob(".merging-*"))
    assert {p: tree_digest(p.parent) for p in nightlies.shards} == inputs  # untouched


def test_merge_fails_when_a_shard_has_a_false_positive(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text("time_limit_s: 1\nprofiles: [all]\nseeds: [1, 2]\n")
    outcomes: dict[str, object] = {"all/2/fixed": 1}
    shards = [run_nightly(tmp_path / f"m{k}", matrix, outcomes, Shard(k, 2)) for k in (1, 2)]
    assert [code for code, _ in shards] == [0, 1]  # a fixed-worker failure fails its shard
    assert merge([folder for _, folder in shards], tmp_path / "out") == 1
    doc = json.loads(next((tmp_path / "out").glob("nightly-*/nightly.json")).read_text())
    assert doc["ok"] is False and "fixed worker invalid: " in doc["reasons"][0]


def test_partial_merge_needs_the_flag_and_gives_no_verdict(
    nightlies: Nightlies, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results"
    assert merge([nightlies.shards[0]], out, partial=True) == 2
    (merged,) = [p for p in out.glob("nightly-*") if p.is_dir()]
    doc = json.loads((merged / "nightly.json").read_text())
    assert len(doc["runs"]) == 5 and len(doc["not_started_missing_shard"]) == 4
    assert doc["ok"] is False
    assert len(read_nightly(merged).not_started) == 4
    assert "partial merge" in capsys.readouterr().out


def test_run_folders_of_two_machines_with_one_name_both_stay(
    nightlies: Nightlies, tmp_path: Path
) -> None:
    """Two machines may name a run folder alike (same second, same profile and seed)."""
    import shutil

    copies = [Path(shutil.copytree(p.parent, tmp_path / f"m{k}" / "results")) / p.name
              for k, p in enumerate(nightlies.shards)]
    doc1 = json.loads((copies[0] / "nightly.json").read_text())
    doc2 = json.loads((copies[1] / "nightly.json").read_text())
    one, two = Path(doc1["runs"][0]["run_dir"]).name, Path(doc2["runs"][0]["run_dir"]).name
    (copies[1].parent / two).rename(copies[1].parent / one)
    doc2["runs"][0]["run_dir"] = str(copies[1].parent / one)
    (copies[1] / "nightly.json").write_text(json.dumps(doc2))
    out = tmp_path / "out"
    assert merge(copies, out) == 0
    (merged,) = [p for p in out.glob("nightly-*") if p.is_dir()]
    dirs = [Path(r["run_dir"]) for r in json.loads((merged / "nightly.json").read_text())["runs"]]
    assert len({d.name for d in dirs}) == 9 and all(d.is_dir() for d in dirs)
    assert _runs(merged) == _runs(nightlies.whole)


def test_an_empty_shard_runs_nothing_and_passes(nightlies: Nightlies, tmp_path: Path) -> None:
    code, folder = run_nightly(tmp_path / "results", nightlies.matrix, {}, Shard(12, 12))
    assert code == 0
    assert json.loads((folder / SHARD_JSON).read_text())["cells"] == []
    assert json.loads((folder / "nightly.json").read_text())["runs"] == []
