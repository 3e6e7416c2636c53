"""Make the mutant catalog: every site the operators find in the worker's commit, restore,
checkpoint, standby, fencing and global-store modules, less those that never run under load
(one `all` run with the worker under coverage.py), less those the fast tests already kill,
sampled with a seed.

A mutant the fast tests kill is found without any fault; one that never runs under load
cannot be found by any. What is left is what the fault profiles are for.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from faults.mixes import ALL
from harness.mutants.catalog import REPO, Mutant, mutant_tree, save_catalog
from harness.mutants.operators import sites

# The worker's modules that commit, restore, checkpoint, keep standbys, fence and rebuild
# the global store (not its flags, tracing, assignor or the app wiring).
TARGETS = tuple(f"workloads/worker/{name}.py" for name in (
    "checkpoint", "clients", "global_thread", "restore", "state_manager", "statedir",
    "store", "task_active", "task_standby", "thread", "thread_tasks",
))
FAST_TESTS = ("-m", "not kafka and not spark and not slow and not docker", "tests/worker")
TEST_TIMEOUT_S = 300.0

COVERAGE_RC = """\
[run]
source = {source}
parallel = true
data_file = {data}
sigterm = true
"""


def all_sites() -> list[Mutant]:
    return [Mutant.of(path, site) for path in TARGETS
            for site in sites((REPO / path).read_text())]


def lines_run_under_load(seeds: list[int], time_limit_s: int,
                         folder: Path) -> dict[str, set[int]]:
    """The worker's lines that ran in the pods of `all` runs on these seeds (a pod killed
    by the nemesis keeps none: its coverage dies with it; the others save theirs at exit;
    several seeds, since one may draw a single partition or no standby)."""
    import coverage

    folder.mkdir(parents=True, exist_ok=True)
    rc = folder / "coveragerc"
    rc.write_text(COVERAGE_RC.format(source=REPO / "workloads" / "worker",
                                     data=folder / ".coverage"))
    (folder / "sitecustomize.py").write_text("import coverage\ncoverage.process_startup()\n")
    env = {**os.environ, "COVERAGE_PROCESS_START": str(rc),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), str(REPO),
                                                       os.environ.get("PYTHONPATH")]))}
    for seed in seeds:
        subprocess.run([sys.executable, "-m", "harness", "--results-dir",
                        str(folder / "results"), "run", "--profile", ALL.name,
                        "--seed", str(seed), "--time-limit", str(time_limit_s)],
                       env=env, cwd=folder, check=False)
    data = coverage.Coverage(data_file=str(folder / ".coverage"), config_file=str(rc))
    data.combine()
    measured = data.get_data()
    return {str(Path(f).resolve().relative_to(REPO)): set(measured.lines(f) or ())
            for f in measured.measured_files() if Path(f).resolve().is_relative_to(REPO)}


def killed_by_fast_tests(mutant: Mutant) -> bool:
    """The worker's fast tests run against the mutant's tree: does any fail (or hang)?"""
    tree = mutant_tree(mutant)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(REPO)])}
    try:
        done = subprocess.run([sys.executable, "-P", "-m", "pytest", "-x", "-q",
                               "-p", "no:cacheprovider", *FAST_TESTS],
                              cwd=REPO, env=env, capture_output=True, timeout=TEST_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return True
    return done.returncode != 0


def covered(mutant: Mutant, lines: dict[str, set[int]]) -> bool:
    span = range(mutant.line, mutant.line + mutant.original.count("\n") + 1)
    return any(n in lines.get(mutant.file, set()) for n in span)


def generate(*, seed: int, run_seeds: list[int], time_limit_s: int, sample: int,
             say: Callable[[str], None]) -> list[Mutant]:
    candidates = all_sites()
    say(f"{len(candidates)} sites in {len(TARGETS)} modules")
    with tempfile.TemporaryDirectory(prefix="kchaos-mutants-") as scratch:
        lines = lines_run_under_load(run_seeds, time_limit_s, Path(scratch))
    ran = [m for m in candidates if covered(m, lines)]
    say(f"{len(ran)} of them ran under load (profile all, seeds {run_seeds})")
    chosen = sorted(random.Random(seed).sample(ran, min(sample, len(ran))),
                    key=lambda m: (m.file, m.line, m.operator))
    survivors: list[Mutant] = []
    for number, mutant in enumerate(chosen, 1):
        started = time.monotonic()
        killed = killed_by_fast_tests(mutant)
        say(f"{number}/{len(chosen)} {'killed by the fast tests' if killed else 'survives':>24}"
            f"  ({time.monotonic() - started:4.0f} s)  {mutant.label()}")
        if not killed:
            survivors.append(mutant)
    save_catalog(survivors, {
        "sites": len(candidates), "ran_under_load": len(ran), "sampled": len(chosen),
        "killed_by_fast_tests": len(chosen) - len(survivors), "sample_seed": seed,
        "coverage_runs": [f"kchaos run --profile all --seed {seed} --time-limit {time_limit_s}"
                          for seed in run_seeds],
        "modules": list(TARGETS),
    })
    return survivors
