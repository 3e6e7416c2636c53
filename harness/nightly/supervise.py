"""Supervision of the nightly's runs: each `kchaos run` a subprocess in its own session, up
to `jobs` of them at once, stopped when it hangs or when the nightly is interrupted, and
the budget that decides whether the next one starts. The matrix's project checks
(project_checks.py) go first and are supervised the same way, each holding a place.

No new run starts when it would not fit in what is left of the budget: a run is estimated
from the slowest run so far per second of time limit, times its own time limit (2x its
time limit before the first has finished), a project check by its timeout; one that does
not fit is not started, and a shorter one after it may still be. Ctrl-C or SIGTERM to the
nightly stops the runs in progress (SIGTERM to each one's process group, which `kchaos run`
handles like Ctrl-C: it stops its pods and brokers), cleans what they recorded, and ends
the matrix: the nightly still writes its summary of the runs that finished.
"""

from __future__ import annotations

import dataclasses
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
from harness.nightly.matrix import Cell, Matrix, ProjectCheck, run_timeout, time_limits
from harness.report.nightlies import INTERRUPTED, CheckRecord
from harness.report.summary import format_duration

ESTIMATE_FACTOR = 2.0
# SIGTERM to SIGKILL: time for `kchaos run` to stop its pods and brokers and write its
# report (pods are killed, not drained, when a run is aborted).
STOP_GRACE_S = 60.0
# How soon a finished run's place is given to the next: every second a place stands empty
# is a second of the nightly's wall time.
POLL_S = 0.1
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
    checks: list[CheckRecord] = field(default_factory=list)  # project checks that started
    checks_skipped: list[ProjectCheck] = field(default_factory=list)


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


class StartedCheck(Protocol):
    """One project check in progress (project_checks.CheckProcess)."""

    def poll(self) -> CheckRecord | None:
        """Its record once it has ended (or was stopped for its timeout)."""

    def terminate(self) -> None:
        """Ask it to stop (SIGTERM), without waiting."""

    def stop(self, note: str) -> CheckRecord:
        """Stop it now."""


class CheckLauncher(Protocol):
    def __call__(self, check: ProjectCheck) -> StartedCheck | CheckRecord:
        """Start the check; its record right away when it could not start."""


RUN, CHECK = "run", "check"


def run_matrix(
    matrix: Matrix, budget_s: float, start: Launcher, jobs: int = 1,
    clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
    start_check: CheckLauncher | None = None,
    on_end: Callable[[Attempt], None] | None = None,
) -> Progress:
    """Run the project checks (with `start_check`), then the cells, in order, `jobs` at a
    time, each that fits in the budget, until an interruption. `start` is asked for each
    run as it launches (a seed chosen then: seed_choice.py), and `on_end` told of each
    run that ended, before the next launch."""
    began = clock()
    done = Progress()
    limits = time_limits(matrix)
    checks = matrix.project_checks if start_check is not None else ()
    finished: dict[int, Attempt] = {}
    running: dict[int, Started] = {}
    checked: dict[int, CheckRecord] = {}
    checking: dict[int, StartedCheck] = {}
    waiting = [*((CHECK, i) for i in range(len(checks))),
               *((RUN, n) for n in range(len(matrix.cells)))]
    left: list[tuple[str, int]] = []  # did not fit

    def fits(kind: str, i: int) -> bool:
        if kind == CHECK:
            estimate = checks[i].timeout_s
        else:
            ratio = max((a.duration_s / limits[n] for n, a in finished.items()), default=0.0)
            estimate = (ratio or ESTIMATE_FACTOR) * limits[i]
        return clock() - began + estimate <= budget_s

    def ended(n: int, attempt: Attempt) -> None:
        finished[n] = attempt
        if on_end is not None:
            on_end(attempt)
        verdict = attempt.exit_code if attempt.exit_code is not None else "stopped"
        err.print(f"[{n + 1}/{len(matrix.cells)}] {attempt.cell.name}: exit {verdict} "
                  f"in {format_duration(attempt.duration_s)} {attempt.note}", highlight=False)

    def checked_(i: int, record: CheckRecord) -> None:
        checked[i] = record
        err.print(f"project check {record.name}: {record.outcome} in "
                  f"{format_duration(record.duration_s)}", highlight=False, markup=False)

    starting: tuple[str, int] | None = None
    try:
        while waiting or running or checking:
            while waiting and len(running) + len(checking) < jobs:
                kind, i = starting = waiting.pop(0)
                if not fits(kind, i):  # it never will: time and estimates only grow
                    left.append(starting)
                elif kind == CHECK:
                    assert start_check is not None
                    begun = start_check(checks[i])
                    if isinstance(begun, CheckRecord):
                        checked_(i, begun)
                    else:
                        checking[i] = begun
                else:
                    started = start(matrix.cells[i], i + 1)
                    if isinstance(started, Attempt):
                        ended(i, started)
                    else:
                        running[i] = started
                starting = None
            if not running and not checking:  # nothing in progress, nothing that fits
                break
            for i, check in list(checking.items()):
                record = check.poll()
                if record is not None:
                    del checking[i]
                    checked_(i, record)
            for n, run in list(running.items()):
                attempt = run.poll()
                if attempt is not None:
                    del running[n]
                    ended(n, attempt)
            if running or checking:
                sleep(POLL_S)
    except KeyboardInterrupt as exc:
        done.interrupted = exc
        names = [*(checks[i].name for i in checking), *(matrix.cells[n].name for n in running)]
        err.print(f"[yellow]nightly interrupted[/] during {', '.join(names) or 'a start'}; "
                  "stopping what runs", highlight=False)
        stoppable: list[Started | StartedCheck] = [*checking.values(), *running.values()]
        for each in stoppable:  # all at once: each stop may wait its grace
            each.terminate()
        for i, check in checking.items():
            checked[i] = check.stop("interrupted with the nightly")
        for n, run in running.items():
            finished[n] = run.stop("interrupted with the nightly")
        if starting is not None and starting[0] == RUN:  # no process to stop
            n = starting[1]
            finished[n] = Attempt(matrix.cells[n], None, None, 0.0, "interrupted with the nightly")
        elif starting is not None:
            i = starting[1]
            checked[i] = CheckRecord(checks[i].name, checks[i].command, INTERRUPTED,
                                     note="interrupted with the nightly")
    not_run = sorted([*left, *waiting], key=lambda w: w[1])
    done.attempts = [finished[n] for n in sorted(finished)]
    done.skipped = [matrix.cells[n] for kind, n in not_run if kind == RUN]
    done.checks = [checked[i] for i in sorted(checked)]
    done.checks_skipped = [checks[i] for kind, i in not_run if kind == CHECK]
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
        signal_group(self.proc, signal.SIGTERM)

    def stop(self, note: str) -> Attempt:
        stop_group(self.proc)
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
    (limit,) = time_limits(dataclasses.replace(matrix, cells=(cell,)))
    stem = log_dir / f"{number:03d}"
    # The run writes to its own copies of these files: ours close once it has started.
    with open(f"{stem}.out", "wb") as fout, open(f"{stem}.err", "wb") as ferr:
        try:
            proc = subprocess.Popen(argv, stdout=fout, stderr=ferr, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        except OSError as exc:
            return Attempt(cell, 255, None, 0.0, f"could not start {argv[0]}: {exc}")
    return RunProcess(cell, proc, stem, results_dir, kchaos_argv, run_timeout(matrix, limit))


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """The run leads its own process group (start_new_session): stop that group by its id,
    politely first so `kchaos run` can stop its brokers and pods."""
    for sig, wait_s in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, 10.0)):
        if not signal_group(proc, sig):
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> bool:
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
