"""A stand-in for `kchaos` in the nightly tests: `run` writes a plausible run folder and
exits with the code the test chose; `clean` does nothing. Real runs need a cluster.

    fake_kchaos.py --outcomes JSON --results-dir DIR run --profile P --seed S [--bugs B]
        --time-limit T [...]

Outcomes map the first matching key of "P/S/B", "P/B", "B" (or "fixed") and "default" to
an exit code (0 valid, 1 invalid, 2 unknown, 255 a folder without results) or to
"no-folder" (exit 255, nothing written) or "hang" (sleep until stopped).

`--coverage JSON` maps "P/S" (or "default") to the coverage classes the run reached, put
in its results.json's `coverage` section (the nightly's seed choice reads them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from synth_run import Spec, make_run

VERDICT = {0: "valid", 1: "invalid", 2: "unknown", 255: "unknown"}


def outcome(table: dict[str, object], profile: str, seed: str, bugs: str) -> object:
    tag = bugs or "fixed"
    for key in (f"{profile}/{seed}/{tag}", f"{profile}/{tag}", tag, "default"):
        if key in table:
            return table[key]
    return 0


def main(argv: list[str]) -> int:
    # Global options come before the command, as in kchaos; split there.
    at = next(i for i, a in enumerate(argv) if a in ("run", "clean"))
    parser = argparse.ArgumentParser()
    parser.add_argument("--outcomes", default="{}")
    parser.add_argument("--results-dir")
    parser.add_argument("--coverage", default="{}")
    args = parser.parse_args(argv[:at])
    if argv[at] == "clean":
        return 0
    rest = argv[at + 1 :]
    run = argparse.ArgumentParser()
    for opt in ("--profile", "--seed", "--time-limit"):
        run.add_argument(opt, required=True)
    run.add_argument("--bugs", default="")
    opts, _extra = run.parse_known_args(rest)
    results_dir = Path(args.results_dir or "results")
    result = outcome(json.loads(args.outcomes), opts.profile, opts.seed, opts.bugs)
    print(f"fake kchaos run {opts.profile} seed {opts.seed} bugs {opts.bugs or '-'}")
    if result == "hang":
        print(f"hanging: pid {os.getpid()}", flush=True)  # the tests check it is stopped
        time.sleep(3600)
    if result == "no-folder":
        print("kchaos: harness failed: broker never became ready", file=sys.stderr)
        return 255
    code = int(result)  # type: ignore[call-overload]
    bugs = tuple(b for b in opts.bugs.split(",") if b)
    name = f"{datetime.now(UTC):%Y%m%dT%H%M%S%f}-{opts.profile}-{opts.seed}"
    spec = Spec(
        verdict=VERDICT[code], profile=opts.profile, seed=int(opts.seed), bugs=bugs,
        exit_code=code, started_at=datetime.now(UTC),
        missing=("results.json",) if code == 255 else (),
    )
    run_dir = make_run(results_dir, name, spec)
    reached = json.loads(args.coverage)
    reached = reached.get(f"{opts.profile}/{opts.seed}", reached.get("default"))
    if reached is not None and code != 255:
        results = json.loads((run_dir / "results.json").read_text())
        results["coverage"] = {"reached": reached, "missed": [], "classes": {}}
        (run_dir / "results.json").write_text(json.dumps(results))
    print(f"run folder: {run_dir}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
