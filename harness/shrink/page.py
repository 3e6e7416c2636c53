"""report.html of a shrink: what was aimed at, the steps kept and removed (and their
timing before and after), every candidate with its hits and reruns."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from common.files import write_atomically
from harness.anomalies import rate_text
from harness.report.pages import environment, href


def _when(step: dict[str, Any]) -> str:
    trigger = step["trigger"]
    text = f"at {trigger['at_s']:g}s"
    if trigger.get("condition"):
        text += f" once {_condition(trigger)}"
    if step.get("heal_after_s") is not None:
        text += f", heal after {step['heal_after_s']:g}s"
    if step.get("heal_when"):
        heal = step["heal_when"]
        text += f", heal {heal['at_s']:g}s on, once {_condition(heal)}"
    return text


def _condition(trigger: dict[str, Any]) -> str:
    on = f" on {trigger['pod']}" if trigger.get("pod") else ""
    return f"{trigger['condition']}{on} (timeout {trigger['timeout_s']:g}s)"


def step_rows(log: dict[str, Any]) -> list[dict[str, str]]:
    """One row per original step: kept (with its timing now) or removed."""
    shrunk = {s["id"]: s for s in (log["shrunk"] or {}).get("steps", [])}
    rows = []
    for step in log["original"]["steps"]:
        kept = shrunk.get(step["id"])
        params = ", ".join(f"{k}={v}" for k, v in step.get("params", {}).items())
        before, after = _when(step), "" if kept is None else _when(kept)
        rows.append({
            "id": str(step["id"]), "fault": step["fault"], "target": step["target"],
            "params": params, "before": before,
            "after": after if after != before else "same",
            "status": "undecided" if log["shrunk"] is None else
            ("kept" if kept is not None else "removed"),
        })
    return rows


def knob_rows(log: dict[str, Any]) -> list[dict[str, str]]:
    """One row per knob the original run drew: its value, its default, and whether the
    shrunk run keeps the drawn value or runs at the default."""
    shrunk = (log.get("shrunk") or {}).get("knobs")
    defaults = log.get("knob_defaults") or {}
    rows = []
    for name, value in (log["original"].get("knobs") or {}).items():
        default = defaults.get(name)
        if shrunk is None:
            status = "undecided"
        elif name in shrunk:
            status = "drawn = default" if value == default else "kept"
        else:
            status = "reset"
        rows.append({"name": name, "drawn": str(value), "default": str(default),
                     "status": status})
    return rows


def _link(folder: Path, run_dir: str) -> str:
    if not run_dir:
        return ""
    return href(os.path.relpath(Path(run_dir) / "report.html", folder))


def render_shrink_report(folder: Path, log: dict[str, Any]) -> Path:
    candidates = []
    for c in log["candidates"]:
        verdict = {True: "reproduces", False: "does not", None: "undecided"}[c["reproduced"]]
        candidates.append({**c, "verdict": verdict,
                           "rate": rate_text(c["hits"], c["reruns"]),
                           "links": [(r["run_dir"].rsplit("/", 1)[-1] or "failed run",
                                      _link(folder, r["run_dir"]), r["anomalies"],
                                      r.get("error")) for r in c["runs"]]})
    page = environment().get_template("shrink.html.j2").render(
        log=log, steps=step_rows(log), knobs=knob_rows(log), candidates=candidates,
        wall_min=f"{log['wall_s'] / 60:.1f}", rendered_at=time.strftime("%Y-%m-%d %H:%M:%S"),
        plotly_src=None, plotly_js=None,
    )
    path = folder / "report.html"
    write_atomically(path, page)
    return path
