"""What the fault kinds act through: the platform's pods (faults/platform.py), the
brokers, the run's network and its links, the fault filesystem, the ledger's global topic
and the application's group, each a small protocol, gathered in a `FaultContext`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from faults.params import P, parse
from faults.platform import Platform

T = TypeVar("T")


class Brokers(Protocol):
    def stop_broker(self, node_id: int) -> None: ...
    def kill_broker(self, node_id: int) -> None: ...
    def restart_broker(self, node_id: int) -> None: ...


class Network(Protocol):
    """The run's network, where a platform has one a pod or broker can be cut off from."""

    def disconnect(self, target: str) -> None:
        """Cut `target` (pod-N or broker-N) off: it reaches nobody, nobody reaches it."""
        ...

    def reconnect(self, target: str) -> None: ...


class Storage(Protocol):
    """The pods' volumes on the fault filesystem (faults/faultfs), where a platform has it."""

    def power_loss(self, pod: str) -> dict[str, Any]:
        """The pod is down: drop what its volume holds that was never made durable."""
        ...

    def set_io_rules(self, pod: str, rules: list[dict[str, Any]]) -> None:
        """Delay/fail rules (faults.faultfs.rules.Rule as JSON) of the pod's volume."""
        ...


class Links(Protocol):
    """The links of the run's network, where a platform can slow them down (tc netem)."""

    def degrade(self, target: str, delay_ms: int, jitter_ms: int, loss_pct: float
                ) -> dict[str, Any]:
        """Delay (each direction, with jitter) and lose packets on `target`'s link;
        returns what was applied."""
        ...

    def restore(self, target: str) -> None: ...


class InForce:
    """The faults in force whose steps compose (partition, netem, pause), by kind and
    target, in the order they were applied. A target's state is derived from them, so
    steps that overlap on one target compose: a heal undoes only what no other step in
    force still asks for (pod-0 cut twice stays cut until both cuts heal). Only the
    nemesis's thread uses it."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, str], dict[int, Step]] = {}

    def steps(self, fault: str, target: str) -> list[Step]:
        return list(self._held.get((fault, target), {}).values())

    def hold(self, step: Step) -> None:
        self._held.setdefault((step.fault, step.target), {})[step.id] = step

    def release(self, step: Step) -> None:
        self._held.get((step.fault, step.target), {}).pop(step.id, None)


class GlobalTopic(Protocol):
    """The accounts (global) topic, as the nemesis may disturb it."""

    def end_offset(self) -> int: ...
    def republish(self) -> int:
        """Write every account again (a new version); returns how many."""
        ...
    def delete_before(self, offset: int) -> None: ...


class Group(Protocol):
    """The application's consumer group, as a deliberate scale-in leaves it."""

    def leave(self, pod: str) -> list[str]:
        """Remove the pod's static members at once; returns their instance ids."""
        ...



@dataclass(frozen=True, kw_only=True)
class FaultContext:
    """What the fault kinds act through, each capability there where the run has it: the
    placement gives the platform's (harness.platforms.Placement.fault_context), the
    workload the ledger's topic, the run its group. A kind that needs one the run lacks
    says so (`FaultContext.need`); platforms and systems under test refuse such plans
    before a run starts (faults.kinds: `FaultKind.needs`)."""

    platform: Platform
    application_id: str
    brokers: Brokers | None = None
    global_topic: GlobalTopic | None = None  # the ledger's accounts topic
    network: Network | None = None
    links: Links | None = None
    storage: Storage | None = None
    group: Group | None = None
    in_force: InForce = field(default_factory=InForce)  # the run's composing faults in force

    def need(self, capability: T | None, fault: str, what: str) -> T:
        """`capability`, or RuntimeError naming the fault and `what` it needs."""
        if capability is None:
            raise RuntimeError(f"{fault} needs {what}")
        return capability


class Step(Protocol):
    """What a kind reads of a plan's step (faults.model.Step, which checks its parameters
    against the kind's: the model imports the kinds, not the other way round)."""

    @property
    def id(self) -> int: ...

    @property
    def fault(self) -> str: ...

    @property
    def target(self) -> str: ...

    @property
    def params(self) -> Mapping[str, Any]: ...


def step_args(cls: type[P], step: Step) -> P:
    """The step's parameters as its kind declares them (checked when the plan was made or
    loaded: here they parse)."""
    return parse(cls, step.params, step.fault, f"step {step.id} ({step.fault})")


def held_by(steps: list[Step]) -> list[int]:
    """The ids of the steps holding a fault in force (ctx.in_force), for a step's details."""
    return [s.id for s in steps]
