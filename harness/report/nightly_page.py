"""`nightly.html` and `nightly.md` in a nightly's folder: per cell the verdict, per bug
switch the runs and seeds that caught it, the fixed worker's false positives, its project
checks, each soak run window by window, the fault coverage of its runs and the cells the
budget left out."""

from __future__ import annotations

from pathlib import Path

from common.files import write_atomically
from harness.report.coverage import OverTime, coverage_table, over_time_of
from harness.report.nightlies import (
    NIGHTLY_PAGE,
    NIGHTLY_TABLE,
    Nightly,
    markdown_table,
    read_nightly,
    rendered_at,
)
from harness.report.pages import environment, href, short_error
from harness.report.plotly_file import NO_PLOTLY
from harness.report.report import REPORT_FILE
from harness.report.summary import format_duration


def _soaks(nightly: Nightly) -> dict[Path, OverTime | str]:
    """Each soak run's windows (harness/report/coverage.py), or why they could not be read:
    one soak's damaged files cost its own table only."""
    from faults.soak import SOAK

    found: dict[Path, OverTime | str] = {}
    for r in nightly.runs:
        if r.summary is None or r.profile != SOAK:
            continue
        try:
            found[r.summary.run_dir] = over_time_of(r.summary.run_dir) or "no windows"
        except Exception as exc:
            found[r.summary.run_dir] = short_error(exc)
    return found


def render_nightly(log_dir: Path) -> Path:
    """Write the nightly's page and Markdown table; returns the page. Raises OSError or
    ValueError when the folder holds no readable nightly.json."""
    log_dir = Path(log_dir)
    nightly = read_nightly(log_dir)
    write_atomically(log_dir / NIGHTLY_TABLE, markdown_table(nightly))

    def link(run_dir: Path) -> str:
        # Run folders are siblings of the nightly's folder.
        target = run_dir / REPORT_FILE if (run_dir / REPORT_FILE).exists() else run_dir
        return href(Path("..") / target.relative_to(run_dir.parent))

    page = environment().get_template("nightly.html.j2").render(
        n=nightly,
        links={r.summary.run_dir: link(r.summary.run_dir) for r in nightly.runs if r.summary},
        check_links={c.name: href(Path(c.log)) for c in nightly.checks if c.log},
        soaks=_soaks(nightly),
        coverage=coverage_table(r.summary.run_dir for r in nightly.runs if r.summary),
        wall=format_duration(nightly.wall_s),
        budget=format_duration(nightly.budget_s),
        format_duration=format_duration,
        rendered_at=rendered_at(),
        **NO_PLOTLY,
    )
    return write_atomically(log_dir / NIGHTLY_PAGE, page)
