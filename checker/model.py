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


# Jepsen's exit codes for a verdict. Every place that turns verdicts into exit codes, or
# combines exit codes of several runs, goes through the three functions below.
EXIT_VALID, EXIT_INVALID, EXIT_UNKNOWN = 0, 1, 2


def exit_code(verdict: object) -> int:
    """0 valid, 1 invalid, 2 for anything else (unknown, or no verdict at all)."""
    if verdict is True:
        return EXIT_VALID
    if verdict is False:
        return EXIT_INVALID
    return EXIT_UNKNOWN


def verdict_of_exit(code: int | None) -> Verdict | None:
    """The verdict an exit code stands for; None for codes that carry none (254, 255, ...)."""
    return {EXIT_VALID: True, EXIT_INVALID: False, EXIT_UNKNOWN: UNKNOWN}.get(
        code if isinstance(code, int) and not isinstance(code, bool) else -1
    )


def compose_exit_codes(codes: Iterable[int]) -> int:
    """Exit codes of several runs as one: any 1 wins (an anomaly found is found), then a
    code without verdict (harness failure, interruption: the highest), then 2, else 0."""
    seen = list(codes)
    if EXIT_INVALID in seen:
        return EXIT_INVALID
    others = [c for c in seen if verdict_of_exit(c) is None]
    if others:
        return max(others)
    return exit_code(compose(v for c in seen if (v := verdict_of_exit(c)) is not None))
