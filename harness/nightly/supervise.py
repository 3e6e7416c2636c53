"""Supervision of the nightly's runs: each `kchaos run` a subprocess in its own session,
stopped when it hangs or when the nightly is interrupted, and the budget that decides
whether the next one starts.

No new run starts when it would not fit in what is left of the budget (estimated from the
slowest run so far, or 2x the time limit before the first). Ctrl-C or SIGTERM to the
nightly stops the run in progress (SIGTERM to its process group, which `kchaos run`
handles like Ctrl-C: it stops its pods and brokers), cleans what it recorded, and ends
the matrix: the nightly still writes its summary of the runs that finished.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.console import err
from harness.nightly.matrix import Cell, Matrix
from harness.report.index import run_dirs
from harness.report.summary import format_duration

ESTIMATE_FACTOR = 2.0
# SIGTERM to SIGKILL: time for `kchaos run` to stop its pods and brokers and write its
# report (pods are killed, not drained, when a run is aborted).
STOP_GRACE_S = 60.0
RUN_FOLDER = re.compile(r"^run folder:\s*(\S.*?)\s*$")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(frozen=True)
class Attempt:
    cell: Cell
    exit_code: int | None  # None: stopped by the nightly (timeout or interruption)
    run_dir: Path | None
    duration_s: float
    note: str = ""


@dataclass
class Progress:
    """What `run_matrix` got through: runs done, cells not started, and the interruption
    (Ctrl-C, SIGTERM) that ended it early, if one did."""

    attempts: list[Attempt] = field(default_factory=list)
    skipped: list[Cell] = field(default_factory=list)
    interrupted: KeyboardInterrupt | None = None


class RunInterrupted(KeyboardInterrupt):
    """The nightly was interrupted during a run: the run, stopped, as an attempt."""

    def __init__(self, attempt: Attempt, cause: KeyboardInterrupt) -> None:
        super().__init__(str(cause))
        self.attempt = attempt
        self.cause = cause


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """The run leads its own process group (start_new_session): stop that group by its id,
    politely first so `kchaos run` can stop its brokers and pods."""
    for sig, wait_s in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _run_folder(stdout: str, before: set[Path], results_dir: Path) -> Path | None:
    """The folder the run printed; else the one new run folder that appeared."""
    for line in reversed(stdout.splitlines()):
        match = RUN_FOLDER.match(ANSI.sub("", line).strip())
        if match and Path(match.group(1)).is_dir():
            return Path(match.group(1))
    new = [d for d in run_dirs(results_dir) if d not in before]
    return max(new, key=lambda d: d.stat().st_mtime) if new else None


def launch(
    kchaos_argv: Sequence[str], cell: Cell, matrix: Matrix, results_dir: Path, log_dir: Path,
    number: int,
) -> Attempt:
    """One `kchaos run` as a subprocess, its output kept in the nightly's log folder. An
    interruption stops the run and cleans after it, then goes on up to `run_matrix`."""
    argv = [*kchaos_argv, *cell.argv(matrix.time_limit_s, results_dir, matrix.extra_args)]
    before = set(run_dirs(results_dir))
    stem = log_dir / f"{number:03d}"
    started = time.monotonic()
    code: int | None = None
    note = ""
    with open(f"{stem}.out", "wb") as fout, open(f"{stem}.err", "wb") as ferr:
        try:
            proc = subprocess.Popen(argv, stdout=fout, stderr=ferr, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        except OSError as exc:
            return Attempt(cell, 255, None, 0.0, f"could not start {argv[0]}: {exc}")
        try:
            code = proc.wait(timeout=matrix.run_timeout_s)
        except subprocess.TimeoutExpired:
            note = f"stopped after {matrix.run_timeout_s:g} s (run_timeout_s)"
            _stop_group(proc)
            _clean_after(kchaos_argv, results_dir, stem)
        except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM: leave no process behind
            _stop_group(proc)
            _clean_after(kchaos_argv, results_dir, stem)
            stopped = Attempt(cell, None, _run_folder(_read(stem), before, results_dir),
                              time.monotonic() - started, "interrupted with the nightly")
            raise RunInterrupted(stopped, exc) from exc
        except BaseException:
            _stop_group(proc)
            raise
    run_dir = _run_folder(_read(stem), before, results_dir)
    if run_dir is None and not note:
        note = f"no run folder: {_last_line(Path(f'{stem}.err'))} (see {stem}.err)"
    return Attempt(cell, code, run_dir, time.monotonic() - started, note)


def _read(stem: Path) -> str:
    return Path(f"{stem}.out").read_text(errors="replace")


def _last_line(path: Path) -> str:
    """The one line a failing kchaos prints last says what broke."""
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines()]
    except OSError:
        return "?"
    return next((ANSI.sub("", ln) for ln in reversed(lines) if ln), "no output")


def _clean_after(kchaos_argv: Sequence[str], results_dir: Path, stem: Path) -> None:
    """A stopped run may have left brokers or pods in other sessions: `kchaos clean` stops
    them by the PIDs the run recorded."""
    argv = [*kchaos_argv, "--results-dir", str(results_dir), "clean"]
    with open(f"{stem}.clean", "wb") as log:
        try:
            subprocess.run(argv, stdout=log, stderr=log, timeout=120, check=False,
                           start_new_session=True)  # a second Ctrl-C must not cut it short
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.write(f"kchaos clean failed: {exc}\n".encode())


def run_matrix(
    matrix: Matrix, budget_s: float, start: Callable[[Cell, int], Attempt],
    clock: Callable[[], float] = time.monotonic,
) -> Progress:
    """Run cells in order while the next one fits in the budget, until an interruption."""
    began = clock()
    done = Progress()
    for n, cell in enumerate(matrix.cells):
        slowest = max((a.duration_s for a in done.attempts), default=0.0)
        estimate = slowest or ESTIMATE_FACTOR * matrix.time_limit_s
        if clock() - began + estimate > budget_s:
            done.skipped = list(matrix.cells[n:])
            return done
        cell_began = clock()
        try:
            attempt = start(cell, n + 1)
        except KeyboardInterrupt as exc:
            if isinstance(exc, RunInterrupted):
                done.attempts.append(exc.attempt)
                done.interrupted = exc.cause
            else:
                done.attempts.append(Attempt(cell, None, None, clock() - cell_began,
                                             "interrupted with the nightly"))
                done.interrupted = exc
            done.skipped = list(matrix.cells[n + 1:])
            err.print(f"[yellow]nightly interrupted[/] during {cell.name}; run stopped",
                      highlight=False)
            return done
        done.attempts.append(attempt)
        verdict = attempt.exit_code if attempt.exit_code is not None else "stopped"
        err.print(f"[{n + 1}/{len(matrix.cells)}] {cell.name}: exit {verdict} "
                  f"in {format_duration(attempt.duration_s)} {attempt.note}", highlight=False)
    return done
