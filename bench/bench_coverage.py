"""Fault coverage of a profile (issue 17): run seeds of it (one `kchaos run` at a time) and
print which condition classes each run reached, with the verdict (the fixed worker must
stay valid). `--runs` tabulates existing run folders instead (coverage is computed from
their stored files, so runs judged before coverage existed count too).

    .venv/bin/python bench/bench_coverage.py [--profile all] [--seeds 1,2,3]
        [--time-limit 60] [--results-dir results/coverage]
    .venv/bin/python bench/bench_coverage.py --runs results/before/* [--markdown]
    .venv/bin/python bench/bench_coverage.py --before RUN... --after RUN... [--markdown]

`--before` and `--after` take the run folders of two nightlies of the same seeds and print,
per class of a fault moment (scope `run`), how many runs of each reached it, both judged by
this checkout's classes, so a class added since the first counts in both.

A 60 s run takes 2-10 minutes depending on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from checker.coverage import CLASSES, coverage_section  # noqa: E402


def _run(profile: str, seed: int, time_limit: float, results_dir: Path) -> Path | None:
    before = set(results_dir.glob("*")) if results_dir.exists() else set()
    subprocess.run([sys.executable, "-m", "harness", "--results-dir", str(results_dir), "run",
                    "--profile", profile, "--seed", str(seed), "--time-limit", f"{time_limit:g}"],
                   cwd=REPO, check=False, stdout=subprocess.DEVNULL)
    new = [d for d in results_dir.glob("*") if d.is_dir() and d not in before]
    return max(new, key=lambda d: d.stat().st_mtime) if new else None


def _verdict(run_dir: Path) -> str:
    try:
        return str(json.loads((run_dir / "results.json").read_text()).get("verdict"))
    except (OSError, ValueError):
        return "none"


def _label(run_dir: Path) -> str:
    try:
        run = json.loads((run_dir / "run.json").read_text())
        return f"{run.get('profile')} s{run.get('seed')}"
    except (OSError, ValueError):
        return run_dir.name


def tabulate(runs: list[Path], markdown: bool) -> None:
    sections = [coverage_section(r) for r in runs]
    labels = [_label(r) for r in runs]
    verdicts = [_verdict(r) for r in runs]
    rows = [(c.name, [str(s["classes"].get(c.name, {}).get("count", 0)) for s in sections])
            for c in CLASSES]
    reached = [sum(1 for s in sections if c.name in s["reached"]) for c in CLASSES]
    if markdown:
        print("| class | " + " | ".join(labels) + " | runs reached |")
        print("|---|" + "---:|" * (len(labels) + 1))
        for (name, counts), n in zip(rows, reached, strict=True):
            print(f"| `{name}` | " + " | ".join(counts) + f" | {n}/{len(runs)} |")
        print("| verdict | " + " | ".join(verdicts) + " | |")
        return
    table = Table(title="condition classes reached (hits per run)")
    table.add_column("class")
    for label in labels:
        table.add_column(label, justify="right")
    table.add_column("runs reached", justify="right")
    for (name, counts), n in zip(rows, reached, strict=True):
        table.add_row(name, *counts, f"{n}/{len(runs)}")
    table.add_row("verdict", *verdicts, "")
    Console(width=200).print(table)


def compare(before: list[Path], after: list[Path], markdown: bool) -> None:
    sides = [[coverage_section(r) for r in runs if (r / "run.json").is_file()]
             for runs in (before, after)]
    half = [len(side) / 2 for side in sides]
    moments = [c for c in CLASSES if c.scope == "run"]
    rows = []
    for c in moments:
        shares = [sum(1 for s in side if c.name in s["reached"]) for side in sides]
        rows.append((c.name, shares))
    at_half = [sum(1 for _, shares in rows if shares[i] >= half[i]) for i in (0, 1)]
    heads = [f"before ({len(sides[0])} runs)", f"after ({len(sides[1])} runs)"]
    if markdown:
        print(f"| class | {heads[0]} | {heads[1]} |")
        print("|---|---:|---:|")
        for name, (b, a) in rows:
            print(f"| `{name}` | {b} | {a} |")
        print(f"| classes reached in at least half the runs | {at_half[0]} of {len(rows)}"
              f" | {at_half[1]} of {len(rows)} |")
        return
    table = Table(title="runs reaching each fault moment, before and after")
    table.add_column("class")
    for head in heads:
        table.add_column(head, justify="right")
    for name, (b, a) in rows:
        table.add_row(name, str(b), str(a))
    table.add_row("at least half", f"{at_half[0]} of {len(rows)}", f"{at_half[1]} of {len(rows)}")
    Console(width=200).print(table)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="all")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--results-dir", type=Path, default=REPO / "results" / "coverage")
    ap.add_argument("--runs", nargs="*", type=Path, help="tabulate these run folders only")
    ap.add_argument("--before", nargs="*", type=Path, help="run folders of the first nightly")
    ap.add_argument("--after", nargs="*", type=Path, help="run folders of the second nightly")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    if args.before or args.after:
        compare(args.before or [], args.after or [], args.markdown)
        return
    runs = [r for r in args.runs or [] if r.is_dir()]
    if not args.runs:
        for seed in (int(s) for s in args.seeds.split(",")):
            done = _run(args.profile, seed, args.time_limit, args.results_dir)
            if done is not None:
                runs.append(done)
    tabulate(runs, args.markdown)


if __name__ == "__main__":
    main()
