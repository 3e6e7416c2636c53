"""`results/index.html`: every run in the results folder, newest first, the trend of
verdicts per profile and the fault-coverage table. Reads only run.json and results.json of
each run (cheap), so it can be regenerated after every run and on every page load of
`kchaos serve`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from common.files import write_atomically
from harness.report.charts import to_div, trend_figure
from harness.report.coverage import coverage_table
from harness.report.nightlies import (
    NIGHTLY_PAGE,
    Nightly,
    detection_rates,
    nightly_dirs,
    read_nightly,
)
from harness.report.pages import environment, href, short_error
from harness.report.plotly_file import NO_PLOTLY, plotly_vars
from harness.report.report import REPORT_FILE
from harness.report.run_files import RUN_MARKERS
from harness.report.shrinks import shrink_rows
from harness.report.summary import (
    RunSummary,
    broken_summary,
    format_duration,
    summarize_dir,
)

INDEX_FILE = "index.html"
RUN_LINKS = ((REPORT_FILE, "report"), ("junit.xml", "junit"), ("results.json", "results"))


def is_run_dir(path: Path) -> bool:
    try:
        return path.is_dir() and any((path / m).exists() for m in RUN_MARKERS)
    except OSError:
        return False


def run_dirs(results_dir: Path) -> list[Path]:
    try:
        children = list(results_dir.iterdir())
    except OSError:
        return []
    return [p for p in children if is_run_dir(p)]


def _sort_key(s: RunSummary) -> tuple[float, str]:
    """Newest first: by recorded start, else by the folder's mtime (a run that crashed
    before writing run.json still sorts where it happened)."""
    if s.started_at is not None:
        return s.started_at.timestamp(), s.run_dir.name
    try:
        return s.run_dir.stat().st_mtime, s.run_dir.name
    except OSError:
        return 0.0, s.run_dir.name


def _summary(run_dir: Path) -> RunSummary:
    try:
        return summarize_dir(run_dir)
    except Exception as exc:  # one odd folder must not take the whole index down
        return broken_summary(run_dir, short_error(exc))


def summaries(results_dir: Path) -> list[RunSummary]:
    found = [_summary(d) for d in run_dirs(results_dir)]
    return sorted(found, key=_sort_key, reverse=True)


@dataclass(frozen=True)
class RunRow:
    s: RunSummary
    started: str
    duration: str
    main_link: str
    links: list[tuple[str, str]]


def _row(s: RunSummary) -> RunRow:
    folder = s.run_dir.name
    links = [(label, href(f"{folder}/{name}")) for name, label in RUN_LINKS
             if (s.run_dir / name).exists()]
    links.append(("folder", href(f"{folder}/")))
    report = s.run_dir / REPORT_FILE
    return RunRow(
        s=s,
        started=s.started_at.strftime("%Y-%m-%d %H:%M:%S") if s.started_at else "-",
        duration=format_duration(s.duration_s),
        main_link=href(f"{folder}/{REPORT_FILE}") if report.exists() else href(f"{folder}/"),
        links=links,
    )


@dataclass(frozen=True)
class NightlyRow:
    name: str
    link: str
    nightly: Nightly | None
    error: str = ""


def nightly_rows(results_dir: Path) -> list[NightlyRow]:
    rows = []
    for log_dir in nightly_dirs(results_dir):
        page = log_dir / NIGHTLY_PAGE
        link = href(f"{log_dir.name}/{NIGHTLY_PAGE}" if page.exists() else f"{log_dir.name}/")
        try:
            rows.append(NightlyRow(log_dir.name, link, read_nightly(log_dir)))
        except Exception as exc:  # one damaged nightly.json costs its own row only
            rows.append(NightlyRow(log_dir.name, link, None, short_error(exc)))
    return rows


def render_index(results_dir: Path) -> Path:
    """Write `results_dir/index.html` and return its path."""
    results_dir = Path(results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    runs = summaries(results_dir)
    counts = Counter((s.label, s.css) for s in runs)
    dated = any(s.started_at for s in runs)
    nightlies = nightly_rows(results_dir)
    page = environment().get_template("index.html.j2").render(
        runs=[_row(s) for s in runs],
        counts=[(label, css, n) for (label, css), n in sorted(counts.items())],
        missed=sum(not s.expectation_met for s in runs),
        trend=to_div(trend_figure(runs), "trend-chart") if dated else "",
        coverage=coverage_table(s.run_dir for s in runs),
        nightlies=nightlies,
        shrinks=shrink_rows(results_dir),
        rates=detection_rates(r.nightly for r in nightlies if r.nightly),
        format_duration=format_duration,
        **(plotly_vars(results_dir, results_dir) if dated else NO_PLOTLY),
        results_dir=str(results_dir),
        rendered_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    )
    return write_atomically(results_dir / INDEX_FILE, page)
