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
    # Why this check cannot be judged for the run's system under test; such a result takes
    # no part in the verdict and is stored with "valid": null, never as valid.
    not_applicable: str | None = None

    def to_json(self) -> dict[str, Any]:
        if self.not_applicable is not None:
            return {"valid": None, "not_applicable": self.not_applicable, "count": 0,
                    "examples": []}
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


def not_applicable(reason: str) -> CheckResult:
    return CheckResult(valid=UNKNOWN, not_applicable=reason)


def compose(verdicts: Iterable[Verdict]) -> Verdict:
    """Jepsen's merge: any false wins, then any unknown, else true (also for no checks)."""
    seen = list(verdicts)
    if any(v is False for v in seen):
        return False
    if any(v == UNKNOWN for v in seen):
        return UNKNOWN
    return True
