"""Did a replay do what the run it replays did? Where not, its "no anomaly" says nothing.

A bisect judges a release by replaying a plan whose steps fire on moments the pods trace
(`flushed-in-txn`, a task restored, ...). On a slow start, or on a release that traces a
moment later, a step can fire on its timeout instead, or be skipped: that replay never
reached the moment the bug needs, and counting it as "does not reproduce" would put a
release on the fixed side for a plan it never ran. The original run is the measure: a
step that was applied there and not in the replay, or whose condition held there and
not in the replay, is a shortfall. (A condition that timed out in the original too, as
the legacy app's untraced `cleaner-deleted`, is not one.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

APPLIED = frozenset({"applied", "healed"})


def shortfalls(original: Sequence[Mapping[str, Any]],
               replay: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """How the replay's steps fell short of the original's (plan.json's `steps`), each a
    phrase naming the step; empty when it did all the original did."""
    replayed = {step.get("id"): step for step in replay}
    found = []
    for step in original:
        name = f"step {step.get('id')} ({step.get('fault')} {step.get('target')})"
        again = replayed.get(step.get("id"))
        if step.get("status") in APPLIED and (again is None or again.get("status") not in APPLIED):
            found.append(f"{name} {again.get('status') if again else 'missing'}")
        elif step.get("condition_met") and again is not None and not again.get("condition_met"):
            condition = (step.get("trigger") or {}).get("condition")
            found.append(f"{name}: {condition} did not hold")
    return tuple(found)


def plan_steps(run_dir: Path) -> list[dict[str, Any]]:
    """The steps of a run's plan.json as it ran; none if it has no readable plan."""
    try:
        steps = json.loads((run_dir / "plan.json").read_text()).get("steps", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [s for s in steps if isinstance(s, dict)]
