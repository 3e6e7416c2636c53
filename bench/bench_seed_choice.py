"""Seeds chosen by coverage against the matrix's seeds, over the predictor alone (issue 53;
no run starts, seconds on any machine): for a cell (`--profile`, `--set K=V`, a 60 s run
by default) it draws the plans of the pool's seeds, predicts the coverage classes of each
(harness/nightly/predict.py), and prints per class how many of N runs are predicted to
reach it with seeds 1..N and with N seeds chosen by `kchaos nightly --choose-seeds
coverage`'s greedy choice (harness/nightly/seed_choice.py `cover`: each pick counted as
reaching what it predicts, no feedback, since no run finishes here).

A prediction is a possibility, not a hit: what runs really reach per hour needs two
nightlies on an idle machine (docs/faults.md, "Seeds chosen by coverage").

    .venv/bin/python bench/bench_seed_choice.py [--profile all] [--runs 10] [--pool 500]
        [--set guarantee=at_least_once ...] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harness.nightly.matrix import DEFAULT_MATRIX, Cell, load_matrix  # noqa: E402
from harness.nightly.seed_choice import ENOUGH, cover, predict_pool  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="all")
    parser.add_argument("--runs", type=int, default=10, help="N: runs of the cell")
    parser.add_argument("--pool", type=int, default=500, help="candidate seeds 1..POOL")
    parser.add_argument("--set", action="append", default=[], metavar="K=V",
                        help="a run setting of the cell, as `kchaos run --set`")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    settings = tuple(tuple(s.split("=", 1)) for s in args.set)
    cell = Cell(args.profile, 0, settings=settings)  # type: ignore[arg-type]
    matrix = load_matrix(DEFAULT_MATRIX)  # its time limit and extra args
    pool = predict_pool(matrix, range(1, args.pool + 1))(cell)
    uniform = Counter(c for seed in range(1, args.runs + 1) for c in pool[seed])
    picks = cover(pool, runs=args.runs)
    chosen = Counter(c for p in picks for c in p.predicted)
    coverable = sorted(frozenset().union(*pool.values()))
    held = Counter(c for classes in pool.values() for c in classes)

    def summary(counts: Counter[str]) -> str:
        once = sum(1 for c in coverable if counts[c] >= 1)
        twice = sum(1 for c in coverable if counts[c] >= ENOUGH)
        return f"{once} of {len(coverable)} at least once, {twice} at least {ENOUGH} times"

    print(f"cell: {cell.name}; {args.runs} runs; pool: seeds 1-{args.pool} "
          f"({len(coverable)} classes predicted by some seed of it)")
    print(f"seeds 1-{args.runs}: {summary(uniform)}")
    print(f"chosen by coverage ({', '.join(str(p.seed) for p in picks)}): {summary(chosen)}")
    rows = [(c, uniform[c], chosen[c], held[c]) for c in coverable]
    if args.markdown:
        print(f"\n| class | seeds 1-{args.runs} | chosen | seeds of the pool |")
        print("|---|---:|---:|---:|")
        for name, u, ch, h in rows:
            print(f"| `{name}` | {u} | {ch} | {h} |")
    else:
        width = max(len(c) for c in coverable) if coverable else 5
        print(f"\n{'class':<{width}}  1-{args.runs:<3} chosen  pool")
        for name, u, ch, h in rows:
            print(f"{name:<{width}}  {u:>4}  {ch:>6}  {h:>4}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
