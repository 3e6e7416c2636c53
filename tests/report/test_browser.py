"""The report and the index opened in real headless Chromium: the key elements are in the
DOM after the scripts ran (plotly drew its SVG), and a screenshot is saved beside each
page for a human to look at."""

from __future__ import annotations

import re
from pathlib import Path

import headless
import pytest

from harness.report import render_index, render_report

pytestmark = pytest.mark.needs("chromium")


def _plotted(dom: str) -> int:
    """Charts plotly actually drew: `main-svg` exists only after Plotly.newPlot ran."""
    return len(re.findall(r'<svg[^>]*class="main-svg"', dom))


@pytest.mark.parametrize("kind", ["valid", "invalid"])
def test_report_in_chromium(kind: str, request: pytest.FixtureRequest) -> None:
    run_dir: Path = request.getfixturevalue(f"{kind}_run")
    page = render_report(run_dir)
    dom = headless.dump_dom(page)
    assert f'data-verdict="{kind}"' in dom
    assert 'id="repro"' in dom and "kchaos repro" in dom
    assert 'id="config-table"' in dom and 'id="links"' in dom
    assert _plotted(dom) >= 1, "the timeline was not drawn"
    # The fault bands were drawn for the pods and the broker the nemesis hit.
    for target in ("pod-0", "pod-1", "broker-2"):
        assert f">{target}<" in dom
    if kind == "invalid":
        assert 'id="check-dedup-skip"' in dom and 'class="marked"' in dom
    png = headless.screenshot(page, run_dir / "report.png")
    assert png.stat().st_size > 20_000  # a rendered page, not a blank one


def test_damaged_report_in_chromium(crashed_run: Path) -> None:
    dom = headless.dump_dom(render_report(crashed_run))
    assert 'id="problems"' in dom and "results.json" in dom
    assert _plotted(dom) >= 1


def test_index_in_chromium(valid_run: Path, invalid_run: Path, crashed_run: Path) -> None:
    results_dir = valid_run.parent
    for run_dir in (valid_run, invalid_run, crashed_run):
        render_report(run_dir)
    index = render_index(results_dir)
    dom = headless.dump_dom(index)
    rows = re.findall(r'<tr class="v-(\w+)" data-run="([^"]+)"', dom)
    # Newest first; the crashed fixed-worker run is amber, the caught bug red.
    assert rows == [("unknown", crashed_run.name), ("invalid", invalid_run.name),
                    ("valid", valid_run.name)]
    assert f'href="{valid_run.name}/report.html"' in dom
    assert _plotted(dom) >= 1, "the trend was not drawn"
    headless.screenshot(index, results_dir / "index.png", size=(1400, 1000))
