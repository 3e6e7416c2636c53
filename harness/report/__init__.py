"""What people and CI read after a run: `report.html` per run, `results/index.html` over all
runs, and JUnit XML per run and per nightly. Every entry point tolerates missing and
damaged run files (a crashed run is exactly when a report is needed)."""

from harness.report.index import render_index
from harness.report.junit import write_nightly_junit, write_run_junit
from harness.report.report import render_report

__all__ = ["render_index", "render_report", "write_nightly_junit", "write_run_junit"]
