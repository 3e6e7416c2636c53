"""`kchaos shrink results/<run>`: check the input, run the search against real reruns
(the repro machinery: the run's config, a fixed plan), write the shrink folder."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from faults.model import Plan
from harness.anomalies import anomaly_classes, rate_text
from harness.config.run import RunConfig
from harness.console import err, out
from harness.errors import HarnessError, UsageError
from harness.results import new_run_dir
from harness.shrink.failing import (
    check_reruns,
    original_result,
    require_run_folder,
    target_classes_of,
)
from harness.shrink.files import (
    admissible,
    knob_defaults,
    original_variant,
    variant_config,
    write_shrink_folder,
)
from harness.shrink.search import Candidate, Runner, RunResult, Search
from harness.shrink.timing import Variant


def _inputs(run_dir: Path, times: int, min_hits: int,
            anomaly: str | None) -> tuple[RunConfig, Plan, tuple[str, ...]]:
    """Everything that can be refused, refused before anything runs (254)."""
    from harness.run.command import read_config_and_plan

    check_reruns(times, min_hits)
    require_run_folder(run_dir, "a failing run")
    if not (run_dir / "plan.json").is_file():
        raise UsageError(f"{run_dir}/plan.json is missing: without the plan that ran there "
                         "is nothing to shrink")
    config, plan = read_config_and_plan(run_dir)
    return config, plan, target_classes_of(run_dir, anomaly, "a shrink")


def _runner(config: RunConfig, plan: Plan, runs_dir: Path) -> Runner:
    from harness.run.command import execute

    def run(variant: Variant) -> RunResult:
        started = time.monotonic()
        candidate_plan = replace(plan, steps=variant.steps)
        candidate_config = variant_config(config, variant)
        try:
            outcome = execute(candidate_config, runs_dir, candidate_plan)
        except HarnessError as exc:  # one rerun broke: a miss, the search goes on
            return RunResult("", (), 255, time.monotonic() - started, error=str(exc))
        return RunResult(str(outcome.run_dir), anomaly_classes(outcome.run_dir),
                         outcome.exit_code, time.monotonic() - started)

    return run


def shrink(run_dir: Path, times: int, min_hits: int, budget_s: float,
           results_dir: Path | None, anomaly: str | None = None) -> int:
    from harness.run.command import require_tools

    config, plan, classes = _inputs(run_dir, times, min_hits, anomaly)
    require_tools(config)
    folder = new_run_dir(results_dir or run_dir.parent, f"shrink-{run_dir.name}")
    out.print(f"shrink folder: {folder}", highlight=False, soft_wrap=True, markup=False)
    err.print(f"aiming at {', '.join(classes)}; each candidate rerun up to {times} times, "
              f"kept at {min_hits} hit(s); budget {budget_s / 60:.0f} min")
    original = original_variant(config, plan)
    search = Search(_runner(config, plan, folder / "runs"), classes, times, min_hits,
                    budget_s, defaults=knob_defaults(config),
                    admissible=lambda v: admissible(config, v))

    def announce(c: Candidate) -> None:
        best = search.best or original
        err.rule(f"candidate {c.number} ({c.phase}): {c.label}")
        err.print(f"[dim]{search.elapsed_s() / 60:.1f} of {budget_s / 60:.0f} min, "
                  f"{search.reruns} reruns so far, best: "
                  f"{len(best.steps)} step(s), {best.time_limit_s:g}s[/]", highlight=False)

    def settled(c: Candidate) -> None:
        word = "[green]reproduces[/]" if c.reproduced else "[yellow]does not[/]"
        err.print(f"candidate {c.number}: {word} ({rate_text(c.hits, len(c.runs))})")

    search.on_candidate, search.on_result = announce, settled
    started = time.monotonic()
    best: Variant | None = None
    try:
        best = search.shrink(original, original_result(run_dir))
    finally:  # Ctrl-C or a crash keeps what the reruns so far established
        paths = write_shrink_folder(folder, run_dir, config, plan, search, classes,
                                    time.monotonic() - started)
    if best is None:
        within = " within the budget" if search.stopped_by_budget else ""
        out.print(f"the original plan did not reproduce {min_hits} of {times} times{within}: "
                  "nothing shrunk", highlight=False)
        out.print(f"report: {paths.report}", highlight=False, soft_wrap=True)
        return 2
    out.print(f"steps {len(plan.steps)} -> {len(best.steps)}, time limit "
              f"{config.time_limit_s:g}s -> {best.time_limit_s:g}s, drawn knobs "
              f"{len(original.knobs)} -> {len(best.knobs)}; "
              f"{search.reruns} reruns in "
              f"{(time.monotonic() - started) / 60:.1f} min"
              f"{' (budget spent)' if search.stopped_by_budget else ''}", highlight=False)
    out.print(f"shrunk plan: {paths.plan}", highlight=False, soft_wrap=True)
    out.print(f"report: {paths.report}", highlight=False, soft_wrap=True)
    out.print(f"repro:  {paths.repro_command}", highlight=False, soft_wrap=True)
    return 0
