"""What a scenario is: a fault plan aimed at one bug's window, the worker's switches it is
aimed at (or the releases of Kafka Streams it is aimed at), and what a catch shows. A
scenario is a profile (faults/profile.py) of its own name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from faults.builder import Builder
from faults.model import Plan, ProfileSettings, check_settings
from faults.windows import PlanSettings

WORKER = "python"
KAFKA_STREAMS = "kstreams"


@dataclass(frozen=True)
class Scenario:
    name: str  # its profile's name: `kchaos run --profile NAME`
    plan: Callable[[Builder], ProfileSettings]  # adds its steps; returns the run settings
    # The Python worker's switches it is aimed at (workloads/worker/bugs.py): the nightly
    # runs the profile with them (to be caught) and without (the fixed worker: valid). Empty
    # for a scenario aimed at Kafka Streams' releases (`sut`), whose bugs are in the release,
    # and for one aimed at a fault (`clock-jump`): the nightly runs the fixed worker alone.
    switches: tuple[str, ...]
    order: int  # its place among the scenarios (the golden plans keep theirs)
    # CI gates on it (tests/e2e/test_detection.py): the run with the switches must show one
    # of `expected`, the fixed worker on the same plan none.
    in_ci: bool = False
    expected: frozenset[str] = frozenset()  # checks (checker/checks) or coverage classes
    ci_time_limit_s: float = 30.0  # its CI run's load phase
    # The system under test whose traces its triggers read: the worker traces more than
    # Kafka Streams tells an application (faults/scenarios/kafka_*_kstreams.py).
    sut: str = WORKER

    # As a profile (faults/profile.py): it sets the settings its window needs, draws its
    # own kinds only, on any number of brokers.
    draws_knobs = False
    draws_platform_kinds = False
    min_brokers = 1

    def settings(self) -> ProfileSettings:
        return check_settings(self.plan(Builder(0, self.name, 1, 1, 0.0)), self.name)

    def draw(self, seed: int, pods: int, brokers: int, time_limit_s: float,
             platform_kinds: frozenset[str], refused: frozenset[str], *,
             settings: PlanSettings) -> Plan:
        """Its steps in order (each waits for the one before it); the platform's kinds and
        the refused ones do not change it (a run that cannot take a step is refused)."""
        builder = Builder(seed, self.name, pods, brokers, time_limit_s, settings=settings)
        config = self.plan(builder)
        return Plan(seed=seed, profile=self.name, steps=tuple(builder.steps), config=config)
