"""Detection power on bugs nobody tuned for: the catch rate of `all` on the catalogued
mutants of the Python worker (harness/mutants/catalog.json, made by a tool:
`python -m harness.mutants generate`), and per missed mutant the coverage classes its runs
reached (what the faults did get to, so what they did not).

One `kchaos nightly` runs every mutant under `all` on each seed, and the fixed worker on
the same seeds as the control (a red control makes the figure worthless: it is printed
first). A mutant is caught when one of its runs is invalid.

    .venv/bin/python bench/bench_power.py [--seeds 901,902] [--time-limit 60] [--jobs 2]
        [--only KEY,KEY] [--results-dir DIR]

The default seeds are used by no matrix of harness/ (the profiles were tuned on those).
Figures are the catch rate, per mutant the verdicts and classes, written beside the
nightly as power.json and power.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harness.mutants.catalog import Mutant, load_catalog, load_equivalent  # noqa: E402
from harness.report.nightlies import nightly_dirs, read_nightly  # noqa: E402
from harness.report.summary import RunSummary  # noqa: E402

DEFAULT_SEEDS = (901, 902)
console = Console(width=160)


def matrix(mutants: list[Mutant], seeds: list[int], time_limit_s: int, jobs: int
           ) -> dict[str, Any]:
    return {
        "time_limit_s": time_limit_s, "jobs": jobs, "seeds": seeds, "profiles": ["all"],
        "bugs": [[]],  # the control: the fixed worker on the same seeds
        "include": [{"profile": "all", "settings": {"mutant": m.key}} for m in mutants],
    }


def run_nightly(folder: Path, doc: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "matrix.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    subprocess.run([sys.executable, "-m", "harness", "--results-dir", str(folder), "nightly",
                    "--matrix", str(path), "--budget", "6h"], cwd=REPO, check=False)
    found = nightly_dirs(folder)
    if not found:
        raise SystemExit(f"bench_power: the nightly left no folder in {folder}")
    return found[-1]


def classes_reached(summary: RunSummary) -> list[str]:
    try:
        doc = json.loads((summary.run_dir / "results.json").read_text())
        return sorted(doc.get("coverage", {}).get("reached", []))
    except (OSError, ValueError, AttributeError):
        return []


def never_started(summary: RunSummary) -> bool:
    """The harness stopped the run at set-up because the pods never reached RUNNING: the
    mutant broke start-up itself. Not a check's catch, and not a miss: counted apart."""
    try:
        error = json.loads((summary.run_dir / "run.json").read_text()).get("error") or ""
    except (OSError, ValueError, AttributeError):
        return False
    return "not RUNNING" in str(error)


def mutant_of(summary: RunSummary) -> str | None:
    keys = [b.removeprefix("mutant:") for b in summary.bugs if b.startswith("mutant:")]
    return keys[0] if keys else None


def figures(log_dir: Path, catalog: dict[str, Mutant],
            equivalent: dict[str, str] | None = None) -> dict[str, Any]:
    """The catch rate over every mutant run, and over those not judged equivalent
    (harness/mutants/equivalent.json), where a mutant whose pods never started while the
    control's did counts as caught: a worker that cannot start is a bug its user sees."""
    equivalent = equivalent or {}
    nightly = read_nightly(log_dir)
    runs = [r.summary for r in nightly.runs if r.summary is not None]
    control = [s for s in runs if mutant_of(s) is None]
    per: dict[str, list[RunSummary]] = {}
    for s in runs:
        key = mutant_of(s)
        if key is not None:
            per.setdefault(key, []).append(s)
    rows: list[dict[str, Any]] = []
    for key, summaries in sorted(per.items()):
        invalid = [s for s in summaries if s.verdict is False]
        stuck_runs = [s for s in summaries if never_started(s)]
        rows.append({
            "key": key, "mutant": catalog[key].label() if key in catalog else key,
            "mutated": catalog[key].mutated.splitlines()[0] if key in catalog else "",
            "runs": {s.seed: {"verdict": "never started" if s in stuck_runs else s.outcome,
                              "anomalies": s.anomaly_counts,
                              "reached": classes_reached(s)} for s in summaries},
            "caught": bool(invalid),
            "never_started": bool(stuck_runs) and not invalid,
            "equivalent": equivalent.get(key, ""),
        })
    judged = [r for r in rows if r["runs"]]
    caught = sum(r["caught"] for r in judged)
    stuck = sum(r["never_started"] for r in judged)
    killable = [r for r in judged if not r["equivalent"]]
    started = {s.seed for s in control if not never_started(s)}

    def stopped_alone(row: dict[str, Any]) -> bool:  # never started where the control did
        return bool(row["never_started"]) and all(
            seed in started for seed, run in row["runs"].items()
            if run["verdict"] == "never started")

    killed = sum(bool(r["caught"]) or stopped_alone(r) for r in killable)
    return {
        "equivalent": len(judged) - len(killable), "killable": len(killable),
        "killed_of_killable": killed,
        "catch_rate_of_killable": round(killed / len(killable), 3) if killable else None,
        "nightly": str(log_dir), "mutants": len(judged), "caught": caught,
        "never_started": stuck,
        "catch_rate": round(caught / len(judged), 3) if judged else None,
        "caught_or_never_started": round((caught + stuck) / len(judged), 3) if judged else None,
        "control": {s.seed: s.outcome for s in control},
        "control_valid": all(s.verdict is True for s in control),
        "rows": rows,
    }


def show(result: dict[str, Any]) -> str:
    table = Table(title="mutants under `all`")
    for column in ("mutant", "mutated", "caught", "runs (seed: verdict, anomalies)"):
        table.add_column(column, overflow="fold")
    lines = ["| mutant | mutated | caught | runs |", "|---|---|---|---|"]
    for row in result["rows"]:
        runs = "; ".join(f"{seed}: {r['verdict']} {r['anomalies'] or ''}".strip()
                         for seed, r in sorted(row["runs"].items()))
        said = ("yes" if row["caught"] else "never started" if row["never_started"]
                else "equivalent" if row["equivalent"] else "NO")
        table.add_row(row["mutant"], row["mutated"], said, runs)
        lines.append(f"| `{row['mutant']}` | `{row['mutated']}` | "
                     f"{said if said != 'NO' else '**no**'} | {runs} |")
    console.print(table)
    missed = [r for r in result["rows"]
              if not (r["caught"] or r["never_started"] or r["equivalent"])]
    for row in missed:
        reached = {seed: r["reached"] for seed, r in row["runs"].items()}
        console.print(f"missed {row['key']}: classes reached {reached}", highlight=False)
        lines.append(f"\nmissed `{row['key']}`: classes reached {reached}")
    headline = (f"catch rate: {result['caught']} of {result['mutants']} mutants "
                f"({100 * (result['catch_rate'] or 0):.0f}%) invalid in a run; "
                f"{result['never_started']} more never started (pods not RUNNING at set-up); "
                f"control (fixed worker): {result['control']}; not judged equivalent: "
                f"{result['killed_of_killable']} of {result['killable']} caught or never "
                f"started ({100 * (result['catch_rate_of_killable'] or 0):.0f}%)")
    console.print(headline, highlight=False)
    return "\n".join([headline, "", *lines]) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default=",".join(map(str, DEFAULT_SEEDS)))
    parser.add_argument("--time-limit", type=int, default=60)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="", help="mutant keys, comma-separated")
    parser.add_argument("--results-dir", type=Path, default=None)
    parser.add_argument("--from-nightly", type=Path, default=None,
                        help="figures of a finished bench nightly (no runs)")
    args = parser.parse_args()
    catalog = load_catalog()
    if args.from_nightly is not None:
        log_dir = args.from_nightly
    else:
        chosen = [m for k, m in catalog.items() if not args.only or k in args.only.split(",")]
        seeds = [int(s) for s in args.seeds.split(",") if s]
        folder = args.results_dir or REPO / "results" / time.strftime("bench-power-%Y%m%dT%H%M%S")
        console.print(f"{len(chosen)} mutant(s) x seeds {seeds} under `all` "
                      f"({args.time_limit} s), {args.jobs} at a time: {folder}", highlight=False)
        log_dir = run_nightly(folder, matrix(chosen, seeds, args.time_limit, args.jobs))
    result = figures(log_dir, catalog, load_equivalent())
    (log_dir / "power.json").write_text(json.dumps(result, indent=1) + "\n")
    (log_dir / "power.md").write_text(show(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
