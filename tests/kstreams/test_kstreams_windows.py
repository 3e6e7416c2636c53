"""The ledger app's windows and sessions under a real kill run: a deliberately broken
variant (its window store not logged, so a task restored elsewhere or after a crash starts
its windows empty: the mistake of an app that turns logging off to save a topic) is caught
by window-lost-history, on the very plan on which the shipped app's windows are valid
(test_kstreams_sut's kill run). The variant lives here, not in workloads/: it is the
shipped tree copied and patched, built like any release of it."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from test_kstreams_sut import whole_run

import harness.sut.kstreams as kstreams_sut
from harness.cli import main

# The aggregations every tree builds (kstreams-common; each tree's LedgerWindows passes in
# its release's window definitions): patched in the shared sources the 4.x tree compiles.
WINDOWS_JAVA = Path("src/main/java/dev/kchaos/kstreams/WindowAggregations.java")
# The window store's Materialized: the first `.withCachingDisabled())` of the file.
LOGGED = ".withCachingDisabled())"
NOT_LOGGED = ".withCachingDisabled().withLoggingDisabled())"


def unlogged_tree(root: Path) -> Path:
    """A copy of the 4.x tree (and the shared sources beside it, as its pom expects) whose
    window store keeps no changelog."""
    for tree in (kstreams_sut.APP_DIR, kstreams_sut.COMMON_DIR):
        shutil.copytree(tree, root / tree.name, ignore=shutil.ignore_patterns("target"))
    source = root / kstreams_sut.COMMON_DIR.name / WINDOWS_JAVA
    text = source.read_text()
    assert text.count(LOGGED) == 2, "WindowAggregations changed: patch its window store again"
    source.write_text(text.replace(LOGGED, NOT_LOGGED, 1))
    return root / kstreams_sut.APP_DIR.name


@whole_run
def test_an_unlogged_window_store_loses_history_on_the_plan_the_app_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spark_url: str
) -> None:
    broken = unlogged_tree(tmp_path / "trees")
    current = replace(kstreams_sut.GENERATIONS[0], app_dir=broken)
    monkeypatch.setattr(kstreams_sut, "GENERATIONS", (current, *kstreams_sut.GENERATIONS[1:]))
    monkeypatch.setattr(kstreams_sut, "COMMON_DIR", broken.parent / kstreams_sut.COMMON_DIR.name)
    results = tmp_path / "results"
    # The plan of test_kstreams_sut's kill run, where the shipped app's windows are valid.
    code = main(["--results-dir", str(results), "run", "--sut", "kstreams", "--profile",
                 "kill", "--seed", "1", "--time-limit", "25", "--spark-master", spark_url])
    (run_dir,) = [d for d in results.iterdir() if d.is_dir()]
    doc = json.loads((run_dir / "results.json").read_text())
    lost = doc["checks"]["window-lost-history"]
    assert code == 1 and lost["valid"] is False, doc["anomaly_counts"]
    assert lost["details"]["windows"] > 0
    assert {e["reason"] for e in lost["examples"]} & {"below", "missing", "partial"}
    # The balances are logged as ever: only the windows went back.
    assert doc["checks"]["lost-history"]["valid"] is True
