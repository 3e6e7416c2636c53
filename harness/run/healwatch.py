"""The pods restarted at heal, watched while the group drains (not before it: a fixed wait
ahead of the drain cost every run that ended its load with a pod down 15 s).

A pod that exits within DEATH_WATCH_S of the heal, or is down when the watch ends, is dead
for good: it explains a stall. The drain waits for each restarted pod to settle (traced
RUNNING since the heal, or dead) so that it is not judged before the pod has restored and
rejoined, and gives up once every pod is dead: nobody is left to consume."""

from __future__ import annotations

from collections.abc import Callable, Iterable

DEATH_WATCH_S = 15.0


class HealWatch:
    """Pure bookkeeping: the run feeds it exits, down pods and the monotonic time."""

    def __init__(self, pods: list[str], restarted: list[str], healed_at: float,
                 healed_ns: int = 0, watch_s: float = DEATH_WATCH_S) -> None:
        self.pods = pods
        self.restarted = restarted
        self.healed_ns = healed_ns  # the heal on the traces' wall clock
        # With nothing restarted there is nothing to watch: the window is empty.
        self.deadline = healed_at + (watch_s if restarted else 0.0)
        self.crashed: set[str] = set()
        self.down: set[str] = set()

    def observe(self, now: float, exited: Iterable[str], down: Iterable[str]) -> None:
        """What happened since the last call; only what happens inside the window counts,
        and the pods down at its last observation are the ones down at its end."""
        if now <= self.deadline:
            self.crashed.update(exited)
            self.down = set(down)

    def over(self, now: float) -> bool:
        return now > self.deadline

    def settled(self, now: float, running_since_heal: Callable[[str], bool]) -> bool:
        """Every restarted pod is RUNNING again or dead; past the window the drain no longer
        waits for them (as when the watch came before the drain)."""
        if self.over(now):
            return True
        dead = self.dead()
        return all(pod in dead or running_since_heal(pod) for pod in self.restarted)

    def dead(self) -> list[str]:
        return [pod for pod in self.pods if pod in self.crashed or pod in self.down]

    def all_dead(self) -> bool:
        return bool(self.pods) and len(self.dead()) == len(self.pods)
