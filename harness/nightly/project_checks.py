"""Project checks: commands of the project's own that the nightly runs besides its chaos
runs (issue 29), such as `scripts/test-fresh.sh` (set-up and the fast test tier in a fresh
container: a missing install step is caught nightly, not by the next person on a new
machine).

A check is declared in the matrix (`project_checks`, matrix.py): its name, its command
(run from the project's root folder), its timeout and what it needs (`docker`: a Docker
engine that answers, or root, which may start one). The nightly runs each as it runs a
cell: a subprocess in its own session, holding one of the `jobs` places, stopped (SIGTERM
to its process group, then SIGKILL) at its timeout or when the nightly is interrupted,
its output in `check-<name>.log` in the nightly's folder. Passed when it exits 0; failed
(exit code, or timed out) fails the nightly. Where it cannot run it is not started, with
the reason, and the rest of the nightly goes on, as docker cells without an engine.

Each check's record (harness.report.nightlies.CheckRecord: name, command, status, exit
code, seconds, log) goes into nightly.json's `project_checks`, the nightly page, the
terminal summary and, as a test suite of its own, the JUnit file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from common.files import write_atomically
from harness.nightly.matrix import ProjectCheck
from harness.nightly.supervise import signal_group, stop_group
from harness.report.nightlies import (
    FAILED,
    INTERRUPTED,
    NOT_STARTED,
    PASSED,
    TIMED_OUT,
    CheckRecord,
)

ROOT = Path(__file__).resolve().parents[2]  # the project's root: where checks run
ENGINE_STATUS = ("bash", "scripts/docker-engine.sh", "status")
JUNIT_SUITE = "kchaos.nightly.project-checks"
LOG_TAIL_LINES = 40  # of a failed check's log, in its JUnit failure


def log_name(check: ProjectCheck) -> str:
    return f"check-{check.name}.log"


# -- can it start here? -----------------------------------------------------------------------


def _engine_status() -> tuple[int, str]:
    """scripts/docker-engine.sh status: its exit code and last line (0: an engine answers)."""
    try:
        done = subprocess.run(ENGINE_STATUS, cwd=ROOT, capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 255, f"{type(exc).__name__}: {exc}"
    lines = (done.stderr + done.stdout).strip().splitlines()
    return done.returncode, lines[-1] if lines else ""


def _is_root() -> bool:
    return os.geteuid() == 0


def why_not_here(check: ProjectCheck) -> str:
    """Why the check cannot run on this machine; "" when it can."""
    if "docker" in check.needs and not _is_root():
        code, said = _engine_status()
        if code != 0:
            return (f"no Docker engine answers (scripts/docker-engine.sh status: exit {code}"
                    f"{', ' + said if said else ''}) and only root may start one: start Docker "
                    "for this user, or run the nightly as root")
    return ""


def not_started(check: ProjectCheck, note: str) -> CheckRecord:
    return CheckRecord(check.name, check.command, NOT_STARTED, note=note)


# -- one check as a subprocess ----------------------------------------------------------------


@dataclass
class CheckProcess:
    """A project check in progress, its output in the nightly's folder."""

    check: ProjectCheck
    proc: subprocess.Popen[bytes]
    started: float = field(default_factory=time.monotonic)

    def poll(self) -> CheckRecord | None:
        code = self.proc.poll()
        if code is not None:
            return self._record(PASSED if code == 0 else FAILED, code, "")
        if time.monotonic() - self.started > self.check.timeout_s:
            stop_group(self.proc)
            return self._record(TIMED_OUT, None,
                                f"stopped after {self.check.timeout_s:g} s (timeout_s)")
        return None

    def terminate(self) -> None:
        signal_group(self.proc, signal.SIGTERM)

    def stop(self, note: str) -> CheckRecord:
        stop_group(self.proc)
        return self._record(INTERRUPTED, None, note)

    def _record(self, status: str, code: int | None, note: str) -> CheckRecord:
        return CheckRecord(self.check.name, self.check.command, status, code,
                           time.monotonic() - self.started, log_name(self.check), note)


def launch_check(check: ProjectCheck, log_dir: Path) -> CheckProcess | CheckRecord:
    """Start the check in its own session; a failed record at once if it cannot start."""
    with open(log_dir / log_name(check), "wb") as log:
        try:
            proc = subprocess.Popen(list(check.command), cwd=ROOT, stdout=log,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        except OSError as exc:
            return CheckRecord(check.name, check.command, FAILED, None, 0.0, log_name(check),
                               f"could not start {check.command[0]}: {exc}")
    return CheckProcess(check, proc)


# -- JUnit ------------------------------------------------------------------------------------


def _tail(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as exc:
        return f"(no log: {exc.strerror or exc})"
    return "\n".join(lines[-LOG_TAIL_LINES:])


def _clean(text: str) -> str:
    """What XML 1.0 cannot carry (a log may hold control characters) replaced."""
    return "".join(c if c in "\t\n\r" or " " <= c <= "\ud7ff" or "\ue000" <= c <= "\ufffd"
                   or c >= "\U00010000" else "\ufffd" for c in text)


def add_to_junit(junit: Path, checks: Sequence[CheckRecord]) -> None:
    """Append the checks' test suite to the nightly's JUnit file (written by
    harness.report.junit for the runs) and correct its totals: passed passes, failed and
    timed out fail, interrupted and not started are skipped."""
    if not checks:
        return
    root = ET.parse(junit).getroot()
    kinds = {PASSED: "pass", FAILED: "failure", TIMED_OUT: "failure"}
    counts = {"tests": len(checks), "failures": 0, "errors": 0, "skipped": 0}
    suite = ET.SubElement(root, "testsuite", name=JUNIT_SUITE, timestamp=time.strftime(
        "%Y-%m-%dT%H:%M:%S", time.gmtime()), hostname=os.uname().nodename)
    for c in checks:
        case = ET.SubElement(suite, "testcase", name=_clean(c.name), classname=JUNIT_SUITE,
                             time=f"{c.duration_s:.3f}")
        kind = kinds.get(c.status, "skipped")
        text = f"{' '.join(c.command)}\n{c.outcome}\nlog: {c.log or '-'}"
        if kind == "failure":
            counts["failures"] += 1
            failure = ET.SubElement(case, "failure", message=_clean(c.outcome), type="failure")
            failure.text = _clean(f"{text}\n{_tail(junit.parent / c.log) if c.log else ''}")
        elif kind == "skipped":
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=_clean(c.outcome))
        ET.SubElement(case, "system-out").text = _clean(text)
    took = sum(c.duration_s for c in checks)
    for key, value in counts.items():
        suite.set(key, str(value))
        root.set(key, str(int(root.get(key, "0")) + value))
    suite.set("time", f"{took:.3f}")
    root.set("time", f"{float(root.get('time', '0')) + took:.3f}")
    ET.indent(root)
    write_atomically(junit, '<?xml version="1.0" encoding="UTF-8"?>\n'
                     + ET.tostring(root, encoding="unicode"))
