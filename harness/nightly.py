"""`kchaos nightly`: run a matrix of profiles x seeds x bug switches, one `kchaos run` at a
time as a subprocess, within a time budget; then the index, a JUnit file and a summary.

A run that fails, hangs (stopped after `run_timeout_s`) or leaves no folder is recorded and
the nightly goes on. No new run starts when it would not fit in what is left of the budget
(estimated from the slowest run so far, or 2x the time limit before the first: DESIGN.md
section 8). Exit code: 0 when every fixed-worker run was valid and every bug switch was
caught by at least one of its runs (harness/report/expect.py), 1 otherwise, 2 when the
budget did not allow a single run. A bad matrix raises UsageError (254 in the CLI).
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from harness.console import err, out
from harness.errors import EXIT_INVALID, EXIT_UNKNOWN, EXIT_VALID, UsageError
from harness.report.coverage import nightly_coverage
from harness.report.expect import Judgement, LostRun, judge
from harness.report.index import is_run_dir, render_index, run_dirs
from harness.report.junit import JUNIT_FILE, write_junit, write_run_junit
from harness.report.report import REPORT_FILE, render_report
from harness.report.summary import RunSummary, format_duration, summarize_dir
from harness.results import write_json

DEFAULT_MATRIX = Path(__file__).with_name("matrix_default.yaml")
NIGHTLY_JUNIT = "nightly-junit.xml"  # a stable path for CI, overwritten by each nightly
ESTIMATE_FACTOR = 2.0
STOP_GRACE_S = 30.0  # SIGTERM to SIGKILL: time for `kchaos run` to stop its own processes
RUN_FOLDER = re.compile(r"^run folder:\s*(\S.*?)\s*$")
LOG_WIDTH = 160
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


_DURATION = re.compile(r"(\d+(?:\.\d+)?)([hms]?)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "": 1.0}


def parse_duration(text: str) -> float:
    """`--budget` values: "90" or "90s", "45m", "2h", "1h30m" -> seconds."""
    spec = text.strip().lower()
    parts = _DURATION.findall(spec)
    if not spec or "".join(n + u for n, u in parts) != spec or not parts:
        raise UsageError(f"--budget {text!r}: give a duration such as 90s, 45m, 2h or 1h30m")
    seconds = sum(float(n) * _UNIT_S[u] for n, u in parts)
    if seconds <= 0:
        raise UsageError(f"--budget {text!r}: the budget must be positive")
    return seconds


@dataclass(frozen=True)
class Cell:
    profile: str
    seed: int
    bugs: tuple[str, ...] = ()
    args: tuple[str, ...] = ()  # this cell's own extra `kchaos run` options

    @property
    def name(self) -> str:
        extra = f" {' '.join(self.args)}" if self.args else ""
        return f"{self.profile} seed {self.seed} bugs {','.join(self.bugs) or '-'}{extra}"

    def argv(self, time_limit_s: float, results_dir: Path, extra: Sequence[str]) -> list[str]:
        # --results-dir is a global kchaos option: it goes before the command.
        args = ["--results-dir", str(results_dir), "run", "--profile", self.profile,
                "--seed", str(self.seed)]
        if self.bugs:  # no --bugs at all means the fixed worker
            args += ["--bugs", ",".join(self.bugs)]
        args += ["--time-limit", f"{time_limit_s:g}"]
        return args + list(extra) + list(self.args)


@dataclass(frozen=True)
class Matrix:
    cells: tuple[Cell, ...]
    time_limit_s: float
    run_timeout_s: float
    extra_args: tuple[str, ...] = ()


def _bugs(raw: Any, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):
        return tuple(b.strip() for b in raw.split(",") if b.strip())
    if isinstance(raw, list) and all(isinstance(b, str) for b in raw):
        return tuple(raw)
    raise UsageError(f"{where}: bugs must be a list of names or a comma string, got {raw!r}")


def _list(doc: Mapping[str, Any], key: str, kind: type, where: str) -> list[Any]:
    raw = doc.get(key, [])
    if not isinstance(raw, list) or not all(isinstance(v, kind) for v in raw):
        raise UsageError(f"{where}: `{key}` must be a list of {kind.__name__}")
    return raw


def _number(doc: Mapping[str, Any], key: str, default: float, where: str) -> float:
    value = doc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise UsageError(f"{where}: `{key}` must be a positive number of seconds")
    return float(value)


def parse_matrix(doc: Any, where: str = "matrix") -> Matrix:
    if not isinstance(doc, Mapping):
        raise UsageError(f"{where}: expected a mapping with profiles, seeds, bugs")
    seeds = _list(doc, "seeds", int, where) or [1]
    profiles = _list(doc, "profiles", str, where)
    bug_sets = [_bugs(b, where) for b in doc.get("bugs", [[]]) or [[]]]
    per_seed: list[tuple[Cell, list[int]]] = [
        (Cell(p, 0, b), seeds) for p in profiles for b in bug_sets
    ]
    for n, extra in enumerate(_list(doc, "include", dict, where)):
        if not isinstance(extra.get("profile"), str):
            raise UsageError(f"{where}: include[{n}] needs a `profile`")
        own = _list(extra, "seeds", int, f"{where}: include[{n}]") or seeds
        args = _list(extra, "args", str, f"{where}: include[{n}]")
        cell = Cell(extra["profile"], 0, _bugs(extra.get("bugs"), where), tuple(args))
        per_seed.append((cell, own))
    # Seed-major order: if the budget runs out, every cell has had its first seed.
    cells = [
        dataclasses.replace(cell, seed=seed)
        for seed in sorted({s for _, ss in per_seed for s in ss})
        for cell, ss in per_seed
        if seed in ss
    ]
    if not cells:
        raise UsageError(f"{where}: the matrix has no runs (no profiles and no include)")
    time_limit = _number(doc, "time_limit_s", 60.0, where)
    extra_args = doc.get("extra_args") or []
    if not isinstance(extra_args, list):
        raise UsageError(f"{where}: `extra_args` must be a list of strings")
    return Matrix(
        cells=tuple(dict.fromkeys(cells)),  # a cell listed twice runs once
        time_limit_s=time_limit,
        run_timeout_s=_number(doc, "run_timeout_s", 3 * time_limit + 600, where),
        extra_args=tuple(str(a) for a in extra_args),
    )


def load_matrix(path: Path | None) -> Matrix:
    path = path or DEFAULT_MATRIX
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise UsageError(f"cannot read the matrix {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise UsageError(f"the matrix {path} is not valid YAML: {exc}") from exc
    return parse_matrix(doc, str(path))


@dataclass(frozen=True)
class Attempt:
    cell: Cell
    exit_code: int | None  # None: stopped by the nightly (timeout)
    run_dir: Path | None
    duration_s: float
    note: str = ""


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
    """One `kchaos run` as a subprocess, its output kept in the nightly's log folder."""
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
        except BaseException:  # Ctrl-C: never leave the run's processes behind
            _stop_group(proc)
            raise
    stdout = Path(f"{stem}.out").read_text(errors="replace")
    run_dir = _run_folder(stdout, before, results_dir)
    if run_dir is None and not note:
        note = f"no run folder: {_last_line(Path(f'{stem}.err'))} (see {stem}.err)"
    return Attempt(cell, code, run_dir, time.monotonic() - started, note)


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
            subprocess.run(argv, stdout=log, stderr=log, timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.write(f"kchaos clean failed: {exc}\n".encode())


def run_matrix(
    matrix: Matrix, budget_s: float, start: Callable[[Cell, int], Attempt],
    clock: Callable[[], float] = time.monotonic,
) -> tuple[list[Attempt], list[Cell]]:
    """Run cells in order while the next one fits in the budget; return what ran and what
    was not started."""
    began = clock()
    attempts: list[Attempt] = []
    for n, cell in enumerate(matrix.cells):
        slowest = max((a.duration_s for a in attempts), default=0.0)
        estimate = slowest or ESTIMATE_FACTOR * matrix.time_limit_s
        if clock() - began + estimate > budget_s:
            return attempts, list(matrix.cells[n:])
        attempt = start(cell, n + 1)
        attempts.append(attempt)
        verdict = attempt.exit_code if attempt.exit_code is not None else "stopped"
        err.print(f"[{n + 1}/{len(matrix.cells)}] {cell.name}: exit {verdict} "
                  f"in {format_duration(attempt.duration_s)} {attempt.note}", highlight=False)
    return attempts, []


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


def _print_summary(
    attempts: Sequence[Attempt], summaries: Mapping[int, RunSummary], skipped: Sequence[Cell],
    verdict: Judgement,
) -> None:
    # CI logs are not terminals: rich would assume 80 columns and fold every cell.
    console = out if out.is_terminal else Console(width=LOG_WIDTH)
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
    console.print(table)
    if verdict.detections:
        bugs = Table(title="bug detection (caught by at least one run)")
        for col in ("bugs", "runs", "caught", "result"):
            bugs.add_column(col)
        for d in verdict.detections:
            result = "[green]detected[/]" if d.detected else "[red]UNDETECTED[/]"
            bugs.add_row(d.name, str(d.runs), str(d.caught), result)
        console.print(bugs)
    if skipped:
        console.print(f"{len(skipped)} run(s) not started (budget): "
                      + "; ".join(c.name for c in skipped), highlight=False)


def nightly(
    results_dir: Path, budget_s: float, matrix_path: Path | None, kchaos_argv: list[str]
) -> int:
    matrix = load_matrix(matrix_path)
    results_dir = Path(results_dir)
    log_dir = results_dir / f"nightly-{time.strftime('%Y%m%dT%H%M%S')}"
    log_dir.mkdir(parents=True, exist_ok=True)
    err.print(f"nightly: {len(matrix.cells)} run(s) in the matrix, budget "
              f"{format_duration(budget_s)}, logs in {log_dir}", highlight=False)

    def start(cell: Cell, number: int) -> Attempt:
        return launch(kchaos_argv, cell, matrix, results_dir, log_dir, number)

    attempts, skipped = run_matrix(matrix, budget_s, start)
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
    verdict = judge(list(summaries.values()), lost)
    try:
        index: Path | str = render_index(results_dir)
    except Exception as exc:  # the verdict and the JUnit file matter more than the page
        index = f"not written ({type(exc).__name__}: {exc})"
    junit = write_junit(list(summaries.values()), log_dir / JUNIT_FILE, lost)
    (results_dir / NIGHTLY_JUNIT).write_text(junit.read_text())
    write_json(log_dir / "nightly.json", {
        "budget_s": budget_s,
        "runs": [{**dataclasses.asdict(a), "run_dir": str(a.run_dir or "")} for a in attempts],
        "not_started": [dataclasses.asdict(c) for c in skipped],
        "ok": verdict.ok,
        "reasons": verdict.reasons(),
    })

    _print_summary(attempts, summaries, skipped, verdict)
    nightly_coverage([s.run_dir for s in summaries.values()], log_dir, out)
    out.print(f"index: {index}\njunit: {results_dir / NIGHTLY_JUNIT}", highlight=False)
    if not attempts:
        est = format_duration(ESTIMATE_FACTOR * matrix.time_limit_s)
        out.print(f"[yellow]nightly: no run fits in the budget (one run: about {est})[/]")
        return EXIT_UNKNOWN
    for reason in verdict.reasons():
        out.print(f"[red]FAIL[/] {reason}", highlight=False)
    if verdict.ok:
        out.print(f"[green]nightly passed[/]: {len(attempts)} run(s)", highlight=False)
        return EXIT_VALID
    return EXIT_INVALID
