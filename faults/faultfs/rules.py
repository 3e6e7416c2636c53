"""Delay and failure rules of the fault filesystem: which operations on which paths wait or
fail, as the nemesis set them (plain data, checked when set)."""

from __future__ import annotations

import errno
import fnmatch
from dataclasses import dataclass
from typing import Any

# Operations a rule can name: the ones a crash-consistency bug hides behind.
OPS = ("write", "fsync", "rename", "create", "unlink", "mkdir", "truncate")
ERRORS = {"EIO": errno.EIO, "ENOSPC": errno.ENOSPC}


@dataclass(frozen=True)
class Rule:
    """Operations in `ops` on a path matching `pattern` (fnmatch, against the path inside the
    filesystem, e.g. `*/.checkpoint*`; a rename matches on either name) wait `delay_ms`,
    then fail with `error` (EIO, ENOSPC) if one is given."""

    ops: tuple[str, ...]
    pattern: str = "*"
    delay_ms: int = 0
    error: str | None = None

    def __post_init__(self) -> None:
        unknown = set(self.ops) - set(OPS)
        if not self.ops or unknown:
            raise ValueError(f"rule ops must be among {', '.join(OPS)}, got {self.ops!r}")
        if self.error is not None and self.error not in ERRORS:
            raise ValueError(f"rule error must be one of {', '.join(ERRORS)}")
        if self.delay_ms < 0:
            raise ValueError("rule delay_ms must be >= 0")

    @staticmethod
    def from_json(raw: dict[str, Any]) -> Rule:
        return Rule(tuple(raw["ops"]), str(raw.get("pattern", "*")),
                    int(raw.get("delay_ms", 0)), raw.get("error"))

    def to_json(self) -> dict[str, Any]:
        return {"ops": list(self.ops), "pattern": self.pattern, "delay_ms": self.delay_ms,
                "error": self.error}

    def matches(self, op: str, *paths: str) -> bool:
        return op in self.ops and any(fnmatch.fnmatchcase(p, self.pattern) for p in paths)


def verdict(rules: tuple[Rule, ...], op: str, *paths: str) -> tuple[int, int | None]:
    """(total delay in ms, errno or None) the rules give this operation."""
    delay, error = 0, None
    for rule in rules:
        if rule.matches(op, *paths):
            delay += rule.delay_ms
            if rule.error is not None and error is None:
                error = ERRORS[rule.error]
    return delay, error
