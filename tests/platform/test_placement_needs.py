"""What a plan needs of its platform is one value (`PlacementRequest.needs`), and each
platform meets it through one table from need to hook: a new capability is one entry per
platform, and a platform that forgot one fails here."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from faults.kinds import FAULT_KINDS, Need, needs_of
from harness.platforms import docker, local
from harness.platforms.faultfs import FaultFsMounts
from harness.platforms.local_network import RunNetwork
from harness.platforms.placement import PlacementRequest, meet_needs
from harness.procs import ProcessRegistry
from harness.sut.base import PodSettings


def _request(tmp_path: Path, needs: frozenset[Need], bootstrap: str | None = None
             ) -> PlacementRequest:
    return PlacementRequest(tmp_path, ProcessRegistry(tmp_path), None,  # type: ignore[arg-type]
                            PodSettings(bootstrap=""), 2, 1, bootstrap, "4.0.0", needs)


@pytest.mark.parametrize("hooks", [local.NEED_HOOKS, docker.NEED_HOOKS], ids=["local", "docker"])
def test_every_platform_says_what_meets_every_need(hooks: object) -> None:
    assert isinstance(hooks, dict) and set(hooks) == set(Need)


def test_the_request_has_no_yes_no_field_per_need() -> None:
    assert [f.name for f in dataclasses.fields(PlacementRequest) if f.type == "bool"] == []


def test_the_needs_of_a_plan_are_those_of_its_kinds() -> None:
    assert needs_of(["kill", "pause"]) == frozenset()
    assert needs_of(["partition", "netem", "power-loss", "clock"]) == {
        Need.NETWORK, Need.STORAGE, Need.CLOCK}
    assert needs_of(FAULT_KINDS) == {k.needs for k in FAULT_KINDS.values()} - {None}


def test_only_the_hooks_of_the_needs_asked_run(tmp_path: Path) -> None:
    called: list[Need] = []
    hooks = {need: (lambda n: lambda request, made: made.append(n))(need) for need in Need}
    asked = frozenset({Need.STORAGE, Need.NETWORK})
    assert meet_needs(hooks, _request(tmp_path, asked), called) == sorted(asked)


def test_local_makes_what_each_need_asks_and_nothing_else(tmp_path: Path) -> None:
    none = meet_needs(local.NEED_HOOKS, _request(tmp_path, frozenset()), local.LocalCapabilities())
    assert none == local.LocalCapabilities()
    made = meet_needs(local.NEED_HOOKS, _request(tmp_path, frozenset({Need.NETWORK,
                                                                      Need.STORAGE})),
                      local.LocalCapabilities())
    assert isinstance(made.network, RunNetwork) and isinstance(made.faultfs, FaultFsMounts)
    assert made.clock_shim is None
    given_kafka = _request(tmp_path, frozenset({Need.NETWORK}), bootstrap="kafka:9092")
    assert meet_needs(local.NEED_HOOKS, given_kafka, local.LocalCapabilities()).network is None
