"""A run's live status (`Progress`): what the lifecycle (harness/run/lifecycle.py) updates
as the phases go and hands to its sink, the status line of `kchaos run`
(harness/run/command.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Progress:
    phase: str = "setup"
    started: float = field(default_factory=time.monotonic)
    sent: int = 0
    acked: int = 0
    pods_up: int = 0
    pods: int = 0
    faults_applied: int = 0
    faults_failed: int = 0  # applied or healed with an error (plan.json has which)
    faults_planned: int = 0
    lag: int | None = None


ProgressSink = Callable[[Progress], None]
