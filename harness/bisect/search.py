"""The bisection over an ordered list of releases: each release judged by replaying the
failing plan on it, up to K times, "reproduces" when one of the target anomaly classes
came back at least M times (as `kchaos shrink` decides a candidate).

Pure given its edge, `replay` (one run of the plan on a release; the real one starts
Kafka and pods, tests give a fake). It assumes one boundary in the range, the history
of a fix (or of a regression): the two ends are judged first, then the middle of the
interval whose ends differ, until they are neighbours. Every replay is kept as evidence,
so a range where the outcome flips more than once shows in the trials.

A replay that shows no target anomaly but fell short of the original plan (a step that
fired on its timeout or was skipped, harness/bisect/faithful.py) is kept and not counted:
the release gets up to K more replays for it, and a release still undecided after 2K is
an `Undecided` search, not a release that "does not".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.shrink.search import RunResult, is_hit

Replay = Callable[[str], RunResult]


@dataclass
class Trial:
    """One release, judged."""

    version: str
    runs: list[RunResult] = field(default_factory=list)
    hits: int = 0
    reproduced: bool = False
    unreached: int = 0  # replays that missed and fell short of the plan: not counted

    @property
    def counted(self) -> int:
        return len(self.runs) - self.unreached

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "hits": self.hits, "replays": len(self.runs),
                "unreached": self.unreached, "reproduced": self.reproduced,
                "runs": [r.__dict__ for r in self.runs]}


@dataclass(frozen=True)
class Answer:
    """The neighbouring releases where the outcome changes (None when both ends of the
    range agree), and which side reproduces."""

    older: str | None
    newer: str | None
    older_reproduces: bool  # with no boundary: whether the whole range reproduces

    def sentence(self) -> str:
        if self.older is None:
            return ("every release in the range reproduces" if self.older_reproduces
                    else "no release in the range reproduces")
        if self.older_reproduces:
            return (f"last release that reproduces: {self.older}; first that does not: "
                    f"{self.newer}")
        return f"last release that does not reproduce: {self.older}; first that does: {self.newer}"

    def to_json(self) -> dict[str, Any]:
        return {"older": self.older, "newer": self.newer,
                "older_reproduces": self.older_reproduces, "sentence": self.sentence()}


class ReplayFailed(Exception):
    """A replay could not run at all (the release does not build, the harness broke):
    no outcome, so the search cannot go on honestly."""


class Undecided(Exception):
    """A release whose replays kept falling short of the plan: its outcome is unknown."""


@dataclass
class Bisection:
    versions: Sequence[str]  # ordered, oldest first
    replay: Replay
    classes: tuple[str, ...]
    times: int  # K
    min_hits: int  # M
    known: dict[str, RunResult] = field(default_factory=dict)  # the failing run itself
    on_trial: Callable[[Trial], None] = lambda t: None
    trials: dict[str, Trial] = field(default_factory=dict)

    def judge(self, version: str) -> bool:
        """M of K, stopping as soon as the outcome is settled either way."""
        if version in self.trials:
            return self.trials[version].reproduced
        trial = Trial(version)
        while len(trial.runs) < 2 * self.times:
            missing = self.min_hits - trial.hits
            if missing <= 0 or missing > self.times - trial.counted:
                break
            result = self.known.get(version) if not trial.runs else None
            result = result or self.replay(version)
            if result.error is not None:
                raise ReplayFailed(f"{version}: {result.error}")
            trial.runs.append(result)
            hit = is_hit(result, self.classes)
            trial.hits += hit
            trial.unreached += not hit and bool(result.shortfalls)
        trial.reproduced = trial.hits >= self.min_hits
        self.trials[version] = trial
        if not trial.reproduced and self.min_hits - trial.hits <= self.times - trial.counted:
            last = [r.shortfalls for r in trial.runs if r.shortfalls][-1]
            raise Undecided(f"{version}: {trial.unreached} of {len(trial.runs)} replays fell "
                            f"short of the plan (the last: {'; '.join(last)}), so whether it "
                            "reproduces is unknown")
        self.on_trial(trial)
        return trial.reproduced

    def run(self) -> Answer:
        if len(self.versions) < 2:
            raise ValueError("a bisection needs two releases at least")
        low, high = 0, len(self.versions) - 1
        old, new = self.judge(self.versions[low]), self.judge(self.versions[high])
        if old == new:
            return Answer(None, None, old)
        while high - low > 1:
            middle = (low + high) // 2
            if self.judge(self.versions[middle]) == old:
                low = middle
            else:
                high = middle
        return Answer(self.versions[low], self.versions[high], old)
