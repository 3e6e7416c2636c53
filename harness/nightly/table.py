"""The nightly's terminal summary: one row per run, then one per bug switch, then what the
budget or an interruption left out. Pure presentation of what `judge` decided."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.table import Table

from harness.console import out
from harness.nightly.matrix import Cell
from harness.nightly.supervise import Attempt
from harness.report.expect import Judgement
from harness.report.nightlies import PASSED, CheckRecord
from harness.report.summary import RunSummary, format_duration

LOG_WIDTH = 160


def runs_table(attempts: Sequence[Attempt], summaries: Mapping[int, RunSummary]) -> Table:
    table = Table(title="kchaos nightly")
    for col in ("#", "profile", "seed", "bugs", "exit", "verdict", "anomalies", "time",
                "outcome", "run folder"):
        table.add_column(col, overflow="fold", no_wrap=col in ("#", "exit", "time"))
    for n, a in enumerate(attempts):
        s = summaries.get(n)
        outcome = s.outcome if s else "no run folder"
        good = s.expectation_met if s else False
        table.add_row(
            str(n + 1), a.cell.profile, str(a.cell.seed), ",".join(a.cell.bugs) or "-",
            "stopped" if a.exit_code is None else str(a.exit_code),
            s.label if s else "-", s.anomalies_text if s else a.note,
            format_duration(a.duration_s),
            f"[green]{outcome}[/]" if good else f"[red]{outcome}[/]",
            a.run_dir.name if a.run_dir else "-",
        )
    return table


def detections_table(verdict: Judgement) -> Table:
    bugs = Table(title="bug detection (caught by at least one run)")
    for col in ("bugs", "runs", "caught", "by all alone", "result"):
        bugs.add_column(col)
    for d in verdict.detections:
        result = ("[green]detected[/]" if d.detected else "[red]UNDETECTED[/]" if d.gated
                  else "missed by all (measured, not gated)")
        broad = f"{d.broad_caught} of {d.broad_runs}" if d.broad_runs else "-"
        bugs.add_row(d.name, str(d.runs), str(d.caught), broad, result)
    return bugs


def checks_table(checks: Sequence[CheckRecord]) -> Table:
    table = Table(title="project checks")
    for col in ("check", "result", "time", "log"):
        table.add_column(col, overflow="fold")
    for c in checks:
        style = "green" if c.status == PASSED else "red" if c.failed else "yellow"
        table.add_row(c.name, f"[{style}]{c.outcome}[/]", format_duration(c.duration_s),
                      c.log or "-")
    return table


def print_checks(checks: Sequence[CheckRecord]) -> None:
    if checks:
        console = out if out.is_terminal else Console(width=LOG_WIDTH)
        console.print(checks_table(checks))


def print_summary(
    attempts: Sequence[Attempt], summaries: Mapping[int, RunSummary], skipped: Sequence[Cell],
    verdict: Judgement, why_skipped: str = "budget",
) -> None:
    # CI logs are not terminals: rich would assume 80 columns and fold every cell.
    console = out if out.is_terminal else Console(width=LOG_WIDTH)
    console.print(runs_table(attempts, summaries))
    if verdict.detections:
        console.print(detections_table(verdict))
    if skipped:
        console.print(f"{len(skipped)} run(s) not started ({why_skipped}): "
                      + "; ".join(c.name for c in skipped), highlight=False)
