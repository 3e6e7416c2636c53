"""Seed + profile -> fault plan, deterministically (the same inputs give the same plan,
byte for byte, on any machine: `random.Random` seeded with a string is stable).

`REGISTRY` holds every profile (faults/profile.py) by name: the generic mixes
(faults/mixes.py), the scenarios (faults/scenarios/) and the soak."""

from __future__ import annotations

from collections.abc import Iterable

from faults.mixes import MIXES, SOAK_MIX
from faults.model import Plan, ProfileSettings
from faults.profile import Profile
from faults.scenarios import SCENARIOS
from faults.scenarios.scenario import KAFKA_STREAMS, WORKER
from faults.windows import PlanSettings

# In the order the golden plans (tests/faults/golden_plans.json) were written in: the
# scenarios aimed at Kafka Streams' releases came last, after the soak.
_IN_ORDER: tuple[Profile, ...] = (
    *MIXES,
    *(s for s in SCENARIOS.values() if s.sut == WORKER),
    SOAK_MIX,
    *(s for s in SCENARIOS.values() if s.sut == KAFKA_STREAMS),
)
REGISTRY: dict[str, Profile] = {p.name: p for p in _IN_ORDER}
PROFILES = tuple(REGISTRY)  # their names: `--profile`'s choices
# The platform's fault kinds beyond pods and brokers: those a broad profile may draw.
PLATFORM_KINDS = frozenset().union(*(m.platform_kinds for m in MIXES))
# The profiles that draw every kind the platform applies (the report expects those kinds).
ALL_KINDS_PROFILES = frozenset(n for n, p in REGISTRY.items() if p.draws_platform_kinds)


def profile_of(name: str) -> Profile:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; profiles: {', '.join(PROFILES)}") from None


def profile_config(profile: str) -> ProfileSettings:
    """The run settings a profile needs (pods, ...), before any plan is drawn (checked)."""
    return profile_of(profile).settings()


def plan(seed: int, profile: str, pods: int, brokers: int, time_limit_s: float,
         platform_kinds: Iterable[str] = (), refused_kinds: Iterable[str] = (), *,
         settings: PlanSettings | None = None) -> Plan:
    """`settings`: the run's settings its windows are sized from (faults/windows.py),
    drawn or pinned (harness/config/run.py `plan_settings`); None: the profile's own over
    the defaults, the settings of a run that pins and draws nothing. `platform_kinds`:
    those of PLATFORM_KINDS the run's platform can apply; the broad profiles (`all`,
    `soak`) draw from them too, the others ignore them. `refused_kinds`: those the system
    under test cannot take; the broad profiles draw every other kind (a kind made only of
    refused faults gives its slot to the next), the others keep them (the run is then
    refused: the profile is about them)."""
    chosen = profile_of(profile)
    if settings is None:
        settings = PlanSettings.of(chosen.settings())
    return chosen.draw(seed, pods, brokers, time_limit_s, frozenset(platform_kinds),
                       frozenset(refused_kinds), settings=settings)
