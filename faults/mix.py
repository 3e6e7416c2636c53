"""A generic profile as one value: a `Mix` says which faults it draws and how (its kinds,
the platform's families, the broker extras, a bag's groups, the gaps and quiet times), the
run settings it needs and whether it draws the knobs; `Mix.draw` turns it and a seed into
a plan. The mixes themselves are declared in faults/mixes.py."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from faults.builder import QUIET_TAIL_S, Builder
from faults.model import FIRST_FAULT_S, Plan, ProfileSettings, Step, check_settings
from faults.soak import Window, soak_plan
from faults.windows import PlanSettings

# Adds one fault (or a few that belong together) at time `at`, drawn from the builder's
# stream; adds nothing when the fault's kind is refused.
Adder = Callable[[Builder, float], None]
# Of a kind at time `at`, from the run's settings (`Builder.settings`): how long no other
# fault may follow it, or whether the moment it is there for can unfold.
QuietAfter = Callable[[Builder, float], float]
MomentFits = Callable[[Builder, float], bool]


_PROBE_S = 0.5  # how finely a bag looks ahead for the moment a kind's window closes


@dataclass(frozen=True)
class Family:
    """Fault kinds a platform may or may not apply (faults.kinds: Storage, Network, Links),
    drawn as one slot of a broad mix: the variant drawn among those the platform applies,
    so a seed's few slots hold a power loss or an I/O fault as often as any other kind,
    whatever number of variants each family has."""

    add: Adder
    kinds: frozenset[str]


@dataclass(frozen=True)
class Mix:
    name: str
    kinds: tuple[Adder, ...] = ()  # what it draws from (empty: no faults)
    # Broker extras: drawn too when the run has three brokers (one broker killed, stopped
    # or cut off is no fault the group could survive).
    with_three_brokers: tuple[Adder, ...] = ()
    min_brokers: int = 1  # a run of it with fewer is refused (its only faults are brokers')
    # The platform's families: where the platform applies some of their kinds they join
    # the bag's last group. A mix with families is broad: it also leaves out the kinds the
    # system under test refuses (their slot goes to the next kind).
    families: tuple[Family, ...] = ()
    # A bag: every kind once, group by group (each group shuffled, the rest of the kinds
    # the last group), then again; the plan unordered (a step waiting for its condition,
    # or behind a long absence, holds no other back). None: a uniform draw at `gap_s`
    # intervals, the plan ordered (as their recorded seeds were chosen with).
    bag: tuple[int, ...] | None = None
    gap_s: tuple[float, float] = (5.0, 9.0)  # between two faults (a bag's: after one)
    # The least time before a bag's next fault after one of these kinds.
    quiet_after_s: Mapping[Adder, QuietAfter] = field(
        default_factory=lambda: MappingProxyType({}))
    # Plans that chase coverage: whether a kind's moment can unfold at a slot, given the
    # run's settings (a zombie needs the session to end before the run does, a crash's
    # failover a standby). A bag gives the slot to a kind whose moment would no longer fit
    # at the next slot, else to the next kind whose moment fits, and leaves a kind whose
    # moment does not fit for the end of its round (a fault still, its moment not waited
    # for in a slot another kind could use).
    moment_fits: Mapping[Adder, MomentFits] = field(
        default_factory=lambda: MappingProxyType({}))
    run_settings: ProfileSettings = field(default_factory=lambda: ProfileSettings())
    draws_knobs: bool = False  # the run's settings drawn from the seed (faults/knobs.py)
    # Cut the run into windows (faults/soak.py), each a complete draw of this mix.
    windows: bool = False

    @property
    def platform_kinds(self) -> frozenset[str]:
        return frozenset().union(*(f.kinds for f in self.families))

    @property
    def draws_platform_kinds(self) -> bool:
        return bool(self.families)

    def settings(self) -> ProfileSettings:
        return check_settings(dict(self.run_settings), self.name)

    def draw(self, seed: int, pods: int, brokers: int, time_limit_s: float,
             platform_kinds: frozenset[str], refused: frozenset[str], *,
             settings: PlanSettings) -> Plan:
        kinds = platform_kinds & self.platform_kinds if self.families else frozenset()
        refused = refused if self.families else frozenset()
        recorded = tuple(sorted(kinds))
        if self.windows:
            soak = soak_plan(seed, pods, brokers, time_limit_s,
                             self._window(kinds, refused, settings), self.run_settings.copy())
            return replace(soak, platform_kinds=recorded)
        builder = Builder(seed, self.name, pods, brokers, time_limit_s, kinds, refused,
                          settings=settings)
        config = self.add_steps(builder)
        return Plan(seed=seed, profile=self.name, steps=tuple(builder.steps), config=config,
                    ordered=self.bag is None, platform_kinds=recorded)

    def _window(self, platform_kinds: frozenset[str], refused: frozenset[str],
                settings: PlanSettings) -> Window:
        """One window of a soak: the mix's steps over its length, drawn from its stream."""
        def draw(rng: random.Random, pods: int, brokers: int, length_s: float,
                 spare: int) -> tuple[list[Step], int]:
            b = Builder(0, self.name, pods, brokers, length_s, platform_kinds, refused,
                        settings=settings)
            b.rng, b.spare = rng, spare
            self.add_steps(b)
            return b.steps, b.spare
        return draw

    def add_steps(self, b: Builder) -> ProfileSettings:
        """Adds the mix's steps to `b`; returns its run settings (none if it drew no kind)."""
        mix = list(self.kinds)
        if not mix and not self.with_three_brokers:
            return {}
        groups = self.bag or ()
        # Every family the platform applies some kind of, in the bag's last group: as likely
        # in a seed's first slots as the kinds already there.
        families = [f.add for f in self.families if f.kinds & b.platform_kinds]
        if families:
            mix[sum(groups):sum(groups)] = families
            groups = (*groups[:-1], groups[-1] + len(families))
        if b.brokers >= 3:
            mix += self.with_three_brokers
        if not mix:
            return {}
        if self.bag is not None:
            self._draw_bag(b, mix, groups)
        else:
            for at in b.times(*self.gap_s):
                b.rng.choice(mix)(b, at)
        return self.run_settings.copy()

    def _draw_bag(self, b: Builder, mix: list[Adder], groups: tuple[int, ...]) -> None:
        """A seed's few slots get as many different faults as they can hold, where a
        uniform draw repeats some and leaves others out."""
        bag: list[Adder] = []
        at = FIRST_FAULT_S
        empty = 0  # kinds in a row that added nothing (all their faults refused)
        while at < b.time_limit_s - QUIET_TAIL_S and empty <= len(mix):
            if not bag:
                bag = _shuffled(b, mix, groups)
            slot = round(at, 1)
            kind = bag.pop(self._pick(b, bag, slot))
            before = len(b.steps)
            b.now = slot
            quiet = self.quiet_after_s.get(kind)
            quiet_s = quiet(b, slot) if quiet else 0.0  # before the kind holds its pod
            kind(b, slot)
            if len(b.steps) == before:  # the slot goes to the bag's next kind
                empty += 1
                continue
            empty = 0
            at += max(b.rng.uniform(*self.gap_s), quiet_s)
            at = b.after_quiet(at)

    def _pick(self, b: Builder, bag: list[Adder], at: float) -> int:
        """The index in `bag` of the kind that gets the slot at `at` (`moment_fits`): of
        the kinds whose moment would no longer fit by the next slot (a gap later, or after
        the quiet of the kind that would take it), the one whose moment stops fitting
        first (earliest deadline first); else the first that fits."""
        def fits(kind: Adder, when: float) -> bool:
            check = self.moment_fits.get(kind)
            return check is None or check(b, when)

        fitting = [i for i, kind in enumerate(bag) if fits(kind, at)]
        first = (fitting or [0])[0]
        # The next slot comes a gap later, or after the first kind's quiet (a crash's).
        quiet = self.quiet_after_s.get(bag[first])
        horizon = max(self.gap_s[1], quiet(b, at) if quiet else 0.0)

        def deadline(kind: Adder) -> float:  # within the horizon, in 0.5 s steps
            steps = int(horizon / _PROBE_S)
            return next((at + k * _PROBE_S for k in range(1, steps + 1)
                         if not fits(kind, at + k * _PROBE_S)), math.inf)

        urgent = sorted((deadline(bag[i]), i) for i in fitting)
        if urgent and urgent[0][0] < math.inf:
            return urgent[0][1]
        return first


def _shuffled(b: Builder, mix: list[Adder], groups: tuple[int, ...]) -> list[Adder]:
    bag: list[Adder] = []
    for size in (*groups, len(mix)):
        group = mix[len(bag):len(bag) + size]
        b.rng.shuffle(group)
        bag += group
    return bag
