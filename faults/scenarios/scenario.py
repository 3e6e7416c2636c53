"""What a scenario is: a fault plan aimed at one bug's window, the worker's switches it is
aimed at, and what a catch shows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from faults.builder import Builder
from faults.model import ProfileSettings


@dataclass(frozen=True)
class Scenario:
    profile: str  # its profile's name: `kchaos run --profile NAME`
    plan: Callable[[Builder], ProfileSettings]  # adds its steps; returns the run settings
    # The Python worker's switches it is aimed at (workloads/worker/bugs.py): the nightly
    # runs the profile with them (to be caught) and without (the fixed worker: valid).
    switches: tuple[str, ...]
    order: int  # its place among the profiles (the golden plans keep theirs)
    # CI gates on it (tests/e2e/test_detection.py): the run with the switches must show one
    # of `expected`, the fixed worker on the same plan none.
    in_ci: bool = False
    expected: frozenset[str] = frozenset()
    ci_time_limit_s: float = 30.0  # its CI run's load phase
