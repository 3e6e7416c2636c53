"""`kchaos nightly`: load the matrix, run it within the budget, then judge and write the
index, the JUnit files, nightly.json and the terminal summary.

Exit code: 0 when every fixed-worker run was valid, every bug switch was caught by at
least one of its runs (harness/report/expect.py) and no project check failed
(project_checks.py), 1 otherwise, 2 when the budget did not allow a single run or check;
128 + the signal when interrupted (after writing the summary of what finished). A bad
matrix raises UsageError (254) before any run starts.

With `shard` (`--shard I/N`, shard.py) it runs that share of the matrix into
`nightly-<stamp>-shard-I-of-N/` with a shard.json, and a switch its runs missed does not
fail it: `kchaos nightly merge` (merge.py) judges detection over every shard.
"""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC, datetime
from pathlib import Path

from harness.console import err, out
from harness.errors import (
    EXIT_INVALID,
    EXIT_UNKNOWN,
    EXIT_VALID,
    UsageError,
    exit_code_for_exception,
)
from harness.nightly.engine import without_docker_cells_if_no_engine
from harness.nightly.matrix import Cell, Matrix, ProjectCheck, load_matrix, only_seeds
from harness.nightly.project_checks import add_to_junit, launch_check, not_started, why_not_here
from harness.nightly.seed_choice import COVERAGE, MATRIX, CoverageSeeds, seed_choice_record
from harness.nightly.shard import Shard, matrix_hash, select, shard_verdict, write_shard_record
from harness.nightly.supervise import (
    ESTIMATE_FACTOR,
    Attempt,
    RunProcess,
    launch,
    run_matrix,
)
from harness.nightly.table import print_checks, print_summary
from harness.report.coverage import nightly_coverage
from harness.report.expect import Judgement, LostRun, judge
from harness.report.index import is_run_dir, render_index
from harness.report.junit import JUNIT_FILE, write_junit, write_run_junit
from harness.report.nightlies import NIGHTLY_JSON, CheckRecord, with_checks
from harness.report.nightly_page import render_nightly
from harness.report.report import REPORT_FILE, render_report
from harness.report.summary import RunSummary, format_duration, summarize_dir
from harness.results import write_json
from harness.shared_spark import shared_checker

NIGHTLY_JUNIT = "nightly-junit.xml"  # a stable path for CI, overwritten by each nightly


def _summary(attempt: Attempt) -> RunSummary | None:
    if attempt.run_dir is None or not is_run_dir(attempt.run_dir):
        return None
    summary = summarize_dir(attempt.run_dir)
    # The process's own exit code wins: a run stopped mid-way may have a verdict on disk
    # from before it hung, and the nightly must count it as a failure (-1: stopped).
    code = -1 if attempt.exit_code is None else attempt.exit_code
    return summary if summary.exit_code == code else dataclasses.replace(summary, exit_code=code)


def _lost(attempt: Attempt) -> LostRun:
    cell = attempt.cell
    code = "stopped" if attempt.exit_code is None else f"exit {attempt.exit_code}"
    return LostRun(cell.name, cell.profile, str(cell.seed), cell.bugs, f"{code}: {attempt.note}")


def _ensure_outputs(run_dir: Path) -> None:
    """`kchaos run` writes its report; a run that died early did not."""
    if not (run_dir / REPORT_FILE).exists():
        render_report(run_dir)
    if not (run_dir / JUNIT_FILE).exists():
        write_run_junit(run_dir)


def _judge(attempts: list[Attempt]) -> tuple[dict[int, RunSummary], list[LostRun], Judgement]:
    summaries: dict[int, RunSummary] = {}
    lost: list[LostRun] = []
    for n, attempt in enumerate(attempts):
        summary = _summary(attempt)
        if summary is None:
            lost.append(_lost(attempt))
            continue
        summaries[n] = summary
        try:
            _ensure_outputs(summary.run_dir)
        except Exception as exc:  # one run's page must not cost the nightly its summary
            err.print(f"nightly: cannot write the report of {summary.run_dir}: {exc}")
    return summaries, lost, judge(list(summaries.values()), lost)


def _startable_checks(matrix: Matrix) -> tuple[Matrix, dict[str, CheckRecord]]:
    """The matrix with the project checks that can run here, and a record of each that
    cannot (not started, with the reason), by name."""
    cannot = {c.name: not_started(c, why) for c in matrix.project_checks
              if (why := why_not_here(c))}
    kept = tuple(c for c in matrix.project_checks if c.name not in cannot)
    return dataclasses.replace(matrix, project_checks=kept), cannot


def _check_records(
    checks: tuple[ProjectCheck, ...], ran: list[CheckRecord], cannot: dict[str, CheckRecord],
    skipped: list[ProjectCheck], interrupted: bool,
) -> list[CheckRecord]:
    """Every check of the (shard's) matrix, in matrix order: ran, or why not."""
    by_name = {**cannot, **{r.name: r for r in ran}}
    why = "interrupted" if interrupted else "budget"
    by_name.update((c.name, not_started(c, why)) for c in skipped)
    return [by_name[c.name] for c in checks]


def _new_log_dir(results_dir: Path, suffix: str) -> Path:
    """`nightly-<stamp><suffix>/`, its own: a nightly started in the same second as another
    (two quick ones in a row) waits for the next second rather than share its folder."""
    while True:
        log_dir = results_dir / f"nightly-{time.strftime('%Y%m%dT%H%M%S')}{suffix}"
        try:
            log_dir.mkdir(parents=True)
            return log_dir
        except FileExistsError:
            time.sleep(0.1)
        except OSError as exc:
            raise UsageError(f"cannot create the nightly's folder {log_dir}: {exc.strerror}; "
                             "pass a writable --results-dir") from exc


def _chooser(choose_seeds: str, matrix: Matrix, seeds: frozenset[int] | None,
             shard: Shard | None) -> CoverageSeeds | None:
    """`--choose-seeds coverage`'s chooser (None: the matrix's seeds); UsageError for the
    options it cannot go with."""
    if choose_seeds == MATRIX:
        return None
    if choose_seeds != COVERAGE:
        raise UsageError(f"--choose-seeds {choose_seeds}: give {MATRIX} or {COVERAGE}")
    if seeds is not None:
        raise UsageError("--choose-seeds coverage picks every run's seed itself: leave out "
                         "--seeds, or keep the matrix's seeds with --choose-seeds matrix")
    if shard is not None:
        raise UsageError("--choose-seeds coverage picks seeds from what this machine's runs "
                         "reached: leave out --shard, or use --choose-seeds matrix")
    from harness.nightly.seed_choice import predict_pool

    return CoverageSeeds(predict_pool(matrix))


def nightly(
    results_dir: Path, budget_s: float, matrix_path: Path | None, kchaos_argv: list[str],
    shared_spark: bool = False, jobs: int | None = None, shard: Shard | None = None,
    seeds: frozenset[int] | None = None, choose_seeds: str = MATRIX,
) -> int:
    matrix = whole = load_matrix(matrix_path)  # all of it checked before anything is written
    chooser = _chooser(choose_seeds, matrix, seeds, shard)
    if seeds is not None:  # before the shard: every machine splits the same runs
        matrix = whole = only_seeds(whole, seeds)
    if shard is not None:  # before the docker cells are left out: the same on every machine
        matrix = select(whole, shard)
    held = len(matrix.cells) + len(matrix.project_checks)
    all_checks = matrix.project_checks
    if jobs is not None:
        matrix = dataclasses.replace(matrix, jobs=jobs)
    matrix, no_engine, why = without_docker_cells_if_no_engine(matrix)
    matrix, cannot = _startable_checks(matrix)
    results_dir = Path(results_dir)
    suffix = shard.suffix if shard is not None else ""
    log_dir = _new_log_dir(results_dir, suffix)
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    if shard is not None:
        write_shard_record(log_dir, whole, shard, started_at)
        err.print(f"nightly: shard {shard} of matrix {matrix_hash(whole)} "
                  f"({len(whole.cells)} run(s) in all)", highlight=False)
    checks_said = (f" and {len(matrix.project_checks)} project check(s)"
                   if matrix.project_checks else "")
    err.print(f"nightly: {len(matrix.cells)} run(s){checks_said} in the matrix, "
              f"{matrix.jobs} at a time, "
              f"budget {format_duration(budget_s)}, logs in {log_dir}", highlight=False)
    if no_engine:
        err.print(f"nightly: {len(no_engine)} docker run(s) not started: {why}", highlight=False)
    for record in cannot.values():
        err.print(f"nightly: project check {record.name} not started: {record.note}",
                  highlight=False)

    # One Spark Connect server checks every run (harness/shared_spark.py); none for no run.
    with shared_checker(matrix.extra_args, log_dir, shared_spark and bool(matrix.cells)
                        ) as checker:

        def start(cell: Cell, number: int) -> RunProcess | Attempt:
            # Asked at each launch: a server that failed to start is no longer named.
            launched = dataclasses.replace(matrix, extra_args=checker.extra_args)
            if chooser is not None:  # asked now: what the finished runs reached counts
                cell = chooser.choose(cell)
                err.print(f"nightly: {cell.name}: {chooser.said(cell)}", highlight=False)
            return launch(kchaos_argv, cell, launched, results_dir, log_dir, number)

        done = run_matrix(matrix, budget_s, start, jobs=matrix.jobs,
                          start_check=lambda check: launch_check(check, log_dir),
                          on_end=chooser.finished if chooser is not None else None)
    attempts, skipped = done.attempts, done.skipped
    checks = _check_records(all_checks, done.checks, cannot, done.checks_skipped,
                            done.interrupted is not None)
    summaries, lost, runs_verdict = _judge(attempts)
    verdict = with_checks(runs_verdict, checks)
    ok, reasons, notes = verdict.ok, verdict.reasons(), list[str]()
    if shard is not None:
        ok, reasons, notes = shard_verdict(verdict)
    junit = write_junit(list(summaries.values()), log_dir / JUNIT_FILE, lost)
    add_to_junit(junit, checks)
    (results_dir / NIGHTLY_JUNIT).write_text(junit.read_text())
    write_json(log_dir / NIGHTLY_JSON, {
        "started_at": started_at,
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "budget_s": budget_s,
        "runs": [{**dataclasses.asdict(a), "run_dir": str(a.run_dir or ""),
                  **({"pick": p.to_json()} if chooser and (p := chooser.pick_of(a.cell)) else {})}
                 for a in attempts],
        "seed_choice": seed_choice_record(choose_seeds, chooser),
        "not_started": [dataclasses.asdict(c) for c in skipped],
        "not_started_no_engine": [dataclasses.asdict(c) for c in no_engine],
        "project_checks": [c.to_json() for c in checks],
        "interrupted": done.interrupted is not None,
        "ok": ok and done.interrupted is None,
        "reasons": reasons,
    })
    # The pages matter less than the verdict and the JUnit file: a failure is one line.
    try:
        page: Path | str = render_nightly(log_dir)
    except Exception as exc:
        page = f"not written ({type(exc).__name__}: {exc})"
    try:
        index: Path | str = render_index(results_dir)
    except Exception as exc:
        index = f"not written ({type(exc).__name__}: {exc})"

    print_summary(attempts, summaries, skipped, verdict,
                  "interrupted" if done.interrupted is not None else "budget")
    print_checks(checks)
    nightly_coverage([s.run_dir for s in summaries.values()], log_dir, out)
    out.print(f"nightly page: {page}\nindex: {index}\njunit: {results_dir / NIGHTLY_JUNIT}",
              highlight=False)
    if done.interrupted is not None:
        out.print("[yellow]nightly interrupted[/]: the runs above finished; no verdict")
        return exit_code_for_exception(done.interrupted)
    if not attempts and shard is not None and not held:
        out.print(f"nightly: shard {shard} holds none of the matrix's {len(whole.cells)} "
                  "run(s): nothing to run", highlight=False)
        return EXIT_VALID
    if not attempts and not done.checks:
        if not matrix.cells and not matrix.project_checks:
            out.print("[yellow]nightly: nothing it holds can start here (see above)[/]")
            return EXIT_UNKNOWN
        est = format_duration(ESTIMATE_FACTOR * matrix.time_limit_s)
        out.print(f"[yellow]nightly: no run fits in the budget (one run: about {est})[/]")
        return EXIT_UNKNOWN
    for note in notes:
        out.print(f"[yellow]note[/] {note}", highlight=False)
    for reason in reasons:
        out.print(f"[red]FAIL[/] {reason}", highlight=False)
    if ok:
        ran = f" and {len(done.checks)} project check(s)" if done.checks else ""
        out.print(f"[green]nightly passed[/]: {len(attempts)} run(s){ran}", highlight=False)
        return EXIT_VALID
    return EXIT_INVALID
