"""The golden plans: what `faults.plan.plan` draws for a fixed set of inputs, checked in as
`golden_plans.json`. A change to plan drawing that is meant shows up as a diff of that
file in review; regenerate it with `.venv/bin/python tests/faults/golden_plans.py`.

Run as a script it writes the file; with `--print` it prints the plans (the hash-seed test
runs it that way in a subprocess under another PYTHONHASHSEED)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from faults.plan import PROFILES, plan

GOLDEN_FILE = Path(__file__).with_name("golden_plans.json")
# Every profile; one and three brokers; a short and a long run; two seeds each.
INPUTS = [
    (seed, profile, pods, brokers, limit)
    for profile in PROFILES
    for seed, pods, brokers, limit in ((1, 3, 1, 60.0), (42, 4, 3, 300.0))
]


def golden_plans() -> list[dict[str, Any]]:
    return [
        {"inputs": [seed, profile, pods, brokers, limit],
         "plan": plan(seed, profile, pods, brokers, limit).to_json()}
        for seed, profile, pods, brokers, limit in INPUTS
    ]


def render() -> str:
    return json.dumps(golden_plans(), indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    if "--print" in sys.argv:
        sys.stdout.write(render())
    else:
        GOLDEN_FILE.write_text(render())
        print(f"wrote {GOLDEN_FILE} ({len(INPUTS)} plans)")
