"""`report.html` of one run: verdict, repro command, configuration, timeline, coverage (and,
for a soak, coverage and anomalies window by window), anomalies with their evidence, the
plan as it ran, and links to every log.

Whatever state the run folder is in, a page is written: missing and damaged files are
listed at the top, and a section that cannot be built says why in place.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common.files import write_atomically
from harness.report.app_page import AppFacts, app_config_rows, app_facts
from harness.report.charts import timeline_figure, to_div
from harness.report.coverage import CoverageRow, OverTime, coverage_rows, over_time
from harness.report.examples import CheckView, Table, check_views, records_table
from harness.report.knobs import KnobRow, knob_rows, knobs_note
from harness.report.pages import (
    environment,
    flat_rows,
    guarded,
    href,
    human_size,
    require_dir,
    short_error,
)
from harness.report.plotly_file import NO_PLOTLY, plotly_vars
from harness.report.run_files import (
    HISTORY_FILE,
    PLAN_FILE,
    RESULTS_FILE,
    RunFiles,
    dig,
    pod_names,
    read_run_files,
)
from harness.report.series import Timeline
from harness.report.summary import EXIT_NAMES, RunSummary, format_duration, summarize

REPORT_FILE = "report.html"
PLAN_COLUMNS = ("id", "fault", "target", "params", "trigger", "applied_at_s", "healed_at_s",
                "status")
# Run-folder files worth a link, in reading order; logs of pods and brokers follow.
TOP_FILES = ("run.json", PLAN_FILE, RESULTS_FILE, HISTORY_FILE, "junit.xml", "pids.json")
LOG_GLOBS = ("pods/*/worker.log", "pods/*/trace.jsonl", "kafka/*.log", "history/*")


def _run_rows(s: RunSummary, run: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [
        ("run id", s.run_id),
        ("started", str(run.get("started_at", "-"))),
        ("finished", str(run.get("finished_at", "-"))),
        ("duration", format_duration(s.duration_s)),
        ("exit code", "-" if s.exit_code is None else str(s.exit_code)),
    ]


def _links(run_dir: Path) -> list[tuple[str, str, str]]:
    paths: list[Path] = [run_dir / name for name in TOP_FILES]
    for pattern in LOG_GLOBS:
        paths.extend(sorted(run_dir.glob(pattern)))
    links = []
    for path in paths:
        try:
            if not path.is_file():
                continue
            size = human_size(path.stat().st_size)
        except OSError:
            continue
        rel = path.relative_to(run_dir)
        links.append((str(rel), href(rel), size))
    return links


def _plan_table(plan: Mapping[str, Any]) -> Table | None:
    steps = plan.get("steps")
    if not isinstance(steps, list) or not steps:
        return None
    rows = [s if isinstance(s, Mapping) else {"step": s} for s in steps]
    # The contract's columns first, in a stable order, then whatever else a step carries.
    ordered = [
        {**{c: r.get(c) for c in PLAN_COLUMNS if c in r}, **r} for r in rows
    ]
    return records_table("steps", ordered)


def _timeline(files: RunFiles) -> tuple[Timeline | None, str]:
    tl = files.history.finish(files.plan)
    if tl is None:
        state = _problem(files, HISTORY_FILE) or "empty"
        return None, f"nothing to plot: {HISTORY_FILE} is {state} and no trace has commits"
    pods = pod_names(files.run_dir)
    return tl, to_div(timeline_figure(tl, pods), "timeline-chart")


def _problem(files: RunFiles, name: str) -> str:
    """"missing" / "damaged" for a file with a problem, "" for a good one."""
    state = next((st for st in files.states if st.name == name), None)
    return "" if state and state.status == "ok" else (state.status if state else "missing")


def _context(files: RunFiles, errors: dict[str, str]) -> dict[str, Any]:
    s = summarize(files)
    run = files.run
    config = run.get("config")
    no_timeline: tuple[Timeline | None, str] = (None, "")
    tl, timeline_html = guarded(errors, "timeline", lambda: _timeline(files), no_timeline)
    origin = tl.origin_ns if tl else None
    checks: list[CheckView] = guarded(
        errors, "checks", lambda: check_views(dig(files.results, "checks"), origin), []
    )
    plan_table = guarded(errors, "plan", lambda: _plan_table(files.plan), None)
    coverage: list[CoverageRow] = guarded(
        errors, "coverage", lambda: coverage_rows(files.results, origin), []
    )
    no_windows: OverTime | None = None  # a run shorter than two windows, not a soak
    windows = guarded(errors, "over-time",
                      lambda: over_time(files.run_dir, files.results, run, origin), no_windows)
    no_app: AppFacts | None = None
    app = guarded(errors, "app", lambda: app_facts(files.run_dir, run), no_app)
    if app is not None and isinstance(config, Mapping):
        config = app_config_rows(config)
    knob_table: list[KnobRow] = guarded(
        errors, "knobs", lambda: knob_rows(config if isinstance(config, Mapping) else None),
        [])
    return {
        "s": s,
        "app": app,
        "exit_name": "" if s.exit_code is None else EXIT_NAMES.get(s.exit_code, "abnormal"),
        "run_rows": guarded(errors, "configuration", lambda: _run_rows(s, run),
                            list[tuple[str, str]]()),
        "config_rows": flat_rows(config) if isinstance(config, Mapping) else [],
        "knob_rows": knob_table,
        "knobs_note": knobs_note(config if isinstance(config, Mapping) else None),
        "version_rows": flat_rows(run.get("versions")),
        "timing_rows": flat_rows(run.get("timings")),
        "checks": checks,
        "not_judged": dig(files.results, "not_judged"),
        "partly_judged": dig(files.results, "partly_judged"),
        "results_missing": _problem(files, RESULTS_FILE),
        "timeline": timeline_html if tl else "",
        "timeline_note": timeline_html or "the timeline could not be built",
        "plan_table": plan_table,
        "coverage": coverage,
        "over_time": windows,
        "plan_rows": [(k, v) for k, v in flat_rows(files.plan) if not k.startswith("steps")],
        "plan_note": f"no steps (plan.json is {_problem(files, PLAN_FILE) or 'empty'})",
        "figure_rows": flat_rows(dig(files.results, "figures")),
        "links": guarded(errors, "files", lambda: _links(files.run_dir),
                         list[tuple[str, str, str]]()),
        "errors": errors,
        "rendered_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "run_dir": str(files.run_dir),
        **(plotly_vars(files.run_dir, files.run_dir.parent) if tl else NO_PLOTLY),
    }


def _last_resort(run_dir: Path, exc: BaseException) -> str:
    """The page when even the frame failed: still a page, still the repro command."""
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>kchaos report failed</title>"
        "</head><body><h1 id='verdict' data-verdict='no verdict'>report could not be "
        f"rendered</h1><pre>{html.escape(short_error(exc))}</pre><p>reproduce: <code "
        f"id='repro'>kchaos repro {html.escape(str(run_dir))}</code></p></body></html>"
    )


def render_report(run_dir: Path) -> Path:
    """Write `run_dir/report.html` from whatever the folder holds and return its path.
    Raises UsageError if `run_dir` is not a folder, OSError if it cannot be written."""
    run_dir = require_dir(run_dir)
    errors: dict[str, str] = {}
    try:
        files = read_run_files(run_dir)
        page = environment().get_template("report.html.j2").render(**_context(files, errors))
    except Exception as exc:  # the guard of last resort: a report must always exist
        page = _last_resort(run_dir, exc)
    return write_atomically(run_dir / REPORT_FILE, page)

