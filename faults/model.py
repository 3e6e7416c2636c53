"""A fault plan is plain data: steps, each a fault kind, a target, parameters, a trigger.

`plan.json` is this data plus what happened (`applied_at_s`, `healed_at_s`, `status`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from faults.kinds import check_step
from faults.params import ProfileSettings as ProfileSettings  # for faults.plan
from faults.params import check_settings as check_settings

# Conditions a trigger can wait for, observed from a pod's trace and volume (the step's
# target, or the trigger's `pod`); `contended` and `cleaned` from every pod's trace, since
# KAFKA-8187 unfolds on one pod and the step that must follow it acts on another. They let
# a window follow the system (a join, a flush, a cleaner pass), not the wall clock, which
# drifts with load and with how slowly a pod container starts.
CONDITIONS = (
    "restored",  # the pod's trace shows a restore-end after the step was armed
    "checkpoint-in-running",  # a .checkpoint file sits in a RUNNING exactly-once task dir
    "commits",  # `count` transaction commits by the pod after the step was armed
    "flushed-in-txn",  # a memtable flush persisted writes of a still-open transaction
    "all-flushed-in-txn",  # every store of a RUNNING task did so (dedup included)
    "contended",  # any pod: a standby failed to take its task-directory lock since armed
    "cleaned",  # any pod: the cleaner deleted the directory of such a standby since armed
    "cleaner-deleted",  # the pod's cleaner deleted `count` task directories since armed
    "standby-elsewhere",  # a task RUNNING in the pod has a standby in another live pod
    "flush-traced-in-txn",  # the pod traced a memtable flush in a still-open transaction
    "newest-segment-flushed",  # its last flush: a windowed store's newest segment, not older
)


# The first fault of a drawn plan comes no earlier: the group has formed and committed.
FIRST_FAULT_S = 6.0


def pod_name(i: int) -> str:
    return f"pod-{i}"


@dataclass(frozen=True)
class Trigger:
    """Fire at `at_s` seconds into the load phase, or (with `condition`) at the first moment
    after `at_s` when the condition holds. A condition that never holds fires anyway after
    `timeout_s`, so the fixed worker runs the very same plan as a buggy one. `pod`: whose
    trace a pod condition reads, when not the step's target (a step on pod-0 that waits
    for pod-1 to have joined). As a step's `heal_when`, `at_s` counts from the moment the
    fault was applied."""

    at_s: float
    condition: str | None = None
    count: int = 1
    timeout_s: float = 30.0
    pod: str | None = None

    def __post_init__(self) -> None:
        # Checked when the plan is made or loaded: an unknown condition would otherwise
        # never hold, and the step would fire on its timeout as if the window was missed.
        if self.condition is not None and self.condition not in CONDITIONS:
            raise ValueError(
                f"unknown trigger condition {self.condition!r}; known: {', '.join(CONDITIONS)}"
            )
        if self.count < 1 or self.timeout_s < 0 or self.at_s < 0:
            raise ValueError(f"trigger out of range: {self}")


@dataclass(frozen=True)
class Step:
    id: int
    fault: str
    target: str
    trigger: Trigger
    # As plan.json has them; the kind declares their names, types and defaults
    # (faults.kinds: `FaultKind.params`) and reads them typed.
    params: dict[str, Any] = field(default_factory=dict)
    heal_after_s: float | None = None  # None: the fault heals itself or at the end of load
    # Instead of heal_after_s: heal when this trigger fires, its `at_s` counted from the
    # moment the fault was applied (e.g. scale back in once the cleaner has deleted).
    heal_when: Trigger | None = None

    def __post_init__(self) -> None:
        if self.heal_when is not None and self.heal_after_s is not None:
            raise ValueError(f"step {self.id}: heal_after_s or heal_when, not both")
        # Checked when the plan is made or loaded (faults.params.ParamError): a misspelt
        # parameter would otherwise be read as its default, the plan silently another one.
        # An unknown kind is the loader's to name (harness.run.command).
        check_step(self.fault, self.params, f"step {self.id} ({self.fault})")

    def to_json(self) -> dict[str, Any]:
        raw = asdict(self)
        # Optional fields left out when unset: plans without them read as they always did.
        if raw["heal_when"] is None:
            del raw["heal_when"]
        for trigger in (raw["trigger"], raw.get("heal_when")):
            if trigger is not None and trigger["pod"] is None:
                del trigger["pod"]
        return raw

    @staticmethod
    def from_json(raw: dict[str, Any]) -> Step:
        params = raw.get("params", {})  # not an object: the kind's check says so
        return Step(
            id=int(raw["id"]),
            fault=str(raw["fault"]),
            target=str(raw["target"]),
            trigger=Trigger(**raw["trigger"]),
            params=dict(params) if isinstance(params, dict) else params,
            heal_after_s=raw.get("heal_after_s"),
            heal_when=Trigger(**raw["heal_when"]) if raw.get("heal_when") else None,
        )


@dataclass(frozen=True)
class Plan:
    seed: int
    profile: str
    steps: tuple[Step, ...]
    # Settings the profile needs from the run (e.g. standbys for KAFKA-8187), applied
    # unless the user set them explicitly; checked against their declaration.
    config: ProfileSettings = field(default_factory=lambda: ProfileSettings())
    # Ordered: a step waits for the one before it (a targeted sequence). Unordered: each
    # step fires on its own trigger, so one waiting for its condition delays no other.
    ordered: bool = True
    # The platform's fault kinds beyond pods and brokers (faults.plan.PLATFORM_KINDS) the
    # broad profile could draw from: an input of the draw, so a replay draws the same.
    platform_kinds: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_settings(self.config, self.profile)

    def to_json(self) -> dict[str, Any]:
        raw: dict[str, Any] = {
            "seed": self.seed,
            "profile": self.profile,
            "config": self.config,
            "ordered": self.ordered,
            "steps": [s.to_json() for s in self.steps],
        }
        if self.platform_kinds:  # left out when none: such plans read as they always did
            raw["platform_kinds"] = list(self.platform_kinds)
        return raw

    @staticmethod
    def from_json(raw: dict[str, Any]) -> Plan:
        return Plan(
            seed=int(raw["seed"]),
            profile=str(raw["profile"]),
            steps=tuple(Step.from_json(s) for s in raw["steps"]),
            config=check_settings(raw.get("config", {}), str(raw["profile"])),
            ordered=bool(raw.get("ordered", True)),  # plan files from before the field
            platform_kinds=tuple(str(k) for k in raw.get("platform_kinds", ())),
        )
