"""What a newcomer met on the first day: a damaged history file, a mistyped folder for
`kchaos clean`, a damaged results.json given to `kchaos report`. Each is one line naming
the file or folder, the right exit code, and nothing already collected is lost."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import assert_bad_input, kchaos

from checker.schema import META_FILE


def _run_folder(results: Path) -> Path:
    run_dir = results / "20261126T000000-kill-s1"
    (run_dir / "history").mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps({"run_id": run_dir.name, "exit_code": 0}))
    (run_dir / "history" / META_FILE).write_text(json.dumps({"guarantee": "exactly_once_v2"}))
    return run_dir


def test_check_names_a_damaged_history_file_in_one_line(tmp_path: Path) -> None:
    run_dir = _run_folder(tmp_path / "results")
    damaged = run_dir / "history" / "input.parquet"
    damaged.write_bytes(b"PAR1 this is not a parquet file")
    result = kchaos("check", str(run_dir), cwd=tmp_path)
    assert result.returncode == 2, result.stderr  # unknown
    said = [line for line in result.stdout.splitlines() if "verdict" in line]
    assert len(said) == 1 and "UNKNOWN" in said[0] and str(damaged) in said[0], result.stdout
    assert "Traceback" not in result.stderr and "at org.apache" not in result.stderr
    assert damaged.read_bytes() == b"PAR1 this is not a parquet file"  # nothing lost
    checks = json.loads((run_dir / "results.json").read_text())["checks"]
    assert all(str(damaged) in c["error"] for c in checks.values())


def test_clean_of_a_folder_that_is_not_there_is_bad_input(tmp_path: Path) -> None:
    result = kchaos("clean", str(tmp_path / "no" / "such" / "folder"), cwd=tmp_path)
    assert_bad_input(result, "no such run folder", str(tmp_path / "no" / "such" / "folder"))


def test_report_on_a_damaged_results_json_writes_the_page_and_says_so(tmp_path: Path) -> None:
    run_dir = _run_folder(tmp_path / "results")
    (run_dir / "results.json").write_text('{"verdict": tr')
    result = kchaos("report", str(run_dir), cwd=tmp_path)
    assert_bad_input(result, str(run_dir / "results.json"), "damaged", "kchaos check")
    page = (run_dir / "report.html").read_text()
    assert "results.json" in page and "damaged" in page
    assert (run_dir / "results.json").read_text() == '{"verdict": tr'  # nothing lost
