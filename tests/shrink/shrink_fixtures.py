"""A judged run folder as `kchaos run` leaves it (only the files a shrink reads)."""

from __future__ import annotations

import json
from pathlib import Path

from faults.model import Plan, Step, Trigger
from harness.config.run import RunConfig

STEPS = (
    Step(0, "scale-out", "pod-1", Trigger(0.0)),
    Step(1, "delay-checkpoint", "pod-0", Trigger(4.2), {"ms": 1000}),
    Step(2, "kill", "pod-1", Trigger(4.2, "cleaned", timeout_s=19.8)),
    Step(3, "stop", "pod-0", Trigger(4.2), heal_after_s=0.5),
    Step(4, "kill", "pod-0", Trigger(12.0), heal_after_s=2.0),
)


def write_run(folder: Path, counts: dict[str, int] | None, time_limit_s: float = 40.0,
              plan: bool = True) -> Path:
    folder.mkdir(parents=True)
    config = RunConfig(profile="KAFKA-8187", seed=1, time_limit_s=time_limit_s)
    (folder / "run.json").write_text(json.dumps({"run_id": folder.name,
                                                 "config": config.to_json()}))
    if plan:
        doc = Plan(1, "KAFKA-8187", STEPS, {"pods": 1}).to_json()
        (folder / "plan.json").write_text(json.dumps(doc))
    if counts is not None:
        (folder / "results.json").write_text(json.dumps(
            {"verdict": not counts, "anomaly_counts": counts}))
    return folder
