"""JUnit XML, the shape CI systems read (testsuites > testsuite > testcase > failure|error|
skipped, with tests/failures/errors/skipped/time counts on the suites).

Per run (`<run>/junit.xml`): one test case, the run; it fails when the verdict is invalid
(failure text: the anomalies and the repro command) and errors when nothing was decided.
Per nightly: one test case per run judged by expectation (expect.py): fixed-worker runs
must be valid; bug runs pass when they catch the bug, and each bug switch set has one more
test case that fails when none of its runs caught it. The JUnit file is red exactly when
the nightly's exit code is non-zero.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from common.files import write_atomically
from harness.report.expect import LostRun, bug_key, judge
from harness.report.pages import require_dir
from harness.report.report import REPORT_FILE
from harness.report.run_files import read_verdict_files
from harness.report.summary import RunSummary, summarize, summarize_dir

JUNIT_FILE = "junit.xml"
# Characters XML 1.0 cannot carry at all (a worker log line may contain them).
_ILLEGAL_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _ILLEGAL_XML.sub("\ufffd", text)


@dataclass(frozen=True)
class Case:
    """One test case before it becomes XML: kind is pass, failure, error or skipped."""

    name: str
    classname: str
    time_s: float
    kind: str = "pass"
    message: str = ""
    text: str = ""
    out: str = ""


def _run_text(s: RunSummary) -> str:
    lines = [
        f"verdict: {s.label}" + ("" if s.exit_code is None else f" (exit {s.exit_code})"),
        f"profile {s.profile}, seed {s.seed}, bugs {','.join(s.bugs) or 'none'}, {s.guarantee}",
    ]
    if s.anomaly_counts:
        lines.append("anomalies:")
        lines += [f"  {k}: {v}" for k, v in sorted(s.anomaly_counts.items())]
    lines += [f"{p.name} is {p.status}{': ' + p.detail if p.detail else ''}" for p in s.problems]
    lines += [f"reproduce: {s.repro}", f"report: {s.run_dir / REPORT_FILE}"]
    return "\n".join(lines)


def _unknown_checks(run_dir: Path) -> str:
    checks = read_verdict_files(run_dir).results or {}
    found = checks.get("checks")
    if not isinstance(found, dict):
        found = {}
    names = [n for n, c in found.items() if not isinstance(c, dict) or c.get("valid") == "unknown"]
    return ", ".join(names) or "none named"


def verdict_case(s: RunSummary, classname: str) -> Case:
    """The run as a test of the system under test: valid passes."""
    base = Case(s.run_id, classname, s.duration_s or 0.0, text=_run_text(s))
    if s.harness_failed:
        why = "no verdict" if s.verdict is None else f"exit {s.exit_code}"
        return _with(base, "error", f"harness failed ({why})")
    if s.verdict is False:
        return _with(base, "failure", f"anomalies: {s.anomalies_text}")
    if s.verdict == "unknown":
        return _with(base, "error", f"unknown: checks undecided: {_unknown_checks(s.run_dir)}")
    return _with(base, "pass", "", out=base.text)


def _with(case: Case, kind: str, message: str, out: str = "") -> Case:
    return Case(case.name, case.classname, case.time_s, kind, message, case.text, out)


def _suite(name: str, cases: Sequence[Case], timestamp: str, host: str) -> ET.Element:
    kinds = [c.kind for c in cases]
    suite = ET.Element(
        "testsuite",
        name=_clean(name),
        tests=str(len(cases)),
        failures=str(kinds.count("failure")),
        errors=str(kinds.count("error")),
        skipped=str(kinds.count("skipped")),
        time=f"{sum(c.time_s for c in cases):.3f}",
        timestamp=timestamp,
        hostname=host,
    )
    for c in cases:
        case = ET.SubElement(
            suite, "testcase", name=_clean(c.name), classname=_clean(c.classname),
            time=f"{c.time_s:.3f}",
        )
        if c.kind != "pass":
            child = ET.SubElement(case, c.kind, message=_clean(c.message))
            if c.kind != "skipped":
                child.set("type", c.kind if c.kind == "error" else "anomalies")
                child.text = _clean(c.text)
        if c.out:
            ET.SubElement(case, "system-out").text = _clean(c.out)
    return suite


def _document(name: str, suites: Iterable[tuple[str, Sequence[Case]]]) -> str:
    timestamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    host = socket.gethostname()
    root = ET.Element("testsuites", name=name)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    elapsed = 0.0
    for suite_name, cases in suites:
        suite = _suite(suite_name, cases, timestamp, host)
        root.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
        elapsed += sum(c.time_s for c in cases)
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{elapsed:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def write_run_junit(run_dir: Path) -> Path:
    """Write `run_dir/junit.xml` (one test case: the run) and return its path."""
    run_dir = require_dir(run_dir)
    s = summarize(read_verdict_files(run_dir))
    classname = f"kchaos.{s.profile}"
    xml = _document("kchaos", [(classname, [verdict_case(s, classname)])])
    return write_atomically(run_dir / JUNIT_FILE, xml)


def _bug_case(s: RunSummary, classname: str) -> Case:
    base = Case(s.run_id, classname, s.duration_s or 0.0, text=_run_text(s))
    if s.harness_failed:
        # Not a failure by itself: detection is judged across the bug's runs (below).
        return _with(base, "skipped", f"no verdict ({s.outcome}); detection judged across runs",
                     out=base.text)
    state = "caught" if s.detected else f"not caught in this run ({s.label})"
    return _with(base, "pass", "", out=f"{state}\n{base.text}")


def _lost_case(r: LostRun, classname: str) -> Case:
    base = Case(r.name, classname, 0.0, text=f"{r.reason}\nprofile {r.profile}, seed {r.seed}")
    if r.bugs:
        return _with(base, "skipped", f"left no run folder: {r.reason}")
    return _with(base, "error", f"left no run folder: {r.reason}")


def write_nightly_junit(
    run_dirs: Sequence[Path], path: Path, lost: Sequence[LostRun] = ()
) -> Path:
    """Write the nightly's JUnit file at `path`: a suite for the fixed worker, one per bug
    switch set (its runs plus a `detects <bugs>` case); `lost` runs left no folder."""
    return write_junit([summarize_dir(Path(d)) for d in run_dirs], path, lost)


def write_junit(runs: Sequence[RunSummary], path: Path, lost: Sequence[LostRun] = ()) -> Path:
    """write_nightly_junit from summaries (the nightly corrects their exit codes)."""
    verdict = judge(runs, lost)
    suites: list[tuple[str, list[Case]]] = []
    fixed = "kchaos.nightly.fixed-worker"
    fixed_cases = [verdict_case(s, fixed) for s in runs if s.fixed_worker]
    fixed_cases += [_lost_case(r, fixed) for r in lost if not r.bugs]
    if fixed_cases:
        suites.append((fixed, fixed_cases))
    for detection in verdict.detections:
        classname = f"kchaos.nightly.bug.{detection.name}"
        cases = [_bug_case(s, classname) for s in runs if bug_key(s.bugs) == detection.bugs]
        cases += [_lost_case(r, classname) for r in lost if bug_key(r.bugs) == detection.bugs]
        summary = f"caught in {detection.caught} of {detection.runs} run(s)"
        check = Case(f"detects {detection.name}", classname, 0.0, text=summary, out=summary)
        cases.append(check if detection.detected or not detection.gated else _with(
            check, "failure", f"{detection.name} went undetected in all {detection.runs} run(s)"
        ))
        suites.append((classname, cases))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomically(path, _document("kchaos nightly", suites))
