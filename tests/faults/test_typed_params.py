"""Fault step parameters are declared per kind (faults.params, `FaultKind.params`) and
checked when a plan is made or loaded: a misspelt or mistyped one is refused in one line,
where it used to be read as its default (a misspelt `keep_volume` kept the volume)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from golden_plans import GOLDEN_FILE

from faults.kinds import FAULT_KINDS, Need, Target
from faults.model import Plan, Step, Trigger
from faults.params import (
    DelayCheckpointParams,
    IoDelayParams,
    MoveParams,
    NetemParams,
    ParamError,
    describe,
    parse,
)
from faults.plan import PROFILES, plan, profile_config


def _plan_with(fault: str, params: Any) -> dict[str, Any]:
    """A drawn plan, as plan.json holds it, whose first step was edited by hand."""
    doc = plan(1, "kill", 2, 1, 30.0).to_json()
    doc["steps"][0].update(fault=fault, params=params)
    return doc


def _refused(doc: dict[str, Any]) -> str:
    with pytest.raises(ParamError) as caught:
        Plan.from_json(json.loads(json.dumps(doc)))
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_misspelt_step_parameter_is_refused_at_load() -> None:
    message = _refused(_plan_with("move", {"keep_volum": False}))
    assert message == (
        "step 0 (move): unknown parameter 'keep_volum' (did you mean 'keep_volume'?); "
        "move takes keep_volume: bool = True, node: str | None = None")


def test_a_parameter_of_a_kind_that_takes_none_is_refused() -> None:
    message = _refused(_plan_with("stop", {"down": True}))
    assert message == "step 0 (stop): unknown parameter 'down'; stop takes no parameters"


@pytest.mark.parametrize(("fault", "params", "says"), [
    ("move", {"keep_volume": "false"}, "parameter keep_volume must be bool, not str 'false'"),
    ("move", {"keep_volume": 0}, "parameter keep_volume must be bool, not int 0"),
    ("delay-checkpoint", {"ms": "2000"}, "parameter ms must be int, not str '2000'"),
    ("delay-checkpoint", {"ms": True}, "parameter ms must be int, not bool True"),
    ("delay-checkpoint", {"reasons": "close"}, "reasons must be list of str, not str"),
    ("delay-checkpoint", {"reasons": ["close", 1]}, "reasons must be list of str"),
    ("netem", {"loss_pct": "2%"}, "parameter loss_pct must be float, not str '2%'"),
    ("move", {"node": 3}, "parameter node must be str | None, not int 3"),
    ("kill", ["down"], "the parameters must be a JSON object, not list"),
])
def test_a_mistyped_step_parameter_is_refused_at_load(
    fault: str, params: Any, says: str
) -> None:
    message = _refused(_plan_with(fault, params))
    assert message.startswith(f"step 0 ({fault}): ") and says in message, message


def test_a_plan_made_in_code_is_checked_too() -> None:
    with pytest.raises(ParamError, match="unknown parameter 'keep_volum'"):
        Step(0, "move", "pod-0", Trigger(1.0), {"keep_volum": False})
    with pytest.raises(ParamError, match="ms must be int"):
        Step(0, "delay-checkpoint", "pod-0", Trigger(1.0), {"ms": 1.5})


def test_kinds_read_typed_values_with_their_declared_defaults() -> None:
    assert parse(MoveParams, {}, "move", "step 0") == MoveParams(keep_volume=True, node=None)
    assert not parse(MoveParams, {"keep_volume": False}, "move", "step 0").keep_volume
    # KAFKA-8187 ends its delay with ms=0: a 0 is a value, not a missing one.
    assert parse(DelayCheckpointParams, {"ms": 0, "reasons": ["close"]}, "d", "s") == \
        DelayCheckpointParams(ms=0, reasons=("close",))
    assert parse(NetemParams, {"loss_pct": 2}, "netem", "s").loss_pct == 2.0
    assert parse(IoDelayParams, {}, "io-delay", "s") == \
        IoDelayParams(ms=1500, ops=("fsync", "rename"), pattern="*.checkpoint*", error=None)


def test_every_kind_declares_parameters_with_defaults() -> None:
    for name, kind in FAULT_KINDS.items():
        assert dataclasses.is_dataclass(kind.params), name
        assert all(f.default is not dataclasses.MISSING for f in dataclasses.fields(kind.params))
        parse(kind.params, {}, name, "step 0")  # every parameter may be left out
        assert describe(kind.params, name).startswith(f"{name} takes ")


def test_the_golden_plans_validate_and_load_unchanged() -> None:
    """Every parameter the profiles draw is declared with its type: the checked-in plans
    load, read typed, and write back byte for byte (the golden test proper is
    test_plan.py's, unchanged)."""
    for golden in json.loads(GOLDEN_FILE.read_text()):
        loaded = Plan.from_json(golden["plan"])
        assert loaded.to_json() == golden["plan"]
        for step in loaded.steps:
            assert step.fault in FAULT_KINDS
            parse(FAULT_KINDS[step.fault].params, step.params, step.fault, "golden")


def test_every_profile_plan_validates() -> None:
    for profile in PROFILES:
        profile_config(profile)
        for seed in range(5):
            drawn = plan(seed, profile, 3, 3, 300.0)
            assert Plan.from_json(json.loads(json.dumps(drawn.to_json()))) == drawn


@dataclasses.dataclass(frozen=True)
class _LevelParams:
    level: int = 1


def test_a_step_is_checked_against_its_kinds_params_field(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind's parameters are its `params` field, the one place a step is checked against
    (no side table to keep in step with the kinds)."""
    stop = FAULT_KINDS["stop"]
    monkeypatch.setitem(FAULT_KINDS, "stop", dataclasses.replace(stop, params=_LevelParams))
    Step(0, "stop", "pod-0", Trigger(1.0), {"level": 2})
    with pytest.raises(ParamError, match="unknown parameter 'lvl'"):
        Step(0, "stop", "pod-0", Trigger(1.0), {"lvl": 2})
    assert all(isinstance(k.needs, Need | None) and isinstance(k.targets, Target)
               for k in FAULT_KINDS.values())
