"""Which of the platform's own fault kinds a run may draw (harness.platforms.platform_kinds):
pure logic, the prerequisites' checks replaced by ones that pass or refuse."""

from __future__ import annotations

import pytest

import harness.platforms as platforms
import harness.platforms.netns as netns
from faults.kinds import CLOCK_FAULTS, NETWORK_FAULTS, STORAGE_FAULTS
from faults.plan import PLATFORM_KINDS
from harness.errors import UsageError

STORAGE, NETWORK = set(STORAGE_FAULTS), set(NETWORK_FAULTS)


def _refuse() -> None:
    raise UsageError("not here")


def _pass() -> None:
    return None


def test_the_plans_kinds_are_the_platform_protocols_kinds() -> None:
    """The broad profile's families cover exactly what Storage, Network and Links apply,
    and the clock the shim moves."""
    assert PLATFORM_KINDS == STORAGE_FAULTS | NETWORK_FAULTS | CLOCK_FAULTS


@pytest.mark.parametrize(("fuse", "netns_ok", "shim", "bootstrap", "expected"), [
    (True, True, True, None, STORAGE | NETWORK | {"clock"}),
    (True, True, False, None, STORAGE | NETWORK),
    (False, True, False, None, NETWORK),
    (True, False, False, None, STORAGE),
    (True, True, False, "127.0.0.1:9092", STORAGE),  # the run has no network of its own
    (False, False, True, None, {"clock"}),
    (False, False, False, None, set()),
])
def test_local_draws_what_this_machine_can_apply(
    monkeypatch: pytest.MonkeyPatch, fuse: bool, netns_ok: bool, shim: bool,
    bootstrap: str | None, expected: set[str],
) -> None:
    monkeypatch.setattr(platforms, "require_faultfs", _pass if fuse else _refuse)
    monkeypatch.setattr(netns, "require_netns", _pass if netns_ok else _refuse)
    monkeypatch.setattr(platforms, "require_clock_shim", _pass if shim else _refuse)
    assert platforms.platform_kinds("local", bootstrap) == expected


@pytest.mark.parametrize(("shim", "expected"), [(True, {"partition", "clock"}),
                                                (False, {"partition"})])
def test_docker_draws_the_cut_and_the_clock(monkeypatch: pytest.MonkeyPatch, shim: bool,
                                            expected: set[str]) -> None:
    monkeypatch.setattr(platforms, "require_faultfs", _pass)
    monkeypatch.setattr(netns, "require_netns", _pass)
    monkeypatch.setattr(platforms, "require_clock_shim", _pass if shim else _refuse)
    assert platforms.platform_kinds("docker") == expected
