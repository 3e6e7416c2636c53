"""The golden plans: what `faults.plan.plan` draws for a fixed set of inputs, checked in as
`golden_plans.json`. A change to plan drawing that is meant shows up as a diff of that
file in review; regenerate it with `.venv/bin/python tests/faults/golden_plans.py`.

Each plan is drawn from the settings a run with those inputs has (harness/config/run.py
`resolve`: a broad profile's knobs drawn from the seed and bounded to the run), as a run
draws it; an entry of a profile that draws them records them (`settings`).

Run as a script it writes the file; with `--print` it prints the plans (the hash-seed test
runs it that way in a subprocess under another PYTHONHASHSEED)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from faults.plan import PROFILES, REGISTRY, plan
from faults.windows import PlanSettings
from harness.config.run import plan_settings, resolve
from harness.errors import UsageError

GOLDEN_FILE = Path(__file__).with_name("golden_plans.json")
# Every profile; one and three brokers; a short and a long run; two seeds each.
INPUTS = [
    (seed, profile, pods, brokers, limit)
    for profile in PROFILES
    for seed, pods, brokers, limit in ((1, 3, 1, 60.0), (42, 4, 3, 300.0))
]


def run_settings(seed: int, profile: str, pods: int, brokers: int, limit: float
                 ) -> PlanSettings | None:
    """The settings a run with these inputs draws its plan from; None (the profile's own)
    for a profile that draws nothing, or a run refused at this size (`broker` on one
    broker, which has no steps to size)."""
    if not REGISTRY[profile].draws_knobs:
        return None
    try:
        return plan_settings(resolve({"seed": seed, "profile": profile, "pods": pods,
                                      "brokers": brokers, "time_limit_s": limit}))
    except UsageError:
        return None


def golden_plans() -> list[dict[str, Any]]:
    entries = []
    for seed, profile, pods, brokers, limit in INPUTS:
        settings = run_settings(seed, profile, pods, brokers, limit)
        entry: dict[str, Any] = {
            "inputs": [seed, profile, pods, brokers, limit],
            "plan": plan(seed, profile, pods, brokers, limit, settings=settings).to_json()}
        if settings is not None:
            entry["settings"] = asdict(settings)
        entries.append(entry)
    return entries


def render() -> str:
    return json.dumps(golden_plans(), indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    if "--print" in sys.argv:
        sys.stdout.write(render())
    else:
        GOLDEN_FILE.write_text(render())
        print(f"wrote {GOLDEN_FILE} ({len(INPUTS)} plans)")
