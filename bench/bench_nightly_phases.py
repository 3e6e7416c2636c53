"""Where a nightly's runs spent their time: per cell kind (profile, platform, SUT), the
median of each phase run.json records, the run's wall time as the nightly measured it
(start of `kchaos run` to its exit, report included), and the harness overhead
(wall - load) / load. Reads stored files only; runs nothing.

    .venv/bin/python bench/bench_nightly_phases.py results/nightly-<stamp>

The runs of a nightly share the machine (`jobs` at a time) and one Spark Connect server,
so these are the figures under the nightly's own contention, not an idle machine's.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from harness.config.options import given_settings, settings_argv

PHASES = ("setup_s", "drain_s", "collect_s", "check_s")


KIND_SETTINGS = {"platform": "{}", "sut": "{}", "brokers": "{} brokers"}


def kind(cell: dict[str, Any]) -> str:
    """The profile, and what changes a run's fixed costs: platform, SUT, cluster size, as
    the cell gave them (settings or options)."""
    settings = [(str(k), str(v)) for k, v in cell.get("settings") or ()]
    given = given_settings([*settings_argv(settings), *(cell.get("args") or ())])
    extra = [label.format(given[key]) for key, label in KIND_SETTINGS.items() if key in given]
    return " ".join([cell["profile"], *extra])


def run_figures(nightly_dir: Path, entry: dict[str, Any]) -> dict[str, float] | None:
    """One run's phases, wall and overhead; None when it left no usable run.json."""
    if not entry.get("run_dir"):
        return None
    # Recorded relative to where the nightly ran; its runs sit beside its own folder.
    run_dir = nightly_dir.parent / Path(entry["run_dir"]).name
    try:
        timings = json.loads((run_dir / "run.json").read_text()).get("timings", {})
    except (OSError, ValueError):
        return None
    load = float(timings.get("load_s") or 0.0)
    if not load:
        return None
    wall = float(entry["duration_s"])
    out = {p: float(timings.get(p) or 0.0) for p in PHASES}
    return {**out, "wall_s": wall, "ratio": (wall - load) / load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nightly_dir", type=Path)
    args = parser.parse_args()
    doc = json.loads((args.nightly_dir / "nightly.json").read_text())
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for entry in doc["runs"]:
        figures = run_figures(args.nightly_dir, entry)
        if figures is not None:
            groups[kind(entry["cell"])].append(figures)
            groups["(all runs)"].append(figures)
    columns = (*PHASES, "wall_s", "ratio")
    table = Table(title=f"{args.nightly_dir.name}: median seconds per cell kind")
    table.add_column("cell kind")
    table.add_column("runs", justify="right")
    for column in columns:
        table.add_column(column.removesuffix("_s"), justify="right")
    for name in sorted(groups, key=lambda k: (k == "(all runs)", k)):
        runs = groups[name]
        medians = [statistics.median(r[c] for r in runs) for c in columns]
        table.add_row(name, str(len(runs)), *[f"{m:.2f}" if c == "ratio" else f"{m:.1f}"
                                              for c, m in zip(columns, medians, strict=True)])
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
