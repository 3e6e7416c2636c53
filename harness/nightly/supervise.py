"""Supervision of the nightly's runs: each `kchaos run` a subprocess in its own session, up
to `jobs` of them at once, stopped when it hangs or when the nightly is interrupted, and
the budget that decides whether the next one starts.

No new run starts when it would not fit in what is left of the budget (estimated from the
slowest run so far, or 2x the time limit before the first). Ctrl-C or SIGTERM to the
nightly stops the runs in progress (SIGTERM to each one's process group, which `kchaos run`
handles like Ctrl-C: it stops its pods and brokers), cleans what they recorded, and ends
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
from typing import Protocol

from harness.console import err
from harness.nightly.matrix import Cell, Matrix
from harness.report.summary import format_duration

ESTIMATE_FACTOR = 2.0
# SIGTERM to SIGKILL: time for `kchaos run` to stop its pods and brokers and write its
# report (pods are killed, not drained, when a run is aborted).
STOP_GRACE_S = 60.0
POLL_S = 0.5
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
    """What `run_matrix` got through: runs done (in matrix order), cells not started, and
    the interruption (Ctrl-C, SIGTERM) that ended it early, if one did."""

    attempts: list[Attempt] = field(default_factory=list)
    skipped: list[Cell] = field(default_factory=list)
    interrupted: KeyboardInterrupt | None = None


class Started(Protocol):
    """One run in progress."""

    def poll(self) -> Attempt | None:
        """The attempt once the run has ended (or was stopped for its timeout)."""

    def terminate(self) -> None:
        """Ask the run to stop (SIGTERM), without waiting for it."""

    def stop(self, note: str) -> Attempt:
        """Stop the run now and clean after it."""


class Launcher(Protocol):
    def __call__(self, cell: Cell, number: int) -> Started | Attempt:
        """Start the cell's run; an Attempt right away when it could not start."""


def run_matrix(
    matrix: Matrix, budget_s: float, start: Launcher, jobs: int = 1,
    clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
) -> Progress:
    """Run cells in order, `jobs` at a time, while the next one fits in the budget, until
    an interruption."""
    began = clock()
    done = Progress()
    finished: dict[int, Attempt] = {}
    running: dict[int, Started] = {}
    waiting = list(enumerate(matrix.cells))

    def fits() -> bool:
        slowest = max((a.duration_s for a in finished.values()), default=0.0)
        estimate = slowest or ESTIMATE_FACTOR * matrix.time_limit_s
        return clock() - began + estimate <= budget_s

    def ended(n: int, attempt: Attempt) -> None:
        finished[n] = attempt
        verdict = attempt.exit_code if attempt.exit_code is not None else "stopped"
        err.print(f"[{n + 1}/{len(matrix.cells)}] {attempt.cell.name}: exit {verdict} "
                  f"in {format_duration(attempt.duration_s)} {attempt.note}", highlight=False)

    starting: tuple[int, Cell] | None = None
    try:
        while waiting or running:
            while waiting and len(running) < jobs and fits():
                starting = n, cell = waiting.pop(0)
                started = start(cell, n + 1)
                starting = None
                if isinstance(started, Attempt):
                    ended(n, started)
                else:
                    running[n] = started
            if not running:  # nothing in progress and the next run does not fit
                break
            for n, run in list(running.items()):
                attempt = run.poll()
                if attempt is not None:
                    del running[n]
                    ended(n, attempt)
            if running:
                sleep(POLL_S)
    except KeyboardInterrupt as exc:
        done.interrupted = exc
        names = ", ".join(matrix.cells[n].name for n in running)
        err.print(f"[yellow]nightly interrupted[/] during {names or 'a start'}; "
                  "stopping what runs", highlight=False)
        for run in running.values():  # all at once: each stop may wait its grace
            run.terminate()
        for n, run in running.items():
            finished[n] = run.stop("interrupted with the nightly")
        if starting is not None:  # interrupted while starting it: no process to stop
            n, cell = starting
            finished[n] = Attempt(cell, None, None, 0.0, "interrupted with the nightly")
    done.attempts = [finished[n] for n in sorted(finished)]
    done.skipped = [cell for _, cell in waiting]
    return done


# -- one `kchaos run` as a subprocess -------------------------------------------------------


@dataclass
class RunProcess:
    """A `kchaos run` of the nightly, its output kept in the nightly's log folder."""

    cell: Cell
    proc: subprocess.Popen[bytes]
    stem: Path
    results_dir: Path
    kchaos_argv: Sequence[str]
    timeout_s: float
    started: float = field(default_factory=time.monotonic)

    def poll(self) -> Attempt | None:
        code = self.proc.poll()
        if code is not None:
            return self._attempt(code, "")
        if time.monotonic() - self.started > self.timeout_s:
            return self.stop(f"stopped after {self.timeout_s:g} s (run_timeout_s)")
        return None

    def terminate(self) -> None:
        _signal_group(self.proc, signal.SIGTERM)

    def stop(self, note: str) -> Attempt:
        _stop_group(self.proc)
        attempt = self._attempt(None, note)
        _clean_after(self.kchaos_argv, self.results_dir, attempt.run_dir, self.stem)
        return attempt

    def run_folder(self) -> Path | None:
        """The folder the run printed (`kchaos run` prints it as it makes it)."""
        for line in reversed(_read(self.stem).splitlines()):
            match = RUN_FOLDER.match(ANSI.sub("", line).strip())
            if match and Path(match.group(1)).is_dir():
                return Path(match.group(1))
        return None

    def _attempt(self, code: int | None, note: str) -> Attempt:
        run_dir = self.run_folder()
        if run_dir is None and not note:
            note = f"no run folder: {_last_line(Path(f'{self.stem}.err'))} (see {self.stem}.err)"
        return Attempt(self.cell, code, run_dir, time.monotonic() - self.started, note)


def launch(
    kchaos_argv: Sequence[str], cell: Cell, matrix: Matrix, results_dir: Path, log_dir: Path,
    number: int,
) -> RunProcess | Attempt:
    argv = [*kchaos_argv, *cell.argv(matrix.time_limit_s, results_dir, matrix.extra_args)]
    stem = log_dir / f"{number:03d}"
    # The run writes to its own copies of these files: ours close once it has started.
    with open(f"{stem}.out", "wb") as fout, open(f"{stem}.err", "wb") as ferr:
        try:
            proc = subprocess.Popen(argv, stdout=fout, stderr=ferr, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        except OSError as exc:
            return Attempt(cell, 255, None, 0.0, f"could not start {argv[0]}: {exc}")
    return RunProcess(cell, proc, stem, results_dir, kchaos_argv,
                      matrix.run_timeout_s)


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """The run leads its own process group (start_new_session): stop that group by its id,
    politely first so `kchaos run` can stop its brokers and pods."""
    for sig, wait_s in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, 10.0)):
        if not _signal_group(proc, sig):
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> bool:
    """False when the group is gone."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return False
    return True


def _read(stem: Path) -> str:
    return Path(f"{stem}.out").read_text(errors="replace")


def _last_line(path: Path) -> str:
    """The one line a failing kchaos prints last says what broke."""
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines()]
    except OSError:
        return "?"
    return next((ANSI.sub("", ln) for ln in reversed(lines) if ln), "no output")


def _clean_after(
    kchaos_argv: Sequence[str], results_dir: Path, run_dir: Path | None, stem: Path
) -> None:
    """A stopped run may have left brokers or pods in other sessions: `kchaos clean` stops
    them by the PIDs the run recorded (in its own folder only: other runs go on)."""
    if run_dir is None:
        Path(f"{stem}.clean").write_text("the run left no folder: nothing it recorded\n")
        return
    argv = [*kchaos_argv, "--results-dir", str(results_dir), "clean", str(run_dir)]
    with open(f"{stem}.clean", "wb") as log:
        try:
            subprocess.run(argv, stdout=log, stderr=log, timeout=120, check=False,
                           start_new_session=True)  # a second Ctrl-C must not cut it short
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.write(f"kchaos clean failed: {exc}\n".encode())
