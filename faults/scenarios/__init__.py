"""Scenarios: one module each (`SCENARIO = Scenario(...)`, scenario.py), found here by
name. A new one is its module and the switch it aims at (workloads/worker/bugs.py): the
profile, the nightly's cells (`scenarios: true` in a matrix) and CI's detection tests
follow from it. Those aimed at Kafka Streams' releases (`sut` kstreams) have no switch,
hence no cells and no CI gate."""

from __future__ import annotations

import importlib
import pkgutil

from faults.scenarios.scenario import Scenario

__all__ = ["SCENARIOS", "Scenario"]


def _found() -> dict[str, Scenario]:
    scenarios = []
    for info in pkgutil.iter_modules(__path__):
        if info.name == "scenario":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        scenarios.append(module.SCENARIO)
    return {s.name: s for s in sorted(scenarios, key=lambda s: s.order)}


SCENARIOS: dict[str, Scenario] = _found()
