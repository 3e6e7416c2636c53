"""The shrink folder: the shrunk plan (a folder `kchaos repro` takes), the repro command,
a JSON log of every candidate, and report.html (layout in results/README.md)."""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from faults.model import Plan
from harness.anomalies import TARGET_KEY
from harness.config.drawn import knob_default, knobs_section, undrawn
from harness.config.run import RunConfig, validate
from harness.errors import UsageError
from harness.report.shrinks import LOG_FILE
from harness.results import write_json
from harness.shrink.search import Search
from harness.shrink.timing import Variant

PLAN_DIR = "plan"  # run.json + plan.json: what `kchaos repro` reads
REPRO_FILE = "repro.txt"


def original_variant(config: RunConfig, plan: Plan) -> Variant:
    """The failing run as a variant: its steps, its load phase, its drawn knobs."""
    return Variant(plan.steps, config.time_limit_s,
                   tuple((name, getattr(config, name)) for name in config.drawn_knobs))


def knob_defaults(config: RunConfig) -> dict[str, object]:
    return {name: knob_default(config.profile, name) for name in config.drawn_knobs}


def variant_config(config: RunConfig, variant: Variant) -> RunConfig:
    """The run config of a candidate: the original's, with its load phase, the knobs it
    keeps at their drawn values and the others at their defaults."""
    kept = dict(variant.knobs)
    return replace(undrawn(config), time_limit_s=variant.time_limit_s,
                   drawn_knobs=tuple(name for name in config.drawn_knobs if name in kept),
                   **kept)


def admissible(config: RunConfig, variant: Variant) -> bool:
    try:
        validate(variant_config(config, variant))
    except UsageError:
        return False
    return True


@dataclass(frozen=True)
class ShrinkPaths:
    log: Path
    plan: Path
    report: Path
    repro_command: str


def _plan_folder(folder: Path, run_dir: Path, config: RunConfig, plan: Plan,
                 best: Variant, classes: tuple[str, ...], times: int) -> tuple[Path, str]:
    target = folder / PLAN_DIR
    target.mkdir(parents=True, exist_ok=True)
    shrunk_config = variant_config(config, best)
    command = (f"kchaos repro {shlex.quote(str(target))} --times {times} "
               f"--into {shlex.quote(str(folder.parent))}")
    write_json(target / "run.json", {
        "run_id": f"{run_dir.name}-shrunk",
        "config": shrunk_config.to_json(),
        "seed": config.seed,
        "profile": config.profile,
        "plan_config": plan.config,
        "shrunk_from": str(run_dir),
        TARGET_KEY: list(classes),
        "repro_command": command,
    })
    write_json(target / "plan.json", {**replace(plan, steps=best.steps).to_json(),
                                       "knobs": knobs_section(shrunk_config)})
    return target, command


def write_shrink_folder(folder: Path, run_dir: Path, config: RunConfig, plan: Plan,
                        search: Search, classes: tuple[str, ...],
                        wall_s: float) -> ShrinkPaths:
    from harness.shrink.page import render_shrink_report

    best = search.best
    plan_dir, command = (None, "")
    if best is not None:
        plan_dir, command = _plan_folder(folder, run_dir, config, plan, best, classes,
                                         search.times)
        (folder / REPRO_FILE).write_text(command + "\n")
    log: dict[str, Any] = {
        "original_run": str(run_dir),
        "target_classes": list(classes),
        "times": search.times,
        "min_hits": search.min_hits,
        "budget_s": search.budget_s,
        "wall_s": round(wall_s, 1),
        "stopped_by_budget": search.stopped_by_budget,
        "reruns": search.reruns,
        "original": {"step_ids": [s.id for s in plan.steps],
                     "steps": [s.to_json() for s in plan.steps],
                     "time_limit_s": config.time_limit_s,
                     "knobs": {name: getattr(config, name) for name in config.drawn_knobs}},
        "knob_defaults": knob_defaults(config),
        "shrunk": None if best is None else {
            "step_ids": [s.id for s in best.steps],
            "steps": [s.to_json() for s in best.steps],
            "time_limit_s": best.time_limit_s,
            "knobs": dict(best.knobs),
            "plan": str(plan_dir),
            "repro_command": command,
        },
        "candidates": [c.to_json() for c in search.candidates],
        "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    write_json(folder / LOG_FILE, log)
    report = render_shrink_report(folder, log)
    return ShrinkPaths(folder / LOG_FILE, plan_dir or folder, report, command)
