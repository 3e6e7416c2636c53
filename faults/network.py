"""The network faults (kinds `partition` and `netem` of faults/kinds.py): a target's link
cut, or slowed and lossy, through the run's network (`FaultContext.network`, `links`).
Steps on one target compose while they are in force (ctx.in_force): only the last heal
restores the link.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from faults.context import FaultContext, Links, Step, held_by, step_args
from faults.params import NetemParams

Details = dict[str, Any]


def apply_partition(ctx: FaultContext, step: Step) -> Details:
    """The link is down while any cut of it is in force (ctx.in_force): overlapping cuts of
    one target compose, and only the last one's heal sets it up. Each cut asks for the
    link down, so one that is down already stays so (a docker pod restarted meanwhile is
    cut again)."""
    network = ctx.need(ctx.network, step.fault, "a platform with a run network")
    cut_by = held_by(ctx.in_force.steps(step.fault, step.target))
    network.disconnect(step.target)
    ctx.in_force.hold(step)
    return {"already_cut_by": cut_by} if cut_by else {}


def heal_partition(ctx: FaultContext, step: Step) -> Details:
    network = ctx.need(ctx.network, step.fault, "a platform with a run network")
    ctx.in_force.release(step)
    still = held_by(ctx.in_force.steps(step.fault, step.target))
    if still:
        return {"still_cut_by": still}
    network.reconnect(step.target)
    return {}


def _worst(steps: list[Step]) -> NetemParams:
    """The netem of a link several steps slow at once: the worst of each parameter, so
    each step's degradation holds at least."""
    args = [step_args(NetemParams, s) for s in steps]
    return NetemParams(max(a.delay_ms for a in args), max(a.jitter_ms for a in args),
                       max(a.loss_pct for a in args))


def _set_netem(links: Links, target: str, before: list[Step], after: list[Step]) -> Details:
    """The link as the steps in force (`after`) ask, changed only if that differs from
    what `before` asked (a restarted packet delayer would let packets pass undelayed)."""
    link = _worst(after)
    if before and link == _worst(before):
        details: Details = {**dataclasses.asdict(link), "unchanged": True}
    else:
        details = links.degrade(target, link.delay_ms, link.jitter_ms, link.loss_pct)
    return details if len(after) == 1 else {**details, "in_force": held_by(after)}


def apply_netem(ctx: FaultContext, step: Step) -> Details:
    links = ctx.need(ctx.links, step.fault, "a platform with a run network (--platform local)")
    before = ctx.in_force.steps(step.fault, step.target)
    details = _set_netem(links, step.target, before, [*before, step])
    ctx.in_force.hold(step)
    return details


def heal_netem(ctx: FaultContext, step: Step) -> Details:
    links = ctx.need(ctx.links, step.fault, "a platform with a run network")
    before = ctx.in_force.steps(step.fault, step.target)
    ctx.in_force.release(step)
    after = ctx.in_force.steps(step.fault, step.target)
    if not after:
        links.restore(step.target)
        return {}
    return _set_netem(links, step.target, before, after)
