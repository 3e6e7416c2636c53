"""The fault kinds: each one value (`FaultKind`: how it applies and heals, what it
targets, its typed parameters, what it needs beyond pods and brokers), all in `FAULT_KINDS`
(docs/architecture.md: adding a fault kind). What they act through is faults/context.py.

Faults act on pods from the outside (signals, volumes, the control file, broker admin
calls, the run's network, the fault filesystem under the volumes); the only help they take
from the worker is the control file's checkpoint delay.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from common.fault_traits import Trait
from common.files import write_atomically
from faults.clock import apply_clock, heal_clock
from faults.context import Brokers, FaultContext, Step, Storage, held_by, step_args
from faults.network import apply_netem, apply_partition, heal_netem, heal_partition
from faults.params import (
    ClockParams,
    DelayCheckpointParams,
    IoDelayParams,
    IoErrorParams,
    KillParams,
    MoveParams,
    NetemParams,
    NoParams,
    Params,
    ScaleOutParams,
    TruncateGlobalParams,
    parse,
)
from faults.platform import Platform

Details = dict[str, Any]


def _broker_id(step: Step) -> int:
    return int(step.target.removeprefix("broker-"))


def write_control(path: Path, **settings: Any) -> None:
    """The fault-injection hook: a small JSON file the worker re-reads when it changes."""
    current: dict[str, Any] = {}
    if path.exists():
        try:
            current = json.loads(path.read_text())
        except ValueError:
            current = {}
    current.update(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps(current))


def read_global_checkpoint(volume: Path, application_id: str) -> int | None:
    """The highest offset in the pod's global-store checkpoint, if it has one."""
    path = volume / application_id / "global" / ".checkpoint"
    try:
        lines = path.read_text().split("\n")
        return max(int(line.split()[2]) for line in lines[2:] if line.strip())
    except (OSError, ValueError, IndexError):
        return None


def _kill(ctx: FaultContext, step: Step) -> Details:
    ctx.platform.kill_pod(step.target)
    if step_args(KillParams, step).down:
        # A crashed machine: nothing restarts the pod before the heal (a stop of a dead pod
        # only holds it down), so its session ends and its tasks fail over.
        ctx.platform.stop_pod(step.target)
    return {}


def _on_pod(act: Callable[[Platform, str], None]) -> Callable[[FaultContext, Step], Details]:
    """A fault (or heal) that does one thing to the step's pod and has nothing to say."""
    def action(ctx: FaultContext, step: Step) -> Details:
        act(ctx.platform, step.target)
        return {}
    return action


_stop = _on_pod(lambda platform, pod: platform.stop_pod(pod))
_start = _on_pod(lambda platform, pod: platform.start_pod(pod))


def _pause(ctx: FaultContext, step: Step) -> Details:
    """Paused while any pause of it is in force (ctx.in_force), as a link is cut: the
    first of two overlapping pauses to heal does not resume the pod."""
    paused_by = held_by(ctx.in_force.steps(step.fault, step.target))
    ctx.platform.pause_pod(step.target)
    ctx.in_force.hold(step)
    return {"already_paused_by": paused_by} if paused_by else {}


def _resume(ctx: FaultContext, step: Step) -> Details:
    ctx.in_force.release(step)
    still = held_by(ctx.in_force.steps(step.fault, step.target))
    if still:
        return {"still_paused_by": still}
    ctx.platform.resume_pod(step.target)
    return {}


def _move(ctx: FaultContext, step: Step) -> Details:
    args = step_args(MoveParams, step)
    pod = ctx.platform.pod(step.target)
    nodes = ctx.platform.nodes()
    destination = args.node or nodes[(nodes.index(pod.node) + 1) % len(nodes)]
    source = pod.node
    ctx.platform.move_pod(step.target, destination, args.keep_volume)
    return {"from": source, "to": destination}


def _scale_out(ctx: FaultContext, step: Step) -> Details:
    nodes = ctx.platform.nodes()
    node = step_args(ScaleOutParams, step).node or nodes[len(ctx.platform.pods()) % len(nodes)]
    ctx.platform.add_pod(step.target, node)
    return {"node": node}


def _scale_in(ctx: FaultContext, step: Step) -> Details:
    """A pod taken out on purpose leaves the group (KIP-812's close with leaveGroup), so
    its partitions move at once rather than after the session timeout; a stop or a crash
    keeps its static membership."""
    ctx.platform.stop_pod(step.target)
    if ctx.group is None:
        return {}
    try:
        return {"left_group": ctx.group.leave(step.target)}
    except Exception as exc:  # a broker down: the members time out instead, as before
        return {"left_group_error": f"{type(exc).__name__}: {exc}"[:200]}


def _delay_checkpoint(ctx: FaultContext, step: Step) -> Details:
    """Checkpoint writes of the pod take `ms` longer; with `reasons`, only writes for those
    reasons (e.g. `close`: a task lets go of its directory late, its thread's loop is not
    slowed down otherwise)."""
    args = step_args(DelayCheckpointParams, step)
    reasons = list(args.reasons)
    write_control(ctx.platform.control_path(step.target), checkpoint_delay_ms=args.ms,
                  checkpoint_delay_reasons=reasons)
    return {"ms": args.ms, "reasons": reasons}


def _undelay_checkpoint(ctx: FaultContext, step: Step) -> Details:
    write_control(ctx.platform.control_path(step.target), checkpoint_delay_ms=0,
                  checkpoint_delay_reasons=[])
    return {}


def _truncate_global(ctx: FaultContext, step: Step) -> Details:
    """Make the pod's global checkpoint point below the topic's log start: kill the pod,
    write every account twice (the first copy moves the end past the checkpoint, the
    second keeps every account in the topic), delete everything before the second copy,
    restart the pod. Its checkpoint + 1 is then an invalid offset. With `live`, the pod is
    paused instead of killed and resumed after: its running global consumer's position is
    then the invalid offset, and it rebuilds while the stream threads run."""
    topic = ctx.need(ctx.global_topic, step.fault, "the accounts topic")
    live = step_args(TruncateGlobalParams, step).live
    if live:  # the running pod's global consumer is left behind the cut, not its checkpoint
        ctx.platform.pause_pod(step.target)
    else:
        ctx.platform.kill_pod(step.target)
        # Keep it down until the topic is cut (a killed pod comes back by restart policy).
        ctx.platform.stop_pod(step.target)
    checkpoint = read_global_checkpoint(ctx.platform.volume(step.target), ctx.application_id)
    topic.republish()
    cut = topic.end_offset()
    republished = topic.republish()
    topic.delete_before(cut)
    if live:
        ctx.platform.resume_pod(step.target)
    else:
        ctx.platform.start_pod(step.target)
    return {"global_checkpoint": checkpoint, "deleted_before": cut, "republished": republished,
            "live": live}


def _brokers(ctx: FaultContext, step: Step) -> Brokers:
    return ctx.need(ctx.brokers, step.fault, "brokers the run started")


def _kill_broker(ctx: FaultContext, step: Step) -> Details:
    _brokers(ctx, step).kill_broker(_broker_id(step))
    return {}


def _stop_broker(ctx: FaultContext, step: Step) -> Details:
    _brokers(ctx, step).stop_broker(_broker_id(step))
    return {}


def _restart_broker(ctx: FaultContext, step: Step) -> Details:
    _brokers(ctx, step).restart_broker(_broker_id(step))
    return {}


def _storage(ctx: FaultContext, fault: str) -> Storage:
    return ctx.need(ctx.storage, fault, "the fault filesystem (--platform local, fuse3)")


def _power_loss(ctx: FaultContext, step: Step) -> Details:
    """The pod's machine loses power: SIGKILL, then its volume keeps only what was fsynced
    (and names whose directory was fsynced). The heal starts it again, as a kill's does."""
    storage = _storage(ctx, "power-loss")
    ctx.platform.kill_pod(step.target)
    return {"undone": storage.power_loss(step.target)}


def _io_rule(args: IoDelayParams | IoErrorParams) -> dict[str, Any]:
    from faults.faultfs.rules import Rule  # checked here: a bad rule fails this step only

    return Rule(args.ops, args.pattern, args.ms, args.error).to_json()


IO_FAULTS = ("io-delay", "io-error")


def _io_step_rule(step: Step) -> dict[str, Any]:
    if step.fault == "io-delay":
        return _io_rule(step_args(IoDelayParams, step))
    return _io_rule(step_args(IoErrorParams, step))


def _io_rules_in_force(ctx: FaultContext, pod: str) -> list[dict[str, Any]]:
    """The rules of every io step in force on the pod's volume (ctx.in_force): overlapping
    steps compose (the fault filesystem adds their delays, the first error wins), and a
    heal removes only its own step's rule."""
    return [_io_step_rule(s) for fault in IO_FAULTS for s in ctx.in_force.steps(fault, pod)]


def _io_fault(ctx: FaultContext, step: Step) -> Details:
    rule = _io_step_rule(step)
    others = [s.id for fault in IO_FAULTS for s in ctx.in_force.steps(fault, step.target)]
    ctx.in_force.hold(step)
    _storage(ctx, step.fault).set_io_rules(step.target, _io_rules_in_force(ctx, step.target))
    return {**rule, "with": others} if others else rule


def _io_heal(ctx: FaultContext, step: Step) -> Details:
    ctx.in_force.release(step)
    rules = _io_rules_in_force(ctx, step.target)
    _storage(ctx, step.fault).set_io_rules(step.target, rules)
    still = [s.id for fault in IO_FAULTS for s in ctx.in_force.steps(fault, step.target)]
    return {"still_in_force": still} if still else {}


def _nothing(ctx: FaultContext, step: Step) -> Details:
    return {}


Action = Callable[[FaultContext, Step], Details]


class Target(StrEnum):
    """What a kind's steps name as their target."""

    POD = "pod"
    NEW_POD = "new-pod"  # a pod the fault creates (scale-out)
    BROKER = "broker"
    POD_OR_BROKER = "pod-or-broker"


class Need(StrEnum):
    """What a kind needs beyond a platform's pods and brokers: platforms and systems under
    test that lack it refuse it, and the broad profiles leave it out."""

    NETWORK = "network"
    STORAGE = "storage"
    WORKER_HOOK = "worker-hook"
    LEDGER = "ledger"
    CLOCK = "clock"

    @property
    def description(self) -> str:
        return NEEDS[self]


NEEDS: dict[Need, str] = {
    Need.NETWORK: "the run's own network (on local: namespaces, a bridge, veths)",
    Need.STORAGE: "the pods' volumes on the fault filesystem (faults/faultfs)",
    Need.WORKER_HOOK: "the control file the Python worker reads (a hook inside the process)",
    Need.LEDGER: "the ledger's topics (the accounts topic)",
    Need.CLOCK: "the pods' wall clocks offset from outside (the clock shim, a C compiler)",
}


@dataclass(frozen=True)
class FaultKind:
    name: str
    apply: Action
    heal: Action
    targets: Target
    # The parameters its steps may carry (names, types, defaults: a frozen dataclass of
    # faults/params.py), checked when a step is made; apply and heal read them with
    # `step_args`.
    params: type[Params] = NoParams
    instant: bool = False  # done once applied (a move): nothing stays in force to heal
    needs: Need | None = None
    # What it does, as the checker and the reports ask (common/fault_traits.py): plan.json
    # carries the traits of its kinds, so they never name a kind.
    traits: frozenset[Trait] = frozenset()


def _kind(name: str, apply: Action, heal: Action, targets: Target,
          params: type[Params] = NoParams, *traits: Trait, instant: bool = False,
          needs: Need | None = None) -> FaultKind:
    return FaultKind(name, apply, heal, targets, params, instant, needs, frozenset(traits))


_T = Trait
FAULT_KINDS: dict[str, FaultKind] = {
    k.name: k
    for k in (
        _kind("kill", _kill, _start, Target.POD, KillParams,
              _T.CRASHES, _T.CRASH_AT_OP, _T.RESTARTS),
        _kind("stop", _stop, _start, Target.POD, NoParams, _T.RESTARTS),
        _kind("pause", _pause, _resume, Target.POD, NoParams,
              _T.SILENCES, _T.FREEZES, _T.INTERRUPTS_GLOBAL),
        _kind("move", _move, _nothing, Target.POD, MoveParams, _T.MOVES, _T.RESTARTS,
              instant=True),
        _kind("scale-out", _scale_out, _scale_in, Target.NEW_POD, ScaleOutParams, _T.ADDS_POD),
        _kind("scale-in", _scale_in, _start, Target.POD, NoParams, _T.RESTARTS),
        _kind("delay-checkpoint", _delay_checkpoint, _undelay_checkpoint, Target.POD,
              DelayCheckpointParams, _T.DELAYS_CHECKPOINT, needs=Need.WORKER_HOOK),
        # Killed (or, `live`, paused) and back before its op is recorded.
        _kind("truncate-global", _truncate_global, _nothing, Target.POD, TruncateGlobalParams,
              _T.CRASHES, _T.BACK_BEFORE_OP, _T.RESTARTS, instant=True, needs=Need.LEDGER),
        _kind("kill-broker", _kill_broker, _restart_broker, Target.BROKER, NoParams,
              _T.INTERRUPTS_GLOBAL),
        _kind("stop-broker", _stop_broker, _restart_broker, Target.BROKER, NoParams,
              _T.INTERRUPTS_GLOBAL),
        _kind("partition", apply_partition, heal_partition, Target.POD_OR_BROKER, NoParams,
              _T.SILENCES, _T.CUTS_OFF, _T.INTERRUPTS_GLOBAL, needs=Need.NETWORK),
        # Storage (the fault filesystem, --platform local): see faults/faultfs.
        _kind("power-loss", _power_loss, _start, Target.POD, NoParams,
              _T.CRASHES, _T.DROPS_UNSYNCED, _T.RESTARTS, needs=Need.STORAGE),
        _kind("io-delay", _io_fault, _io_heal, Target.POD, IoDelayParams, needs=Need.STORAGE),
        _kind("io-error", _io_fault, _io_heal, Target.POD, IoErrorParams, needs=Need.STORAGE),
        _kind("netem", apply_netem, heal_netem, Target.POD_OR_BROKER, NetemParams,
              _T.INTERRUPTS_GLOBAL, needs=Need.NETWORK),
        _kind("clock", apply_clock, heal_clock, Target.POD, ClockParams, _T.STEPS_CLOCK,
              needs=Need.CLOCK),
    )
}


def kinds_needing(need: Need) -> frozenset[str]:
    return frozenset(k.name for k in FAULT_KINDS.values() if k.needs == need)


NETWORK_FAULTS = kinds_needing(Need.NETWORK)
STORAGE_FAULTS = kinds_needing(Need.STORAGE)
CLOCK_FAULTS = kinds_needing(Need.CLOCK)


def needs_of(kinds: Iterable[str]) -> frozenset[Need]:
    """What these kinds need beyond pods and brokers: what a run of them asks of its
    platform (harness/platforms/placement.py `PlacementRequest.needs`)."""
    return frozenset(n for k in kinds if (n := FAULT_KINDS[k].needs) is not None)


def traits_of(kinds: Iterable[str]) -> dict[str, frozenset[Trait]]:
    """The traits of these kinds, as plan.json carries them (common/fault_traits.py)."""
    return {k: FAULT_KINDS[k].traits for k in kinds}


def check_step(kind: str, raw: object, where: str) -> None:
    """ParamError (one line) if a step of `kind` carries parameters the kind does not
    declare, or of the wrong type; an unknown kind is the plan loader's to name."""
    if kind in FAULT_KINDS:
        parse(FAULT_KINDS[kind].params, raw, kind, where)
