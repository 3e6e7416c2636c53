"""The shrink's knob phase: each knob drawn from the seed is tried at its default; one whose
default still reproduces is reset in the shrunk result, one the failure needs keeps its
drawn value; a default that makes a config no run accepts is never run. Fake reruns."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from shrink_fixtures import STEPS

from faults.model import Plan
from harness.config.drawn import knob_default
from harness.config.run import RunConfig, resolve
from harness.run.command import read_config_and_plan
from harness.shrink import command
from harness.shrink.files import admissible, original_variant, variant_config
from harness.shrink.search import RunResult, Search
from harness.shrink.timing import Variant

KNOBS = (("session_timeout_ms", 45_000), ("threads", 3), ("rate", 300.0))
DEFAULTS = {"session_timeout_ms": 10_000, "threads": 2, "rate": 100.0}


class NeedsLongSession:
    """Reproduces with steps 1 and 2, 20 s of load or more, and the drawn 45 s session:
    the other knobs do not matter."""

    def __init__(self) -> None:
        self.seen: list[Variant] = []

    def __call__(self, v: Variant) -> RunResult:
        self.seen.append(v)
        knobs = dict(v.knobs)
        hit = ({1, 2} <= {s.id for s in v.steps} and v.time_limit_s >= 20
               and knobs.get("session_timeout_ms") == 45_000)
        return RunResult(f"runs/r{len(self.seen)}", ("lost-history",) if hit else (), 1, 1.0)


def test_a_knob_whose_default_still_reproduces_is_reset() -> None:
    runs = NeedsLongSession()
    search = Search(runs, ("lost-history",), 2, 2, 1e9, defaults=DEFAULTS)
    best = search.shrink(Variant(STEPS, 40.0, KNOBS))
    assert best is not None
    assert dict(best.knobs) == {"session_timeout_ms": 45_000}  # threads, rate reset
    assert {s.id for s in best.steps} == {1, 2}
    phases = [c.phase for c in search.candidates]
    assert phases.index("knobs") > phases.index("steps")
    assert [c.label.split()[0] for c in search.candidates if c.phase == "knobs"] == [
        "session_timeout_ms", "threads", "rate"]
    assert [c.reproduced for c in search.candidates if c.phase == "knobs"] == [
        False, True, True]
    assert all(c.variant.knobs == best.knobs for c in search.candidates
               if c.phase == "timing" and c.reproduced)


def test_a_knob_drawn_at_its_default_costs_no_rerun() -> None:
    runs = NeedsLongSession()
    search = Search(runs, ("lost-history",), 1, 1, 1e9,
                    defaults={**DEFAULTS, "threads": 3})
    best = search.shrink(Variant(STEPS, 40.0, KNOBS))
    assert best is not None
    assert not any("threads" in c.label for c in search.candidates)


def test_an_inadmissible_default_is_never_run() -> None:
    runs = NeedsLongSession()
    search = Search(runs, ("lost-history",), 1, 1, 1e9, defaults=DEFAULTS,
                    admissible=lambda v: dict(v.knobs).get("rate") == 300.0)
    best = search.shrink(Variant(STEPS, 40.0, KNOBS))
    assert best is not None and dict(best.knobs)["rate"] == 300.0
    assert not any(dict(v.knobs).get("rate") == 100.0 for v in runs.seen)


def test_variant_configs_put_reset_knobs_at_the_profiles_defaults() -> None:
    config = resolve({"profile": "all", "seed": 4})
    original = original_variant(config, Plan(4, "all", STEPS))
    assert variant_config(config, original) == config
    without = replace(original, knobs=tuple(k for k in original.knobs if k[0] != "standbys"))
    shrunk = variant_config(config, without)
    assert shrunk.standbys == knob_default("all", "standbys") == 1
    assert "standbys" not in shrunk.drawn_knobs
    # Seed 4: exactly-once, commit 2 s, transaction 5 s: at the 10 s default the
    # transaction timeout is fine; an ALOS draw's 30 s commit under the default guarantee
    # with a 10 s transaction timeout is not.
    alos = replace(config, guarantee="at_least_once", commit_interval_ms=30_000,
                   transaction_timeout_ms=60_000)
    both = original_variant(alos, Plan(4, "all", STEPS))
    assert not admissible(alos, replace(both, knobs=tuple(
        k for k in both.knobs if k[0] not in ("guarantee", "transaction_timeout_ms"))))


class FakeReruns:
    def __init__(self, folder: Path) -> None:
        self.folder, self.count = folder, 0
        self.configs: list[RunConfig] = []

    def __call__(self, v: Variant) -> RunResult:
        self.count += 1
        run_dir = self.folder / f"rerun-{self.count}"
        run_dir.mkdir(parents=True)
        hit = dict(v.knobs).get("session_timeout_ms") == 45_000
        return RunResult(str(run_dir), ("lost-history",) if hit else (), int(hit), 0.01)


def test_the_shrunk_plan_folder_runs_the_knobs_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Seed 4 draws a 45 s session; a 20 s run now bounds it (faults/knobs.py `bounded`):
    # this run.json is one from before the bound, replayed as it was.
    config = replace(resolve({"profile": "all", "seed": 4, "time_limit_s": 20.0}),
                     session_timeout_ms=45_000)
    run_dir = tmp_path / "results" / "20261126T000000-all-s4"
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps({"config": config.to_json()}))
    (run_dir / "plan.json").write_text(json.dumps(Plan(4, "all", STEPS[:2]).to_json()))
    (run_dir / "results.json").write_text(json.dumps({"anomaly_counts": {"lost-history": 2}}))
    reruns = FakeReruns(tmp_path / "reruns")
    monkeypatch.setattr(command, "_runner", lambda c, p, d: reruns)
    monkeypatch.setattr("harness.run.command.require_tools", lambda c: None)
    assert command.shrink(run_dir, 1, 1, 3600.0, None) == 0
    [folder] = [p for p in run_dir.parent.iterdir() if "shrink" in p.name]

    shrunk, _ = read_config_and_plan(folder / "plan")  # what `kchaos repro` runs
    # Seed 4 drew the guarantee, commit interval and standbys at `all`'s own values, and
    # its 1 partition is bounded to 6 for 2 pods (faults/knobs.py), `all`'s own too:
    # drawn still, and at their defaults already.
    # So did its write-buffer count and segment interval (drawn since issue 49).
    at_default = ("guarantee", "commit_interval_ms", "standbys", "partitions",
                  "write_buffer_count", "window_segment_ms")
    assert shrunk.drawn_knobs == ("guarantee", "commit_interval_ms", "session_timeout_ms",
                                  "standbys", "partitions", "write_buffer_count",
                                  "window_segment_ms")
    assert all(getattr(shrunk, n) == knob_default("all", n) for n in at_default)
    assert shrunk.session_timeout_ms == 45_000
    assert shrunk.threads == 2 and shrunk.standbys == 1 and shrunk.partitions == 6
    assert shrunk.guarantee == "exactly_once_v2" and shrunk.rate == 100.0
    knobs = json.loads((folder / "plan" / "plan.json").read_text())["knobs"]
    kept = {"guarantee": "exactly_once_v2", "commit_interval_ms": 2000,
            "session_timeout_ms": 45_000, "standbys": 1, "partitions": 6,
            "write_buffer_count": 3, "window_segment_ms": 5000}
    assert knobs["drawn"] == kept
    log = json.loads((folder / "shrink.json").read_text())
    assert log["shrunk"]["knobs"] == kept
    assert log["original"]["knobs"]["session_timeout_ms"] == 45_000
    page = (folder / "report.html").read_text().split('id="knobs"')[1].split("</table>")[0]
    assert page.count('data-status="reset"') == 9 and page.count('data-status="kept"') == 1
    assert page.count('data-status="drawn = default"') == 6
