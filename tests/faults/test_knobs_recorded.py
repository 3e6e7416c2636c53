"""Drawn knobs are recorded where a run is replayed from: run.json's config (a RunConfig
round trip), plan.json's `knobs` section, the report's knobs table; `kchaos repro` runs
them again as they were, without drawing again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faults import knobs
from faults.plan import plan
from harness.config.run import RunConfig, resolve
from harness.results import write_json
from harness.run import command, runinfo
from harness.run.lifecycle import RunOutcome

SEED = 4  # `all` seed 4 draws a 45 s session over a 5 s transaction timeout


def _run_folder(tmp_path: Path, config: RunConfig) -> Path:
    """run.json and plan.json as a run writes them before its first phase."""
    run_dir = tmp_path / "results" / f"20261126T000000-{config.profile}-s{config.seed}"
    run_dir.mkdir(parents=True)
    drawn = plan(config.seed, config.profile, config.pods, config.brokers, config.time_limit_s)
    info = {"run_id": run_dir.name, "config": config.to_json(),
                       "seed": config.seed, "profile": config.profile,
                       "plan_config": drawn.config}
    write_json(run_dir / "run.json", info)
    write_json(run_dir / "plan.json", runinfo.plan_document(drawn, None, config))
    return run_dir


def test_seed_4_draws_timeouts_in_the_other_order() -> None:
    config = resolve({"profile": "all", "seed": SEED})
    assert config.session_timeout_ms > config.transaction_timeout_ms
    assert config.guarantee == knobs.EXACTLY_ONCE_V2


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_a_drawn_config_round_trips_through_run_json(seed: int) -> None:
    config = resolve({"profile": "all", "seed": seed})
    assert config.drawn_knobs
    again = RunConfig.from_json(json.loads(json.dumps(config.to_json())))
    assert again == config


def test_run_json_from_before_the_knobs_reads_as_before() -> None:
    old = RunConfig(profile="all", seed=1).to_json()
    for name in ("session_timeout_ms", "transaction_timeout_ms", "max_poll_records",
                 "restore_max_poll_records", "drawn_knobs"):
        del old[name]
    config = RunConfig.from_json(old)
    assert config.drawn_knobs == () and config.session_timeout_ms == 10_000


def test_plan_json_has_the_knobs_section(tmp_path: Path) -> None:
    config = resolve({"profile": "all", "seed": SEED})
    run_dir = _run_folder(tmp_path, config)
    section = json.loads((run_dir / "plan.json").read_text())["knobs"]
    assert section["profile_draws"] is True
    assert section["drawn"] == knobs.bounded(knobs.draw(SEED, "all"), config.pods,
                                             config.time_limit_s)
    assert section["defaults"]["session_timeout_ms"] == 10_000
    assert section["defaults"]["standbys"] == 1  # `all`'s own setting, not RunConfig's 0
    kill = resolve({"profile": "kill", "seed": SEED})
    assert runinfo.plan_document(plan(SEED, "kill", 2, 1, 60.0), None, kill)["knobs"] == {
        "profile_draws": False, "drawn": {}, "defaults": {}}


def test_repro_replays_the_drawn_config_without_drawing_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = resolve({"profile": "all", "seed": SEED, "threads": 3})  # threads given
    run_dir = _run_folder(tmp_path, config)
    seen: list[RunConfig] = []

    def execute(replayed: RunConfig, where: Path, plan_: object) -> RunOutcome:
        seen.append(replayed)
        return RunOutcome(run_dir, True, 0)

    monkeypatch.setattr(command, "execute", execute)
    monkeypatch.setattr(command, "require_tools", lambda c: None)
    # Even were the ranges to change, a repro runs what run.json holds.
    monkeypatch.setattr(knobs, "draw", lambda seed, profile: pytest.fail("drew again"))
    assert command.repro(run_dir, 2, tmp_path) == 0
    assert seen == [config, config]
    assert seen[0].threads == 3 and "threads" not in seen[0].drawn_knobs
    assert seen[0].session_timeout_ms == 45_000 and seen[0].transaction_timeout_ms == 5000


def test_the_report_marks_drawn_and_default_knobs(tmp_path: Path) -> None:
    from harness.report.report import render_report

    config = resolve({"profile": "all", "seed": SEED, "threads": 3})
    run_dir = _run_folder(tmp_path, config)
    page = render_report(run_dir).read_text()
    table = page.split('id="knobs-table"')[1].split("</table>")[0]
    sources = dict(
        (row.split('data-knob="')[1].split('"')[0], row.split('data-source="')[1].split('"')[0])
        for row in table.split("<tr ")[1:])
    assert sources["session_timeout_ms"] == "drawn"
    assert sources["threads"] == "given"
    assert set(sources) == {k.name for k in knobs.KNOBS}

    kill = _run_folder(tmp_path / "kill", resolve({"profile": "kill", "seed": 1}))
    page = render_report(kill).read_text()
    assert "draws no setting" in page
    assert 'data-source="drawn"' not in page
