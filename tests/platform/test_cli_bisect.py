"""`kchaos bisect` refuses what it cannot bisect in one line and 254, before any replay:
a run of the Python worker, a valid run without the anomaly to search for, a range where
Maven Central serves too few releases, a malformed range."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_bad_input, kchaos

from faults.plan import plan
from harness.config.run import RunConfig

SERVED = ["2.0.1", "2.1.1", "4.1.2", "4.2.0", "4.2.1", "4.2.2"]


def _run(results: Path, sut: str = "kstreams", anomalies: dict[str, int] | None = None,
         **settings: str) -> Path:
    run_dir = results / f"20261126T000000-KAFKA-20685-s1-{sut}"
    run_dir.mkdir(parents=True)
    given = {"kstreams_version": "4.1.2" if sut == "kstreams" else None, **settings}
    config = RunConfig(profile="kill", seed=1, time_limit_s=30, sut=sut, **given)
    (run_dir / "run.json").write_text(json.dumps({"config": config.to_json(), "exit_code": 1}))
    (run_dir / "plan.json").write_text(json.dumps(plan(1, "kill", 2, 1, 30).to_json()))
    counts = {"dedup-skip": 3} if anomalies is None else anomalies
    (run_dir / "results.json").write_text(json.dumps({"anomaly_counts": counts}))
    return run_dir


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Maven Central unreachable, its release list cached: no network in the test."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "kafka-streams-maven-metadata.xml").write_text(
        "".join(f"<version>{v}</version>" for v in SERVED))
    monkeypatch.setenv("KCHAOS_CACHE", str(cache))
    monkeypatch.setenv("KCHAOS_MAVEN_REPOSITORY", "http://127.0.0.1:1")
    return tmp_path


def test_a_python_worker_run_is_refused(offline: Path) -> None:
    run_dir = _run(offline / "results", sut="python")
    assert_bad_input(kchaos("bisect", str(run_dir), cwd=offline), "--sut python", "kstreams")


def test_a_valid_run_needs_the_anomaly_to_search_for(offline: Path) -> None:
    """From a valid run, bisect searches toward where a bug begins: it must be told what
    the bug shows; the classes are checks' names."""
    run_dir = _run(offline / "results", anomalies={})
    assert_bad_input(kchaos("bisect", str(run_dir), cwd=offline), "found no anomaly",
                     "--anomaly")
    result = kchaos("bisect", str(run_dir), "--anomaly", "lost-histroy", cwd=offline)
    assert_bad_input(result, "--anomaly lost-histroy", "lost-history")
    # Named right, it gets past the refusals (and is stopped at the range: none served).
    result = kchaos("bisect", str(run_dir), "--anomaly", "lost-history",
                    "--versions", "5.0.0..5.1.0", cwd=offline)
    assert_bad_input(result, "--versions 5.0.0..5.1.0")


@pytest.mark.parametrize("versions", ["5.0.0..5.1.0", "4.2.2..", "..2.0.1"])
def test_a_range_with_too_few_releases_is_refused(offline: Path, versions: str) -> None:
    run_dir = _run(offline / "results")
    result = kchaos("bisect", str(run_dir), "--versions", versions, cwd=offline)
    assert_bad_input(result, f"--versions {versions}", "release(s)")


def test_a_malformed_range_is_refused(offline: Path) -> None:
    run_dir = _run(offline / "results")
    result = kchaos("bisect", str(run_dir), "--versions", "4.1", cwd=offline)
    assert_bad_input(result, "range A..B")
    assert not list((offline / "results").glob("bisect-*"))  # nothing written


def test_a_streams_protocol_run_is_bisected_only_over_releases_that_take_it(
    offline: Path,
) -> None:
    """4.2.0..4.4.0 holds four served releases, but only 4.4.0 takes the streams protocol
    with the app's static membership: too few to bisect, said in one line."""
    (offline / "cache" / "kafka-streams-maven-metadata.xml").write_text(
        "".join(f"<version>{v}</version>" for v in [*SERVED, "4.4.0"]))
    run_dir = _run(offline / "results", kstreams_version="4.4.0", kafka_version="4.4.0",
                   group_protocol="streams")
    result = kchaos("bisect", str(run_dir), "--versions", "4.2.0..4.4.0", cwd=offline)
    assert_bad_input(result, "release(s)", "--group-protocol streams", "4.4.0 on")
