"""Read a run folder for the reports without ever raising.

A run that crashed leaves some files missing, some half-written: every reader returns what
it could parse plus a `FileState` (ok / missing / damaged) that the report shows, so a
reader learns what is absent instead of getting a traceback. Nothing here validates the
contract strictly (that is the checker's job): shapes that do not fit become "damaged".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from common.files import jsonl_objects
from harness.report.series import Accumulator
from workloads.ledger.trace_contract import COMMIT_EVENTS

RUN_FILE = "run.json"
PLAN_FILE = "plan.json"
RESULTS_FILE = "results.json"
HISTORY_FILE = "history.jsonl"
PODS_DIR = "pods"
TRACE_FILE = "trace.jsonl"
# Files whose presence makes a folder a run folder (a nightly's log folder has none).
RUN_MARKERS = (RUN_FILE, RESULTS_FILE, PLAN_FILE, HISTORY_FILE)
# The timeline plots COMMIT_EVENTS (the trace contract's); other trace lines are not even
# parsed (traces are large).

Status = Literal["ok", "missing", "damaged"]


@dataclass(frozen=True)
class FileState:
    name: str  # relative to the run folder
    status: Status
    detail: str = ""


def read_json_object(run_dir: Path, name: str) -> tuple[dict[str, Any] | None, FileState]:
    """A JSON file that must hold an object; anything else is reported as damaged."""
    path = run_dir / name
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return None, FileState(name, "missing")
    except OSError as exc:
        return None, FileState(name, "damaged", f"unreadable: {exc.strerror or exc}")
    try:
        data = json.loads(text)
    except ValueError as exc:
        return None, FileState(name, "damaged", f"not JSON ({exc})")
    if not isinstance(data, dict):
        return None, FileState(name, "damaged", f"holds a {type(data).__name__}, not an object")
    return data, FileState(name, "ok")


def scan_jsonl(
    run_dir: Path,
    name: str,
    sink: Callable[[dict[str, Any]], None],
    keep: Callable[[str], bool] = lambda line: True,
) -> FileState:
    """Feed each object line of a JSONL file that passes `keep` (a cheap text filter that
    spares json.loads on lines nobody needs) to `sink`; nothing is held per line, so a
    history of millions of ops fits. Unparsable lines are counted, not fatal: a killed
    writer leaves a torn last line, and the lines before it are still good evidence."""
    bad = 0
    first_bad = 0
    try:
        for n, _, row in jsonl_objects(run_dir / name, keep):
            if row is not None:
                sink(row)
            else:
                bad += 1
                first_bad = first_bad or n
    except FileNotFoundError:
        return FileState(name, "missing")
    except OSError as exc:
        return FileState(name, "damaged", f"unreadable: {exc.strerror or exc}")
    if bad:
        detail = f"{bad} unreadable line(s), first at line {first_bad}; the rest is shown"
        return FileState(name, "damaged", detail)
    return FileState(name, "ok")


def _is_commit_line(line: str) -> bool:
    return any(f'"{event}"' in line for event in COMMIT_EVENTS)


def _is_outcome_line(line: str) -> bool:
    # Invocations carry nothing the timeline needs (the completion says when it was acked).
    return '"invoke"' not in line


@dataclass
class RunFiles:
    """Everything the report reads from one run folder, each file with its state."""

    run_dir: Path
    run: dict[str, Any] = field(default_factory=dict)
    plan: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] | None = None
    history: Accumulator = field(default_factory=Accumulator)  # ops and pods' commits
    states: list[FileState] = field(default_factory=list)

    @property
    def problems(self) -> list[FileState]:
        return [s for s in self.states if s.status != "ok"]


def pod_names(run_dir: Path) -> list[str]:
    try:
        return sorted(p.name for p in (run_dir / PODS_DIR).iterdir() if p.is_dir())
    except OSError:
        return []


def read_verdict_files(run_dir: Path) -> RunFiles:
    """run.json and results.json only: what the index and JUnit need (cheap)."""
    files = RunFiles(run_dir=run_dir)
    run, state = read_json_object(run_dir, RUN_FILE)
    files.run = run or {}
    files.states.append(state)
    files.results, state = read_json_object(run_dir, RESULTS_FILE)
    files.states.append(state)
    return files


def read_run_files(run_dir: Path) -> RunFiles:
    """Everything the report shows, including the history and the pods' commit events."""
    files = read_verdict_files(run_dir)
    plan, state = read_json_object(run_dir, PLAN_FILE)
    files.plan = plan or {}
    files.states.insert(1, state)
    files.states.append(scan_jsonl(run_dir, HISTORY_FILE, files.history.add_op,
                                   _is_outcome_line))
    for pod in pod_names(run_dir):

        def commit(event: dict[str, Any], pod: str = pod) -> None:
            if event.get("event") in COMMIT_EVENTS:
                files.history.add_commit(pod, event)

        path = f"{PODS_DIR}/{pod}/{TRACE_FILE}"
        files.states.append(scan_jsonl(run_dir, path, commit, _is_commit_line))
    return files


def dig(data: Any, *keys: str, default: Any = None) -> Any:
    """data[k1][k2]... or `default` when any level is absent or not a mapping."""
    for key in keys:
        if not isinstance(data, Mapping) or key not in data:
            return default
        data = data[key]
    return data
