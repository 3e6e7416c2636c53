"""The nightly's own page and README table (`nightly.html`, `nightly.md`) and the detection
rate per switch across nightlies on `results/index.html`, from nightlies run against the
fake `kchaos` (fake_kchaos.py): stored files only, rendered again by `kchaos report`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_nightly import TINY, _fake, _matrix

from harness.nightly import nightly
from harness.report.expect import LostRun, judge
from harness.report.index import render_index
from harness.report.nightlies import detection_rates, markdown_table, read_nightly


def _run_nightly(results: Path, tmp_path: Path, **outcomes: object) -> Path:
    nightly(results, 3600, _matrix(tmp_path, TINY), _fake(**outcomes))
    return max(p for p in results.glob("nightly-*") if p.is_dir())


@pytest.fixture(scope="module")
def two_nightlies(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A results folder with two nightlies: the first catches KAFKA-7672 in seed 2 only
    and has the fixed worker unknown in seed 2; the second catches it in both seeds."""
    tmp = tmp_path_factory.mktemp("nightlies")
    results = tmp / "results"
    first = _run_nightly(results, tmp, **{"all/2/KAFKA-7672": 1, "all/2/fixed": 2,
                                          "default": 0})
    second = _run_nightly(results, tmp, **{"KAFKA-7672": 1, "default": 0})
    assert first != second
    return results, first, second


def _copy(results: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(results, tmp_path / "results"))


def _row(html: str, table_id: str, key: str) -> str:
    table = html[html.index(f'id="{table_id}"'):]
    table = table[:table.index("</table>")]
    match = re.search(rf'<tr[^>]*data-switch="{re.escape(key)}".*?</tr>', table, re.S)
    assert match, f"no row {key} in {table_id}"
    return re.sub(r"<[^>]+>", " ", match.group(0))


def test_nightly_page_and_table(two_nightlies: tuple[Path, Path, Path]) -> None:
    # Caught in seed 2 only; the fixed worker unknown in seed 2: one false positive.
    _, log_dir, _ = two_nightlies
    page = (log_dir / "nightly.html").read_text()
    assert "nightly failed" in page
    assert re.search(r'id="false-positives">1<', page)
    # Its runs are `all`'s: the broad profile alone caught it in seed 2.
    assert _row(page, "detections", "KAFKA-7672").split() == [
        "KAFKA-7672", "2", "1", "2", "1", "of", "2", "(seeds", "2)", "caught", "in", "some",
        "runs"]
    assert "switches it ran with" in page
    # Each run links to its own report, a sibling of the nightly's folder.
    for href in re.findall(r'href="(\.\./[^"]+/report\.html)"', page):
        assert (log_dir / href).resolve().exists()
    assert len(re.findall(r'href="\.\./[^"]+/report\.html"', page)) == 4
    table = (log_dir / "nightly.md").read_text()
    assert "fixed-worker false positives: 1 of 2" in table
    assert "| `KAFKA-7672` | 2 | 1 | 2 | 1 of 2 (seeds 2) |" in table
    assert "(`all`, `soak`): 1 of 1 switches it ran with." in table
    assert table.count("| bug caught |") == 1 and table.count("| bug missed |") == 1
    assert "| all | 2 | - | - | fixed worker unknown |" in table


def test_detection_rate_across_nightlies_on_the_index(
    two_nightlies: tuple[Path, Path, Path],
) -> None:
    results, _, _ = two_nightlies  # caught 1 of 2, then 2 of 2
    nightlies = [read_nightly(d) for d in sorted(results.glob("nightly-*")) if d.is_dir()]
    assert len(nightlies) == 2
    (rate,) = detection_rates(nightlies)
    assert (rate.name, rate.runs, rate.caught, rate.nightlies, rate.rate) == (
        "KAFKA-7672", 4, 3, 2, "75%")
    assert (rate.broad_runs, rate.broad_caught, rate.broad_rate) == (4, 3, "75%")
    html = (results / "index.html").read_text()
    assert _row(html, "detection-rates", "KAFKA-7672").split() == [
        "KAFKA-7672", "4", "3", "75%", "3", "of", "4", "(75%)", "2"]
    assert html.count('href="nightly-') == 2


def test_damaged_nightly_costs_its_own_row(
    two_nightlies: tuple[Path, Path, Path], tmp_path: Path,
) -> None:
    results = _copy(two_nightlies[0], tmp_path)
    good = results / two_nightlies[2].name
    shutil.rmtree(results / two_nightlies[1].name)
    bad = results / "nightly-20000101T000000"
    bad.mkdir()
    (bad / "nightly.json").write_text("{not json")
    html = render_index(results).read_text()
    assert good.name in html and bad.name in html
    assert _row(html, "detection-rates", "KAFKA-7672").split()[1:3] == ["2", "2"]


def _kchaos(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args],
                          capture_output=True, text=True, timeout=120)


def test_report_renders_a_nightly_again(
    two_nightlies: tuple[Path, Path, Path], tmp_path: Path,
) -> None:
    log_dir = _copy(two_nightlies[0], tmp_path) / two_nightlies[2].name
    (log_dir / "nightly.html").unlink()
    (log_dir / "nightly.md").unlink()
    done = _kchaos("report", str(log_dir))
    assert done.returncode == 0, done.stderr
    assert (log_dir / "nightly.html").exists() and (log_dir / "nightly.md").exists()
    # A damaged nightly.json: one line saying what to do, 254, the rest untouched.
    doc = json.loads((log_dir / "nightly.json").read_text())
    (log_dir / "nightly.json").write_text(json.dumps({**doc, "runs": "garbage"}))
    done = _kchaos("report", str(log_dir))
    assert done.returncode == 254
    assert len(done.stderr.strip().splitlines()) == 1 and "kchaos nightly" in done.stderr
    assert (log_dir / "nightly.html").exists()


def test_the_run_an_interruption_stopped_is_not_judged(
    two_nightlies: tuple[Path, Path, Path], tmp_path: Path,
) -> None:
    log_dir = _copy(two_nightlies[0], tmp_path) / two_nightlies[2].name
    doc = json.loads((log_dir / "nightly.json").read_text())
    doc["runs"][-1].update(exit_code=None, note="stopped: interrupted")
    doc["runs"][-2].update(exit_code=None, note="stopped after 900 s")  # a hang: judged
    (log_dir / "nightly.json").write_text(json.dumps({**doc, "interrupted": True}))
    n = read_nightly(log_dir)
    assert [r.name for r in n.stopped] == ["all seed 2 bugs KAFKA-7672"]
    assert len(n.runs) == 3 and n.false_positives == 1  # the hung fixed-worker run
    assert "interrupted, stopping `all seed 2 bugs KAFKA-7672`" in markdown_table(n)


def test_runs_at_once_count_the_nightly_wall_time_and_every_stopped_run(
    two_nightlies: tuple[Path, Path, Path], tmp_path: Path,
) -> None:
    """With `jobs: 2` runs overlap: runs/hour is over the nightly's own start to finish,
    not the sum of the runs, and an interruption stops (and sets aside) both."""
    log_dir = _copy(two_nightlies[0], tmp_path) / two_nightlies[2].name
    doc = json.loads((log_dir / "nightly.json").read_text())
    for run in doc["runs"]:
        run["duration_s"] = 600.0
    doc["runs"][-1].update(exit_code=None, note="interrupted with the nightly")
    doc["runs"][-2].update(exit_code=None, note="interrupted with the nightly")
    doc.update(interrupted=True, started_at="2026-11-23T10:00:00+00:00",
               finished_at="2026-11-23T10:30:00+00:00")
    (log_dir / "nightly.json").write_text(json.dumps(doc))
    n = read_nightly(log_dir)
    assert n.wall_s == 1800.0 and len(n.stopped) == 2 and len(n.runs) == len(doc["runs"]) - 2
    assert n.runs_per_hour == 2 * len(n.runs)
    assert markdown_table(n).count("interrupted, stopping `") == 1


def test_only_broad_profile_runs_count_as_all_alone() -> None:
    lost = [LostRun(f"r{i}", profile, "1", ("X",), "killed")
            for i, profile in enumerate(["kill", "all", "soak", "KAFKA-7672"])]
    (detection,) = judge([], lost).detections
    assert (detection.runs, detection.broad_runs, detection.broad_caught) == (4, 2, 0)


def test_a_switch_run_only_under_the_broad_profile_is_measured_not_gated() -> None:
    broad_only = [LostRun(f"r{i}", profile, "1", ("X",), "killed")
                  for i, profile in enumerate(["all", "soak"])]
    judged = judge([], broad_only)
    assert not judged.detections[0].gated and judged.undetected == [] and judged.ok
    aimed = [*broad_only, LostRun("r2", "kill", "1", ("X",), "killed")]
    assert [d.name for d in judge([], aimed).undetected] == ["X"]
