"""Fault coverage (issue 17): which condition classes a run reached, from its stored
files only, as the `coverage` section of results.json (results/README.md)."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

from checker.coverage.classes import CLASSES as RUN_CLASSES
from checker.coverage.condition import ConditionClass, Hit
from checker.coverage.facts import Facts, load_facts
from checker.coverage.knobs import KNOB_CLASSES

EVIDENCE_LINES = 8  # lines kept per class: those of its first hit

# The moments of a run, then the knob combinations a nightly's seeds meet (scope `knobs`).
CLASSES: tuple[ConditionClass, ...] = (*RUN_CLASSES, *KNOB_CLASSES)

__all__ = ["CLASSES", "ConditionClass", "coverage_of", "coverage_section"]


def _entry(cls: ConditionClass, hits: list[Hit], origin_ns: int) -> dict[str, Any]:
    first = min(hits, key=lambda h: h.time_ns) if hits else None
    return {
        "title": cls.title,
        "scope": cls.scope,
        "reached": bool(hits),
        "count": len(hits),
        "first_ts_ns": first.time_ns if first else None,
        "first_s": round((first.time_ns - origin_ns) / 1e9, 3) if first else None,
        "evidence": list(first.lines[:EVIDENCE_LINES]) if first else [],
    }


def coverage_of(facts: Facts) -> dict[str, Any]:
    """The coverage section of one run's facts. A class whose detection throws is
    recorded with its error and counted as not reached."""
    classes: dict[str, Any] = {}
    for cls in CLASSES:
        try:
            classes[cls.name] = _entry(cls, cls.detect(facts), facts.origin_ns)
        except Exception as exc:  # one broken class must not hide the others
            classes[cls.name] = {"title": cls.title, "scope": cls.scope, "reached": False,
                                 "count": 0, "error": _one_line(exc)}
    return {
        "origin_ns": facts.origin_ns,
        "reached": [n for n, c in classes.items() if c["reached"]],
        "missed": [n for n, c in classes.items() if not c["reached"] and c["scope"] == "run"],
        "classes": classes,
    }


def coverage_section(run_dir: Path) -> dict[str, Any]:
    """Coverage of a run folder; never raises (an unreadable folder gives `error`)."""
    try:
        return coverage_of(load_facts(Path(run_dir)))
    except Exception as exc:
        return {"error": _one_line(exc), "reached": [], "missed": [], "classes": {}}


def _one_line(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]
