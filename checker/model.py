"""Verdicts and check results: plain, frozen data, composed the way Jepsen composes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = bool | Literal["unknown"]

UNKNOWN: Verdict = "unknown"
MAX_EXAMPLES = 10


@dataclass(frozen=True)
class CheckResult:
    """One check's answer. `count` is the number of anomalous records (or tasks, pods);
    `examples` is bounded by MAX_EXAMPLES and each is a JSON-ready dict."""

    valid: Verdict
    count: int = 0
    examples: tuple[Mapping[str, Any], ...] = ()
    error: str | None = None
    note: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "valid": self.valid,
            "count": self.count,
            "examples": [dict(e) for e in self.examples],
        }
        if self.error is not None:
            out["error"] = self.error
        if self.note is not None:
            out["note"] = self.note
        if self.details:
            out["details"] = dict(self.details)
        return out


def unknown(error: str) -> CheckResult:
    return CheckResult(valid=UNKNOWN, error=error)


def compose(verdicts: Iterable[Verdict]) -> Verdict:
    """Jepsen's merge: any false wins, then any unknown, else true (also for no checks)."""
    seen = list(verdicts)
    if any(v is False for v in seen):
        return False
    if any(v == UNKNOWN for v in seen):
        return UNKNOWN
    return True
