"""Link faults that overlap on one target compose: a link's state is what the steps in force
ask for together, so a heal undoes only what no other step in force still needs. Pure logic
on a fake link layer (no root, no namespace); the real links: tests/platform/
test_local_network.py, tests/docker/test_engine.py.

Run 20261128T190424-partition-s1 is why: three cuts of pod-0 overlapped (6.04-16.08,
11.56-20.69, 17.44-28.12), and the first heal set the link up while the other two were
still recorded in force: the pod was really cut 6.04-16.08 and 17.44-20.69."""

from __future__ import annotations

from typing import Any

import pytest
from fake_clock import FakeClock
from hypothesis import given, settings
from hypothesis import strategies as st

from faults.context import FaultContext
from faults.kinds import FAULT_KINDS
from faults.model import Plan, Step, Trigger
from faults.nemesis import Nemesis

Link = tuple[int, int, float]  # delay_ms, jitter_ms, loss_pct


class FakeLinks:
    """faults.context.Network and Links over a model of each member's link: up or down,
    and the netem on it. Records every call the platform would get."""

    def __init__(self) -> None:
        self.down: set[str] = set()
        self.netem: dict[str, Link] = {}
        self.calls: list[tuple[Any, ...]] = []

    def disconnect(self, target: str) -> None:
        self.calls.append(("disconnect", target))
        self.down.add(target)

    def reconnect(self, target: str) -> None:
        self.calls.append(("reconnect", target))
        self.down.discard(target)

    def degrade(self, target: str, delay_ms: int, jitter_ms: int, loss_pct: float
                ) -> dict[str, Any]:
        self.calls.append(("degrade", target, delay_ms, jitter_ms, loss_pct))
        self.netem[target] = (delay_ms, jitter_ms, loss_pct)
        return {"delay_ms": delay_ms, "jitter_ms": jitter_ms, "loss_pct": loss_pct,
                "mechanism": "fake"}

    def restore(self, target: str) -> None:
        self.calls.append(("restore", target))
        self.netem.pop(target, None)


def context(links: FakeLinks) -> FaultContext:
    return FaultContext(platform=None, application_id="app",  # type: ignore[arg-type]
                        network=links, links=links)


def cut(step_id: int, target: str = "pod-0") -> Step:
    return Step(step_id, "partition", target, Trigger(6.0), heal_after_s=5.0)


def slow(step_id: int, target: str = "pod-0", delay_ms: int = 0, jitter_ms: int = 0,
         loss_pct: float = 0.0) -> Step:
    return Step(step_id, "netem", target, Trigger(6.0),
                {"delay_ms": delay_ms, "jitter_ms": jitter_ms, "loss_pct": loss_pct},
                heal_after_s=5.0)


def apply(ctx: FaultContext, step: Step) -> dict[str, Any]:
    return FAULT_KINDS[step.fault].apply(ctx, step)


def heal(ctx: FaultContext, step: Step) -> dict[str, Any]:
    return FAULT_KINDS[step.fault].heal(ctx, step)


@pytest.mark.parametrize("first_healed", [0, 1])
def test_a_pod_cut_twice_stays_cut_until_both_cuts_heal(first_healed: int) -> None:
    links = FakeLinks()
    ctx = context(links)
    steps = [cut(0), cut(1)]
    apply(ctx, steps[0])
    assert apply(ctx, steps[1]) == {"already_cut_by": [0]}
    assert links.down == {"pod-0"}
    assert heal(ctx, steps[first_healed]) == {"still_cut_by": [1 - first_healed]}
    assert links.down == {"pod-0"}, "a heal set the link up while another cut was in force"
    assert heal(ctx, steps[1 - first_healed]) == {}
    assert links.down == set()
    # Each cut asks for the link down (idempotent); only the last heal asks for it up.
    assert links.calls == [("disconnect", "pod-0"), ("disconnect", "pod-0"),
                           ("reconnect", "pod-0")]


def test_a_cut_after_both_healed_cuts_again() -> None:
    links = FakeLinks()
    ctx = context(links)
    a, b, c = cut(0), cut(1), cut(2)
    for act, step in ((apply, a), (apply, b), (heal, a), (heal, b)):
        act(ctx, step)
    assert apply(ctx, c) == {}
    assert links.down == {"pod-0"}
    heal(ctx, c)
    assert links.down == set()


def test_cuts_of_different_members_and_kinds_do_not_heal_each_other() -> None:
    links = FakeLinks()
    ctx = context(links)
    pod, broker, slowed = cut(0, "pod-0"), cut(1, "broker-1"), slow(2, "pod-0", delay_ms=200)
    for step in (pod, broker, slowed):
        apply(ctx, step)
    heal(ctx, pod)
    assert links.down == {"broker-1"} and links.netem == {"pod-0": (200, 0, 0.0)}
    heal(ctx, slowed)
    assert links.down == {"broker-1"} and links.netem == {}
    heal(ctx, broker)
    assert links.down == set()


def test_overlapping_netem_is_the_worst_of_each_parameter_in_force() -> None:
    links = FakeLinks()
    ctx = context(links)
    heavy = slow(0, delay_ms=200, jitter_ms=20)
    lossy = slow(1, delay_ms=50, loss_pct=5.0)
    assert apply(ctx, heavy) == {"delay_ms": 200, "jitter_ms": 20, "loss_pct": 0.0,
                                 "mechanism": "fake"}  # alone: as before
    details = apply(ctx, lossy)
    assert links.netem["pod-0"] == (200, 20, 5.0)  # each step's degradation holds at least
    assert details["in_force"] == [0, 1]
    heal(ctx, heavy)
    assert links.netem["pod-0"] == (50, 0, 5.0), "a heal dropped netem another step holds"
    heal(ctx, lossy)
    assert links.netem == {}


def test_netem_that_changes_nothing_does_not_touch_the_link() -> None:
    links = FakeLinks()
    ctx = context(links)
    heavy, light = slow(0, delay_ms=200, loss_pct=5.0), slow(1, delay_ms=50)
    apply(ctx, heavy)
    assert apply(ctx, light)["in_force"] == [0, 1]
    heal(ctx, light)
    assert links.netem["pod-0"] == (200, 0, 5.0)
    # The netdelay listener is not restarted for nothing (packets would pass undelayed).
    assert [c[0] for c in links.calls] == ["degrade"]


# -- through the nemesis: the link is down exactly while some cut of it is in force ---------


class NoConditions:
    def holds(self, condition: str, target: str, since_ns: int, count: int) -> bool:
        return False


def nemesis(steps: list[Step], links: FakeLinks, clock: FakeClock, ordered: bool,
            ops: list[tuple[Any, ...]] | None = None) -> Nemesis:
    record = (lambda *op: ops.append(op)) if ops is not None else (lambda *op: None)
    n = Nemesis(Plan(1, "partition", tuple(steps), ordered=ordered), context(links),
                NoConditions(),  # type: ignore[arg-type]  # the watcher's one method used
                record, monotonic=clock.monotonic, wall_ns=clock.wall_ns)
    n.begin()
    return n


def expected_link(n: Nemesis, target: str) -> tuple[bool, Link | None]:
    """What the steps the nemesis records as in force ask of the target's link."""
    held = [o.step for o in n.outcomes if o.status == "applied" and o.step.target == target]
    netem = [s.params for s in held if s.fault == "netem"]
    link = (max(p["delay_ms"] for p in netem), max(p["jitter_ms"] for p in netem),
            max(p["loss_pct"] for p in netem)) if netem else None
    return any(s.fault == "partition" for s in held), link


def assert_links_match_the_record(n: Nemesis, links: FakeLinks, targets: list[str]) -> None:
    for target in targets:
        cut_off, link = expected_link(n, target)
        assert (target in links.down) == cut_off, f"{target} at {n.elapsed():.2f} s"
        assert links.netem.get(target) == link, f"{target} at {n.elapsed():.2f} s"


def test_run_190424_pod_0_is_cut_for_as_long_as_the_history_says() -> None:
    """Its plan (partition, seed 1, 2 pods): pod-0 cut 6-28 and 31-49 s by five steps."""
    plan = [(0, "pod-0", 6.0, 10.0), (1, "pod-0", 11.5, 9.0), (2, "pod-0", 17.4, 10.5),
            (3, "pod-1", 24.5, 8.9), (4, "pod-0", 31.0, 8.2), (5, "pod-0", 39.6, 8.5),
            (6, "pod-1", 46.5, 4.6)]
    steps = [Step(i, "partition", t, Trigger(at), heal_after_s=h) for i, t, at, h in plan]
    links, clock, ops = FakeLinks(), FakeClock(), []
    n = nemesis(steps, links, clock, ordered=True, ops=ops)
    down_at: dict[float, set[str]] = {}
    while clock.now < 60:
        n.tick()
        assert_links_match_the_record(n, links, ["pod-0", "pod-1"])
        down_at[round(clock.now, 2)] = set(links.down)
        clock.now += 0.05
    n.stop_and_heal()
    assert "pod-0" in down_at[16.5] and "pod-0" in down_at[25.0]  # up there before the fix
    assert "pod-0" not in down_at[30.0] and "pod-0" in down_at[45.0]
    assert links.down == set() and all(o.status == "healed" for o in n.outcomes)
    ends = {op[3]["step"]: op[3]["details"] for op in ops if op[3]["phase"] == "end"}
    assert ends[0] == {"still_cut_by": [1]} and ends[1] == {"still_cut_by": [2]}
    assert ends[2] == {}


@st.composite
def link_steps(draw: st.DrawFn) -> list[Step]:
    steps = []
    for i in range(draw(st.integers(1, 8))):
        target = draw(st.sampled_from(["pod-0", "pod-1", "broker-1"]))
        at, heal_after = draw(st.floats(0, 20)), draw(st.floats(0.1, 15))
        if draw(st.booleans()):
            steps.append(Step(i, "partition", target, Trigger(at), heal_after_s=heal_after))
        else:
            params = {"delay_ms": draw(st.integers(0, 500)),
                      "jitter_ms": draw(st.integers(0, 50)),
                      "loss_pct": draw(st.sampled_from([0.0, 1.0, 5.0, 10.0]))}
            steps.append(Step(i, "netem", target, Trigger(at), params,
                              heal_after_s=heal_after))
    return steps


@settings(max_examples=150, deadline=None)
@given(steps=link_steps(), ordered=st.booleans(),
       advances=st.lists(st.floats(0.01, 3.0), min_size=1, max_size=40))
def test_every_link_is_what_the_steps_in_force_ask_for(
    steps: list[Step], ordered: bool, advances: list[float]
) -> None:
    links, clock = FakeLinks(), FakeClock()
    n = nemesis(steps, links, clock, ordered)
    targets = ["pod-0", "pod-1", "broker-1"]
    for seconds in [0.0, *advances]:
        clock.now += seconds
        n.tick()
        assert_links_match_the_record(n, links, targets)
    n.stop_and_heal()
    assert links.down == set() and links.netem == {}
