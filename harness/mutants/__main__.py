"""`python -m harness.mutants generate|list`: make the catalog of the worker's mutants, or
show it (harness/mutants/catalog.json; docs/faults.md, "Mutants")."""

from __future__ import annotations

import argparse
import sys

from harness.console import err, out
from harness.errors import UsageError
from harness.mutants.catalog import load_catalog


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.mutants")
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="write harness/mutants/catalog.json anew")
    gen.add_argument("--seed", type=int, default=1, help="the sample's seed (1)")
    gen.add_argument("--sample", type=int, default=40,
                     help="mutants tried against the fast tests, of those run under load (40)")
    gen.add_argument("--run-seeds", default="801,803,805",
                     help="seeds of the `all` runs that measure what runs under load "
                          "(801,803,805: exactly-once with and without standbys, and "
                          "at-least-once; the power bench's seeds are others)")
    gen.add_argument("--time-limit", type=int, default=60, help="that run's load, s (60)")
    commands.add_parser("list", help="the catalog, a mutant a line")
    args = parser.parse_args(argv)
    try:
        if args.command == "generate":
            from harness.mutants.generate import generate

            seeds = [int(s) for s in args.run_seeds.split(",") if s.strip()]
            kept = generate(seed=args.seed, run_seeds=seeds,
                            time_limit_s=args.time_limit, sample=args.sample,
                            say=lambda line: err.print(line, highlight=False, markup=False))
            out.print(f"{len(kept)} mutant(s) in the catalog", highlight=False)
        else:
            for key, mutant in load_catalog().items():
                out.print(f"{key}  {mutant.label()}  ->  {mutant.mutated.splitlines()[0]}",
                          highlight=False, markup=False, soft_wrap=True)
    except UsageError as exc:
        err.print(f"python -m harness.mutants: {exc}", highlight=False, markup=False)
        return 254
    return 0


if __name__ == "__main__":
    sys.exit(main())
