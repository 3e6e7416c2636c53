"""report.html renders for valid, invalid and damaged run folders, never crashes on
corrupt input, and works offline (no external scripts or styles)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from harness.errors import UsageError
from harness.report import render_report, write_run_junit

EXTERNAL = re.compile(r"""<(script|link|img)[^>]+(src|href)=["']?(https?:)?//""", re.I)


def _page(run_dir: Path) -> str:
    path = render_report(run_dir)
    assert path == run_dir / "report.html"
    return path.read_text()


def test_valid_report_has_every_section(valid_run: Path) -> None:
    page = _page(valid_run)
    assert 'class="banner valid"' in page and 'data-verdict="valid"' in page
    assert f"kchaos repro {valid_run}" in page
    for section in ('id="configuration"', 'id="checks-table"', 'id="timeline-chart"',
                    'id="plan"', 'id="links"', 'id="versions-table"'):
        assert section in page
    assert "Incomplete run folder" not in page
    # Relative links to the logs, so the folder can be moved or served.
    assert 'href="pods/pod-0/worker.log"' in page and 'href="kafka/broker-1.log"' in page


def test_invalid_report_shows_anomalies_with_context(invalid_run: Path) -> None:
    page = _page(invalid_run)
    assert 'class="banner invalid"' in page
    assert "dedup-skip: 3, lost-history: 1" in page
    assert 'id="check-dedup-skip"' in page and 'id="check-lost-history"' in page
    for table in ("context.input", "context.output", "traces"):
        assert f'data-title="{table}"' in page
    # The anomalous record is marked in the surrounding input, output and trace tables.
    assert page.count('class="marked"') == 3


def test_report_works_offline_with_one_plotly_per_results_folder(
    invalid_run: Path, valid_run: Path
) -> None:
    page = _page(invalid_run)
    _page(valid_run)
    assert not EXTERNAL.search(page)
    assert page.count('class="plotly-graph-div"') == 1  # one chart
    assert "* plotly.js v" not in page  # not inlined: loaded from the results folder
    scripts = re.findall(r'<script[^>]+src="([^"]+)"', page)
    assert len(scripts) == 1 and scripts[0].startswith("../plotly-"), scripts
    library = (invalid_run / scripts[0]).resolve()
    assert library.parent == invalid_run.parent.resolve()
    assert library.read_text().count("* plotly.js v") == 1
    assert len(list(invalid_run.parent.glob("plotly-*.js"))) == 1  # one copy, both runs


def test_report_inlines_plotly_when_results_folder_is_read_only(
    invalid_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.report import plotly_file

    def refuse(results_dir: Path) -> Path:
        raise PermissionError(f"{results_dir}: read-only")

    monkeypatch.setattr(plotly_file, "ensure_plotly_file", refuse)
    page = _page(invalid_run)
    assert page.count("* plotly.js v") == 1 and not re.search(r'<script[^>]+src=', page)


def test_crashed_run_lists_what_is_missing(crashed_run: Path) -> None:
    page = _page(crashed_run)
    assert 'id="problems"' in page
    assert "results.json</code> is missing" in page
    assert "plan.json</code> is damaged" in page
    assert "history.jsonl</code> is damaged" in page  # the torn last line
    assert 'id="timeline-chart"' in page  # the good history lines still plot
    assert "exit 255" in page and 'class="banner unknown"' in page


def test_empty_folder_still_gets_a_page(tmp_path: Path) -> None:
    page = _page(tmp_path)
    for name in ("run.json", "plan.json", "results.json", "history.jsonl"):
        assert f"{name}</code> is missing" in page
    assert "nothing to plot" in page
    assert f"kchaos repro {tmp_path}" in page


def test_absent_folder_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a folder"):
        render_report(tmp_path / "absent")
    with pytest.raises(UsageError, match="not a folder"):
        write_run_junit(tmp_path / "absent")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=12,
)
# Shapes near the real ones (right keys, wrong types) find more than pure noise.
near_results = st.fixed_dictionaries({
    "verdict": json_values,
    "checks": st.dictionaries(st.text(max_size=6), st.fixed_dictionaries({
        "valid": json_values, "count": json_values, "examples": json_values,
        "details": json_values,
    }) | json_values, max_size=3),
    "anomaly_counts": json_values,
})
near_op = st.fixed_dictionaries({
    "time_ns": st.integers(min_value=-(2**63), max_value=2**63) | json_values,
    "process": st.sampled_from(["nemesis", "client-0"]) | json_values,
    "type": st.sampled_from(["ok", "info", "invoke"]),
    "f": st.sampled_from(["send", "kill"]),
    "value": json_values | st.fixed_dictionaries({
        "target": json_values, "phase": st.sampled_from(["start", "end"]),
        "partition": json_values, "offset": json_values,
    }),
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])
@given(run=json_values | st.dictionaries(st.sampled_from(
           ["run_id", "config", "versions", "timings", "started_at", "exit_code"]),
           json_values),
       plan=json_values | st.fixed_dictionaries({"steps": json_values}),
       results=near_results | json_values,
       ops=st.lists(near_op | json_values, max_size=6),
       trace=st.lists(json_values, max_size=4))
# A NaN timing once broke the summary (float NaN has no int): kept as an explicit case.
@example(run={"run_id": None, "config": None, "timings": {"": float("nan")}}, plan=None,
         results=None, ops=[], trace=[])
def test_corrupt_files_never_crash(
    tmp_path_factory, run, plan, results, ops, trace,  # type: ignore[no-untyped-def]
) -> None:
    run_dir = tmp_path_factory.mktemp("fuzz")
    (run_dir / "run.json").write_text(json.dumps(run))
    (run_dir / "plan.json").write_text(json.dumps(plan))
    (run_dir / "results.json").write_text(json.dumps(results))
    (run_dir / "history.jsonl").write_text("".join(json.dumps(o) + "\n" for o in ops))
    pod = run_dir / "pods" / "pod-0"
    pod.mkdir(parents=True)
    (pod / "trace.jsonl").write_text(
        "".join(json.dumps({"event": "txn-commit", "offsets": t, "ts_ns": 5}) + "\n"
                for t in trace)
    )
    page = _page(run_dir)
    assert 'id="verdict"' in page
    assert "could not be rendered" not in page
