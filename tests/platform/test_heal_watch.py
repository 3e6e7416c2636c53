"""The heal's death watch (pure bookkeeping): who is dead, when the drain may end."""

from __future__ import annotations

from harness.run.healwatch import HealWatch

PODS = ["pod-0", "pod-1", "pod-2"]


def test_nothing_restarted_means_nothing_to_wait_for_and_nobody_dead() -> None:
    watch = HealWatch(PODS, [], healed_at=100.0)
    watch.observe(100.5, ["pod-0"], [])  # an exit after the heal, outside the empty window
    assert watch.settled(100.5, lambda pod: False)
    assert watch.dead() == [] and not watch.all_dead()


def test_the_drain_waits_for_a_restarted_pod_until_it_runs_again() -> None:
    watch = HealWatch(PODS, ["pod-1"], healed_at=100.0, watch_s=15.0)
    running: set[str] = set()
    watch.observe(101.0, [], [])
    assert not watch.settled(101.0, running.__contains__)
    running.add("pod-1")
    assert watch.settled(104.0, running.__contains__)
    assert watch.dead() == []


def test_a_restarted_pod_that_exits_inside_the_window_is_dead_and_settled() -> None:
    watch = HealWatch(PODS, ["pod-1"], healed_at=100.0, watch_s=15.0)
    watch.observe(103.0, ["pod-1"], ["pod-1"])
    watch.observe(104.0, [], [])  # the restart policy brought it back: still dead
    assert watch.settled(104.0, lambda pod: False)
    assert watch.dead() == ["pod-1"] and not watch.all_dead()


def test_exits_after_the_window_do_not_count_and_the_drain_stops_waiting() -> None:
    watch = HealWatch(PODS, ["pod-1"], healed_at=100.0, watch_s=15.0)
    watch.observe(114.0, [], [])
    assert not watch.settled(114.0, lambda pod: False)
    watch.observe(116.0, ["pod-1"], ["pod-1"])
    assert watch.settled(116.0, lambda pod: False)  # as when the watch came first
    assert watch.dead() == []


def test_a_pod_down_at_the_last_observation_inside_the_window_is_dead() -> None:
    watch = HealWatch(PODS, ["pod-2"], healed_at=100.0, watch_s=15.0)
    watch.observe(114.5, [], ["pod-2"])
    watch.observe(120.0, [], [])
    assert watch.dead() == ["pod-2"]


def test_every_pod_dead_is_all_dead() -> None:
    watch = HealWatch(["pod-0"], ["pod-0"], healed_at=100.0, watch_s=15.0)
    assert not watch.all_dead()
    watch.observe(102.0, ["pod-0"], [])
    assert watch.all_dead() and watch.dead() == ["pod-0"]
