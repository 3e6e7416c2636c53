"""Profile settings and plan parameters are typed and strict: a misspelt or mistyped key is
bad input (one line, exit 254) naming the key, where it was and the valid keys, never a
run on defaults; a repro of a hand-edited plan.json loses nothing collected."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from cli_helpers import REPO, assert_bad_input, kchaos

import faults.plan
from faults.params import ProfileSettings
from faults.plan import PROFILES, plan, profile_config
from harness.config.run import RunConfig, profile_settings, resolve
from harness.errors import EXIT_BAD_INPUT, UsageError, exit_code_for_exception

NO_KAFKA = "127.0.0.1:1"  # a replay that got past the plan would stop here, another line


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)})


MISSPELT_MIX = ("import faults.plan as p; p.REGISTRY['all'].run_settings"
                "['write_buffer_byte'] = 8192; ")


def test_a_misspelt_profile_setting_is_bad_input(tmp_path: Path) -> None:
    result = _python(MISSPELT_MIX + "from harness.cli import main; raise SystemExit(main("
                     f"['--results-dir', 'r', 'run', '--bootstrap', '{NO_KAFKA}']))", tmp_path)
    line = assert_bad_input(result, "profile all: unknown run setting 'write_buffer_byte' "
                            "(did you mean 'write_buffer_bytes'?); a profile may set ")
    assert "standbys" in line and "commit_interval_ms" in line
    assert not (tmp_path / "r").exists()  # no run folder started


def test_a_misspelt_profile_setting_fails_on_import(tmp_path: Path) -> None:
    """Whatever imports the run config (every run, most tests) fails, not one run."""
    result = _python(MISSPELT_MIX + "import harness.config.run", tmp_path)
    assert result.returncode != 0
    assert ("UsageError: profile all: unknown run setting 'write_buffer_byte'"
            in result.stderr), result.stderr


@pytest.mark.parametrize(("settings", "says"), [
    ({"pods": "1"}, "profile KAFKA-20685: run setting pods must be int, not str '1'; "),
    ({"rate": True}, "run setting rate must be float, not bool True"),
    ({"standby": 1}, "unknown run setting 'standby' (did you mean 'standbys'?)"),
    ({"seed": 3}, "unknown run setting 'seed'"),  # what the run is is never a profile's
])
def test_a_mistyped_or_unknown_profile_setting_is_refused(
    monkeypatch: pytest.MonkeyPatch, settings: dict[str, object], says: str
) -> None:
    scenario = faults.plan.REGISTRY["KAFKA-20685"]
    monkeypatch.setitem(faults.plan.REGISTRY, "KAFKA-20685",
                        dataclasses.replace(scenario, plan=lambda _: settings))
    with pytest.raises(UsageError) as caught:
        resolve({"profile": "KAFKA-20685"})
    message = str(caught.value)
    assert says in message and "\n" not in message, message
    assert "a profile may set accounts, brokers" in message
    assert exit_code_for_exception(caught.value) == EXIT_BAD_INPUT


def test_an_unknown_explicit_setting_is_refused_not_dropped() -> None:
    with pytest.raises(UsageError, match=r"unknown run setting 'podz' \(did you mean 'pods'"):
        resolve({"profile": "kill", "podz": 3})


def test_profile_settings_are_run_config_fields_of_the_same_type() -> None:
    run_types = typing.get_type_hints(RunConfig)
    for key, hint in typing.get_type_hints(ProfileSettings).items():
        assert run_types[key] == hint, key


def test_every_profile_still_resolves_to_its_settings() -> None:
    for profile in PROFILES:
        settings = profile_settings(profile)
        assert settings == profile_config(profile)
        # Without the knobs a broad profile draws (faults/knobs.py: they override these).
        config = resolve({"profile": profile, **({"brokers": 3} if profile == "broker" else {})},
                         draw_knobs=False)
        for key, value in settings.items():
            assert getattr(config, key) == value, (profile, key)
    assert profile_settings("KAFKA-20685")["write_buffer_bytes"] == 8192


def _run_folder(results: Path, params: object) -> Path:
    """A collected run whose plan.json was edited by hand: the first step's params."""
    run_dir = results / "20261122T000000-move-s1"
    (run_dir / "history").mkdir(parents=True)
    config = RunConfig(profile="move", seed=1, time_limit_s=30, bootstrap=NO_KAFKA)
    (run_dir / "run.json").write_text(json.dumps({"run_id": run_dir.name,
                                                  "config": config.to_json(), "exit_code": 0}))
    doc = plan(1, "move", 2, 1, 30).to_json()
    assert doc["steps"][0]["fault"] == "move"
    doc["steps"][0]["params"] = params
    (run_dir / "plan.json").write_text(json.dumps(doc))
    (run_dir / "history.jsonl").write_text('{"index": 0}\n')
    (run_dir / "history" / "output.parquet").write_bytes(b"PAR1 collected PAR1")
    (run_dir / "results.json").write_text('{"verdict": true}')
    return run_dir


def _contents(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("params", "says"), [
    ({"keep_volum": False}, "plan.json: step 0 (move): unknown parameter 'keep_volum' "
                            "(did you mean 'keep_volume'?); move takes keep_volume: bool"),
    ({"keep_volume": "no"}, "plan.json: step 0 (move): parameter keep_volume must be bool, "
                            "not str 'no'"),
])
def test_repro_of_a_plan_with_a_bad_step_parameter(
    tmp_path: Path, params: object, says: str
) -> None:
    run_dir = _run_folder(tmp_path / "results", params)
    before = _contents(tmp_path)
    line = assert_bad_input(kchaos("repro", str(run_dir), cwd=tmp_path), says)
    assert str(run_dir) in line
    assert _contents(tmp_path) == before  # nothing collected lost, no replay folder


def test_repro_of_a_good_plan_gets_past_the_plan(tmp_path: Path) -> None:
    """The control: the same folder with a well-spelt parameter stops only at the broker."""
    run_dir = _run_folder(tmp_path / "results", {"keep_volume": False})
    assert_bad_input(kchaos("repro", str(run_dir), cwd=tmp_path), NO_KAFKA, "no broker")


def test_the_drain_outwaits_a_session_and_a_rebalance() -> None:
    """Before: a 60 s drain after a kill at the load's end under a 45 s session (a streams
    group cannot drop the dead member) was judged `unavailable` while the group waited as
    designed. The default session leaves the drain as set; a pinned longer drain stays."""
    from harness.config.run import DRAIN_PAST_SESSION_S, RunConfig

    assert RunConfig().drain_budget_s == RunConfig().drain_timeout_s == 60.0
    long_session = RunConfig(session_timeout_ms=45_000)
    assert long_session.drain_budget_s == 45.0 + DRAIN_PAST_SESSION_S
    assert RunConfig(session_timeout_ms=45_000, drain_timeout_s=120.0).drain_budget_s == 120.0


def test_the_drain_outwaits_two_commit_intervals() -> None:
    """Before: all seed 17 drew a 30 s commit interval under at-least-once; a pod restarted
    at the end was still catching up, its committed offsets a commit behind, at the 60 s
    drain, and the run was judged `unavailable`."""
    from harness.config.run import DRAIN_PAST_SESSION_S, RunConfig

    assert RunConfig(commit_interval_ms=30_000).drain_budget_s == 60.0 + DRAIN_PAST_SESSION_S


def test_the_drain_outwaits_an_open_transaction_under_exactly_once() -> None:
    """A restore reads to the log's end and so waits out a transaction a killed pod left
    open (up to its timeout); at-least-once has none."""
    from harness.config.run import DRAIN_PAST_SESSION_S, RunConfig

    assert (RunConfig(transaction_timeout_ms=60_000).drain_budget_s
            == 60.0 + DRAIN_PAST_SESSION_S)
    assert RunConfig(transaction_timeout_ms=60_000,
                     guarantee="at_least_once").drain_budget_s == 60.0
