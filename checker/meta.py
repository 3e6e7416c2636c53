"""The run facts the checks need besides the records: `history/meta.json`, and the traits
of the plan's fault kinds from the plan.json beside `history/` (common/fault_traits.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.schema import META_FILE
from common.fault_traits import BEFORE_PLANS_CARRIED_TRAITS, PlanTraits, load_plan_traits
from common.guarantees import EXACTLY_ONCE_V2

# How long after an accounts record was acknowledged a join may still see an older value
# (the global thread lags the topic); overridable per run with meta.stale_global_bound_s.
DEFAULT_STALE_GLOBAL_BOUND_S = 30.0


@dataclass(frozen=True)
class Meta:
    guarantee: str
    partitions: int | None = None
    application_id: str | None = None
    drained: bool | None = None  # None: the harness did not say (unavailable -> unknown)
    drain_seconds: float | None = None
    dead_pods: tuple[str, ...] = ()
    stale_global_bound_s: float = DEFAULT_STALE_GLOBAL_BOUND_S
    # check name -> why it cannot be judged for this run's system under test
    not_applicable: Mapping[str, str] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict)
    # What the run's fault kinds do (a bare history without a plan: as before plans said)
    fault_traits: PlanTraits = BEFORE_PLANS_CARRIED_TRAITS

    @property
    def exactly_once(self) -> bool:
        return self.guarantee == EXACTLY_ONCE_V2

    @staticmethod
    def from_json(data: Mapping[str, Any],
                  fault_traits: PlanTraits = BEFORE_PLANS_CARRIED_TRAITS) -> Meta:
        dead = data.get("dead_pods") or ()
        bound = data.get("stale_global_bound_s")
        return Meta(
            guarantee=str(data.get("guarantee", "")),
            partitions=data.get("partitions"),
            application_id=data.get("application_id"),
            drained=data.get("drained"),
            drain_seconds=data.get("drain_seconds"),
            dead_pods=tuple(str(p) for p in dead),
            stale_global_bound_s=(DEFAULT_STALE_GLOBAL_BOUND_S if bound is None else float(bound)),
            not_applicable={str(k): str(v) for k, v in (data.get("not_applicable") or {}).items()},
            raw=dict(data),
            fault_traits=fault_traits,
        )


def load_meta(history_dir: Path) -> Meta:
    """`history_dir`'s meta.json, with the traits of the run folder's plan (its parent's)."""
    return Meta.from_json(json.loads((history_dir / META_FILE).read_text()),
                          load_plan_traits(history_dir.parent))
