"""Coverage in the reports: the run page's table beside the timeline, the class x profile
table of results/index.html and of the nightly (synthetic run folders, no Kafka)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from rich.console import Console

from checker.coverage import coverage_section
from harness.report import render_report
from harness.report.coverage import coverage_table, nightly_coverage
from harness.report.index import render_index
from tests.report.synth_run import Spec, make_run


def _judged(results_dir: Path, name: str, profile: str) -> Path:
    """A synthetic run whose results.json carries coverage, as check_run writes it."""
    run_dir = make_run(results_dir, name, Spec(profile=profile))
    doc = json.loads((run_dir / "results.json").read_text())
    doc["coverage"] = coverage_section(run_dir)
    (run_dir / "results.json").write_text(json.dumps(doc))
    return run_dir


def test_run_page_lists_every_class_with_what_was_reached(tmp_path: Path) -> None:
    run_dir = _judged(tmp_path, "r1", "all")
    section = json.loads((run_dir / "results.json").read_text())["coverage"]
    assert section["reached"], "the synthetic run kills pod-1 after commits"
    page = render_report(run_dir).read_text()
    rows = dict(re.findall(r'data-class="([^"]+)".*?<span class="pill \w+">(yes|no)</span>',
                           page, flags=re.S))
    assert set(rows) == set(section["classes"])
    assert {c for c, shown in rows.items() if shown == "yes"} == set(section["reached"])
    assert page.index('id="timeline"') < page.index('id="coverage-table"')


def test_run_page_without_coverage_says_so(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "old", Spec())
    assert "no coverage in results.json" in render_report(run_dir).read_text()


def test_table_counts_runs_per_profile_and_skips_unjudged_runs(tmp_path: Path) -> None:
    runs = [_judged(tmp_path, "a1", "all"), _judged(tmp_path, "a2", "all"),
            _judged(tmp_path, "k1", "kill"), make_run(tmp_path, "old", Spec(profile="move"))]
    reached = json.loads((runs[0] / "results.json").read_text())["coverage"]["reached"]
    table = coverage_table(runs)
    assert table.profiles == ["all", "kill"]  # `all` first; the unjudged move run is not counted
    assert table.cell(reached[0], "all") == "2/2" and table.cell(reached[0], "kill") == "1/1"
    missed = next(c for c in table.classes if c not in reached)
    assert table.cell(missed, "all") == "0/2"
    assert f"| `{missed}` | 0/2 | 0/1 |" in table.to_markdown()
    index = render_index(tmp_path).read_text()
    assert re.search(rf'data-class="{re.escape(missed)}" class="v-unknown"', index)


def test_nightly_writes_and_prints_the_table(tmp_path: Path) -> None:
    runs = [_judged(tmp_path, "a1", "all")]
    console = Console(record=True, width=200)
    md = nightly_coverage(runs, tmp_path, console)
    assert md is not None and md.read_text().startswith("| class | all |")
    assert json.loads((tmp_path / "coverage.json").read_text())["runs"] == {"all": 1}
