"""junit.xml per run and per nightly: valid against the JUnit shape CI systems read, with
counts that add up, and failure texts that carry the anomalies and the repro command."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import pytest
import xmlschema
from synth_run import Spec, make_run

from harness.report import write_nightly_junit, write_run_junit
from harness.report.expect import LostRun

SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))


def _validated(path: Path) -> ET.Element:
    SCHEMA.validate(str(path))
    root = ET.parse(path).getroot()
    # What an XSD cannot say: the counts match the test cases (CI shows these numbers).
    for suite in [root, *root.iter("testsuite")]:
        cases = list(suite.iter("testcase"))
        assert int(suite.get("tests", "-1")) == len(cases)
        for kind, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            assert int(suite.get(attr, "0")) == sum(1 for c in cases if c.find(kind) is not None)
    return root


def test_valid_run_passes(valid_run: Path) -> None:
    root = _validated(write_run_junit(valid_run))
    assert root.get("tests") == "1" and root.get("failures") == "0" and root.get("errors") == "0"
    case = root.find("testsuite/testcase")
    assert case is not None and case.get("name") == valid_run.name
    assert case.get("classname") == "kchaos.all"


def test_invalid_run_fails_with_anomalies_and_repro(invalid_run: Path) -> None:
    root = _validated(write_run_junit(invalid_run))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == "anomalies: dedup-skip: 3, lost-history: 1"
    text = failure.text or ""
    assert "dedup-skip: 3" in text and f"reproduce: kchaos repro {invalid_run}" in text


def test_crashed_run_is_an_error(crashed_run: Path) -> None:
    root = _validated(write_run_junit(crashed_run))
    error = root.find("testsuite/testcase/error")
    assert error is not None and "harness failed" in (error.get("message") or "")
    assert "results.json is missing" in (error.text or "")


def test_unknown_run_names_the_undecided_checks(results_dir: Path) -> None:
    run_dir = make_run(results_dir, "u", Spec(verdict="unknown"))
    error = _validated(write_run_junit(run_dir)).find("testsuite/testcase/error")
    assert error is not None and "stale-global" in (error.get("message") or "")


def test_control_characters_do_not_break_the_xml(results_dir: Path) -> None:
    run_dir = make_run(results_dir, "ctl", Spec(profile="a\x00b\x1bc"))
    _validated(write_run_junit(run_dir))


def _nightly(results_dir: Path, specs: dict[str, Spec], lost: list[LostRun]) -> ET.Element:
    dirs = [make_run(results_dir, name, spec) for name, spec in specs.items()]
    return _validated(write_nightly_junit(dirs, results_dir / "nightly.xml", lost))


def _at(hour: int) -> datetime:
    return datetime(2025, 10, 9, hour, tzinfo=UTC)


def test_nightly_green_when_expectations_hold(results_dir: Path) -> None:
    root = _nightly(results_dir, {
        "fixed-1": Spec(started_at=_at(1)),
        "bug-1": Spec(verdict="valid", bugs=("KAFKA-7672",), started_at=_at(2)),
        "bug-2": Spec(verdict="invalid", bugs=("KAFKA-7672",), started_at=_at(3)),
    }, [])
    assert root.get("failures") == "0" and root.get("errors") == "0"
    names = [s.get("name") for s in root.iter("testsuite")]
    assert names == ["kchaos.nightly.fixed-worker", "kchaos.nightly.bug.KAFKA-7672"]
    detect = root.find(".//testcase[@name='detects KAFKA-7672']")
    assert detect is not None and "caught in 1 of 2" in (detect.findtext("system-out") or "")


@pytest.mark.parametrize("broken", ["false-alarm", "undetected", "lost-fixed"])
def test_nightly_red_when_an_expectation_breaks(results_dir: Path, broken: str) -> None:
    specs = {"fixed": Spec(verdict="invalid" if broken == "false-alarm" else "valid"),
             "bug": Spec(verdict="valid" if broken == "undetected" else "invalid",
                         bugs=("KIP-406",), profile="KIP-406")}  # aimed at it: gated
    lost = [LostRun("all seed 2 bugs -", "all", "2", (), "exit 255")] \
        if broken == "lost-fixed" else []
    root = _nightly(results_dir, specs, lost)
    assert int(root.get("failures", "0")) + int(root.get("errors", "0")) == 1
