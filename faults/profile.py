"""What a profile is, whatever draws its plan: a generic mix (faults/mix.py), a scenario
aimed at one bug's window (faults/scenarios/) or the soak (a mix in windows). The registry
of them by name is faults/plan.py's."""

from __future__ import annotations

from typing import Protocol

from faults.model import Plan, ProfileSettings
from faults.windows import PlanSettings


class Profile(Protocol):
    @property
    def name(self) -> str:
        """`kchaos run --profile NAME`; also the plan's random stream's name."""
        ...

    @property
    def draws_knobs(self) -> bool:
        """Whether a run of it draws its settings from the seed (faults/knobs.py)."""
        ...

    @property
    def draws_platform_kinds(self) -> bool:
        """Broad: it draws every kind the platform applies and the system under test takes;
        the others keep their kinds (a run is refused when it cannot take one)."""
        ...

    @property
    def min_brokers(self) -> int:
        """A run of it with fewer brokers is refused."""
        ...

    def settings(self) -> ProfileSettings:
        """The run settings it needs (pods, ...), before any plan is drawn (checked)."""
        ...

    def draw(self, seed: int, pods: int, brokers: int, time_limit_s: float,
             platform_kinds: frozenset[str], refused: frozenset[str], *,
             settings: PlanSettings) -> Plan:
        """Its plan: a pure function of the arguments; its windows sized from `settings`,
        the run's (faults/windows.py)."""
        ...
