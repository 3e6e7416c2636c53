"""What a fault kind does, in the terms the checker and the reports reason in (`Trait`), and
the traits of the kinds one plan used, as its plan.json carries them (`PlanTraits`).

faults/kinds.py gives each `FaultKind` its traits and the harness writes those of the
plan's kinds into plan.json (`traits`). The checker and the reports pick the nemesis ops
and plan steps they reason about by trait, never by a kind's name: a new kind that crashes
a pod or cuts it off is counted as such with no change there. Here, beside the traits,
because the checker may import neither faults/ nor the harness (docs/architecture.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

PLAN_FILE = "plan.json"
TRAITS_KEY = "traits"  # plan.json: {kind: [trait, ...]} for each kind its steps use


class Trait(StrEnum):
    """One effect of a fault kind that a check, a coverage class or a report keys on."""

    CRASHES = "crashes"  # SIGKILLs the pod's process
    CRASH_AT_OP = "crash-at-op"  # its op is recorded right at the SIGKILL: the crash's moment
    BACK_BEFORE_OP = "back-before-op"  # the pod runs again before its op is recorded
    RESTARTS = "restarts"  # the pod's process ends and another starts (within, or at the heal)
    SILENCES = "silences"  # a live process reaches nobody for a while, keeping its tasks
    FREEZES = "freezes"  # the process is stopped (SIGSTOP) and resumed: it lives through
    CUTS_OFF = "cuts-off"  # the target is cut off the network
    INTERRUPTS_GLOBAL = "interrupts-global"  # a pod's global consumer may not fetch meanwhile
    MOVES = "moves"  # the pod starts on another node, with its volume or without (keep_volume)
    ADDS_POD = "adds-pod"  # a new pod joins the group (and leaves it at the heal)
    DELAYS_CHECKPOINT = "delays-checkpoint"  # the pod's checkpoint writes are held back
    DROPS_UNSYNCED = "drops-unsynced"  # the pod's volume loses what it never fsynced
    STEPS_CLOCK = "steps-clock"  # the pod's wall clock jumps (or drifts) and is stepped back

    @property
    def phrase(self) -> str:
        """What a fault with it does, for a sentence: "no fault that <phrase> in the plan"."""
        return _PHRASES[self]


_PHRASES: dict[Trait, str] = {
    Trait.CRASHES: "crashes a pod",
    Trait.CRASH_AT_OP: "crashes a pod at a known moment",
    Trait.BACK_BEFORE_OP: "crashes and restarts a pod at once",
    Trait.RESTARTS: "restarts a pod",
    Trait.SILENCES: "silences a pod",
    Trait.FREEZES: "freezes a pod",
    Trait.CUTS_OFF: "cuts a pod off the network",
    Trait.INTERRUPTS_GLOBAL: "keeps a global consumer from fetching",
    Trait.MOVES: "moves a pod",
    Trait.ADDS_POD: "adds a pod",
    Trait.DELAYS_CHECKPOINT: "delays checkpoint writes",
    Trait.DROPS_UNSYNCED: "drops unsynced writes",
    Trait.STEPS_CLOCK: "steps a pod's clock",
}

_T = Trait
# A plan.json written before plans carried traits: its kinds' traits as they were then
# (tests/faults/test_traits.py holds them to faults/kinds.py). The one place outside faults/
# that names kinds; a kind added since needs no entry, since its plans carry their traits.
TRAITS_BEFORE_PLANS_CARRIED_THEM: Mapping[str, frozenset[Trait]] = {
    kind: frozenset(traits) for kind, traits in {
        "kill": (_T.CRASHES, _T.CRASH_AT_OP, _T.RESTARTS),
        "stop": (_T.RESTARTS,),
        "pause": (_T.SILENCES, _T.FREEZES, _T.INTERRUPTS_GLOBAL),
        "move": (_T.MOVES, _T.RESTARTS),
        "scale-out": (_T.ADDS_POD,),
        "scale-in": (_T.RESTARTS,),
        "delay-checkpoint": (_T.DELAYS_CHECKPOINT,),
        "truncate-global": (_T.CRASHES, _T.BACK_BEFORE_OP, _T.RESTARTS),
        "kill-broker": (_T.INTERRUPTS_GLOBAL,),
        "stop-broker": (_T.INTERRUPTS_GLOBAL,),
        "partition": (_T.SILENCES, _T.CUTS_OFF, _T.INTERRUPTS_GLOBAL),
        "power-loss": (_T.CRASHES, _T.DROPS_UNSYNCED, _T.RESTARTS),
        "io-delay": (),
        "io-error": (),
        "netem": (_T.INTERRUPTS_GLOBAL,),
        "clock": (_T.STEPS_CLOCK,),
    }.items()
}


@dataclass(frozen=True)
class PlanTraits:
    """The traits of the fault kinds of one plan (for a plan from before plans carried
    them, of every kind there was then: `carried` False)."""

    by_kind: Mapping[str, frozenset[Trait]]
    carried: bool = True

    def kinds_with(self, *traits: Trait) -> frozenset[str]:
        """The kinds with any of `traits`."""
        return frozenset(k for k, has in self.by_kind.items() if has.intersection(traits))

    def has(self, kind: str, trait: Trait) -> bool:
        return trait in self.by_kind.get(kind, frozenset())


BEFORE_PLANS_CARRIED_TRAITS = PlanTraits(TRAITS_BEFORE_PLANS_CARRIED_THEM, carried=False)


def traits_json(by_kind: Mapping[str, Iterable[Trait]]) -> dict[str, list[str]]:
    """plan.json's `traits`, sorted so a plan's file does not change between writes."""
    return {kind: sorted(str(t) for t in traits) for kind, traits in sorted(by_kind.items())}


def plan_traits(plan: Mapping[str, Any]) -> PlanTraits:
    """The traits a plan.json document carries, or those of the kinds before plans carried
    them. A trait this kchaos does not know (a newer one wrote the plan) is left out:
    nothing here would read it."""
    raw = plan.get(TRAITS_KEY)
    if not isinstance(raw, Mapping):
        return BEFORE_PLANS_CARRIED_TRAITS
    known = {t.value for t in Trait}
    return PlanTraits({
        str(kind): frozenset(Trait(t) for t in traits if t in known)
        for kind, traits in raw.items() if isinstance(traits, list)
    })


def load_plan_traits(run_dir: Path) -> PlanTraits:
    """The traits of a run folder's plan.json; a folder without a readable one (a bare
    history, an old run) reads as before plans carried them."""
    try:
        doc = json.loads((Path(run_dir) / PLAN_FILE).read_text())
    except (OSError, ValueError):
        return BEFORE_PLANS_CARRIED_TRAITS
    return plan_traits(doc) if isinstance(doc, Mapping) else BEFORE_PLANS_CARRIED_TRAITS
