"""The report of an app run (`--sut app`) is about the app, checked in real headless
Chromium: no worker wording ("bugs none (fixed worker)"), the Kafka Streams release and the
app's entry and guarantee shown, no ledger settings, its topics' rates and its group's lag
drawn from the run's `topic-progress` samples (before: a flat zero client throughput and
"no commit offsets in the traces"), and the oracle's part as before."""

from __future__ import annotations

import json
import re
from pathlib import Path

import headless
import pytest
from synth_run import PODS, SECONDS, T0_NS, Spec, make_run

from harness.report import render_report
from harness.report.series import build_timeline

INPUT, OUTPUT = "streams-plaintext-input", "streams-wordcount-output"


def progress_ops() -> list[dict[str, object]]:
    """A sample every 3 s: the input grows 100/s, the output 400/s, the lag climbs while
    pod-1 is down (8-12 s) and drains after."""
    ops: list[dict[str, object]] = []
    for i, t in enumerate(range(0, SECONDS + 1, 3)):
        lag = 300 if 8 <= t <= 14 else 20
        ops.append({"index": 10_000 + i, "time_ns": T0_NS + t * 10**9, "process": "harness",
                    "type": "info", "f": "topic-progress",
                    "value": {"lag": lag, "in": {INPUT: 100 * t}, "out": {OUTPUT: 400 * t}}})
    return ops


def make_app_run(results_dir: Path) -> Path:
    run_dir = make_run(results_dir, "20251009T040000-kill-s1", Spec(profile="kill", seed=1))
    run = json.loads((run_dir / "run.json").read_text())
    run["config"].update({"sut": "app", "app": "org.apache.kafka:kafka-streams-examples:3.7.0",
                          "app_main": "org.apache.kafka.streams.examples.wordcount.WordCountDemo",
                          "kstreams_version": "3.7.0", "accounts": 40,
                          "duplicate_fraction": 0.05, "bugs": []})
    (run_dir / "run.json").write_text(json.dumps(run))
    # An app run's history has no ledger sends: the nemesis, the pods, and the samples.
    ops = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    ops = [op for op in ops if op.get("f") != "send"] + progress_ops()
    (run_dir / "history.jsonl").write_text("".join(json.dumps(op) + "\n" for op in ops))
    (run_dir / "history").mkdir(exist_ok=True)
    (run_dir / "history" / "meta.json").write_text(json.dumps({
        "workload": "app", "guarantee": "exactly_once_v2",
        "app": {"app": "org.apache.kafka:kafka-streams-examples:3.7.0",
                "entry": {"app_main": "org.apache.kafka.streams.examples.wordcount.WordCountDemo",
                          "app_class": None, "app_args": []},
                "kstreams_version": "3.7.0", "guarantee_chosen_by": "the run's",
                "app_config": {"default.value.serde":
                               "org.apache.kafka.common.serialization.Serdes$StringSerde"},
                "sources": [INPUT], "sinks": [OUTPUT],
                "dropped_dependencies": ["org.apache.kafka:kafka-streams"]}}))
    (run_dir / "results.json").write_text(json.dumps({
        "verdict": True, "anomaly_counts": {}, "figures": {},
        "checks": {"oracle": {"valid": True, "count": 0, "details": {
                       "compared_records": 24004, "sinks": [OUTPUT]}},
                   "stale-checkpoint": {"valid": True, "count": 0},
                   "unavailable": {"valid": True, "count": 0}}}))
    return run_dir


def test_topic_rates_and_lag_come_from_the_samples() -> None:
    tl = build_timeline(progress_ops(), {pod: [] for pod in PODS}, {})
    assert tl is not None
    assert set(tl.topic_rates) == {f"in: {INPUT}", f"out: {OUTPUT}"}
    assert max(tl.topic_rates[f"in: {INPUT}"]) == pytest.approx(100)
    assert max(tl.topic_rates[f"out: {OUTPUT}"]) == pytest.approx(400)
    assert tl.group_lag is not None and max(tl.group_lag) == 300 and tl.group_lag[-1] == 20


@pytest.mark.needs("chromium")
def test_an_app_runs_report_in_chromium_is_about_the_app(results_dir: Path) -> None:
    run_dir = make_app_run(results_dir)
    page = render_report(run_dir)
    dom = headless.dump_dom(page)
    assert "fixed worker" not in dom
    assert re.search(r'id="kstreams-release">3\.7\.0<', dom)
    assert "main of org.apache.kafka.streams.examples.wordcount.WordCountDemo" in dom
    assert 'id="app-table"' in dom and "exactly_once_v2 (the run's)" in dom
    config = dom[dom.index('id="config-table"'):]
    config = config[:config.index("</table>")]
    assert "accounts" not in config and "duplicate_fraction" not in config
    # Plotly drew the topics' rates and the group's lag (legend entries exist only then).
    assert re.search(rf'class="legendtext"[^>]*>in: {INPUT}<', dom), "no input rate drawn"
    assert re.search(rf'class="legendtext"[^>]*>out: {OUTPUT}<', dom), "no output rate drawn"
    assert re.search(r'class="legendtext"[^>]*>group lag<', dom), "no lag drawn"
    assert "no commit offsets in the traces" not in dom and "client throughput" not in dom
    assert 'id="check-oracle"' in dom or 'href="#check-oracle"' in dom
    headless.screenshot(page, run_dir / "report.png")
