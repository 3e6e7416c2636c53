"""Why runs missed a coverage class, named where a class falls under half of the `all`
runs: read from the settings and the plan, timing only when nothing structural holds."""

from __future__ import annotations

import json
from pathlib import Path

from harness.report.coverage import coverage_table
from harness.report.coverage_why import TIMING, RunShape, why_missed


def _step(fault: str, applied: float | None = 5.0, healed: float | None = 9.0,
          **params: object) -> dict[str, object]:
    return {"fault": fault, "status": "healed" if applied is not None else "pending",
            "applied_at_s": applied, "healed_at_s": healed, "params": params}


def test_a_pause_within_the_session_makes_no_zombie() -> None:
    pause = _step("pause", 10.0, 30.0)  # 20 s
    assert "no fault that freezes a pod" in why_missed("zombie", RunShape({}, []))
    assert "session 45 s" in why_missed("zombie", RunShape({"session_timeout_ms": 45_000},
                                                            [pause]))
    assert why_missed("zombie", RunShape({"session_timeout_ms": 10_000}, [pause])) == TIMING


def test_settings_that_rule_a_moment_out() -> None:
    kill = _step("kill")
    alos = RunShape({"guarantee": "at_least_once"}, [kill])
    assert "no transactions" in why_missed("flush-then-abort", alos)
    assert "standbys 0" in why_missed("standby-promoted", RunShape({"standbys": 0}, [kill]))
    one_task = RunShape({"partitions": 1, "pods": 2}, [_step("scale-out")])
    assert "1 partition(s) for 2 pods" in why_missed("task-returns", one_task)
    assert why_missed("standby-promoted", RunShape({"standbys": 1}, [kill])) == TIMING


def test_a_planned_fault_never_applied_is_said() -> None:
    never = RunShape({}, [_step("power-loss", applied=None, healed=None)])
    assert "planned but never applied" in why_missed("power-loss-unsynced", never)
    kept = RunShape({}, [_step("move")])  # keep_volume defaults to True
    assert "without its volume" in why_missed("move-full-restore", kept)
    assert why_missed("move-checkpoint-reuse", kept) == TIMING


def _run(folder: Path, name: str, reached: bool, config: dict[str, object],
         steps: list[dict[str, object]], sut: str = "python") -> Path:
    run_dir = folder / name
    run_dir.mkdir(parents=True)
    classes = {"zombie": {"title": "z", "scope": "run", "reached": reached},
               "at-least-once": {"title": "a", "scope": "nightly", "reached": False}}
    (run_dir / "results.json").write_text(json.dumps({"coverage": {"classes": classes}}))
    (run_dir / "run.json").write_text(json.dumps(
        {"config": {"profile": "all", "sut": sut, **config}}))
    (run_dir / "plan.json").write_text(json.dumps({"steps": steps}))
    return run_dir


def test_the_nightly_names_classes_under_half_with_the_reasons(tmp_path: Path) -> None:
    long_pause = [_step("pause", 10.0, 30.0)]
    runs = [_run(tmp_path, "r1", True, {"session_timeout_ms": 10_000}, long_pause),
            _run(tmp_path, "r2", False, {"session_timeout_ms": 45_000}, long_pause),
            _run(tmp_path, "r3", False, {"session_timeout_ms": 45_000}, long_pause),
            _run(tmp_path, "k1", True, {"session_timeout_ms": 10_000}, long_pause,
                 sut="kstreams")]
    table = coverage_table(runs)
    assert table.profiles == ["all", "all (kstreams)"]  # a SUT's runs: a column of their own
    [short] = table.shortfalls()  # at-least-once is the nightly's, not a run's
    assert (short.name, short.profile, short.reached, short.runs) == ("zombie", "all", 1, 3)
    assert short.reasons == [("session 45 s: no pause outlasted it (the longest 20 s)", 2)]
    assert "zombie in all: 1/3 runs; missed: session 45 s" in table.to_markdown()
