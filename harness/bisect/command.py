"""`kchaos bisect results/<run>`: replay a failing Kafka Streams run's plan and config on
the releases Maven Central serves in a range, bisecting to the release where the anomaly
stops (or starts) coming back; a folder with bisect.json, the replays and a report page."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from common.files import write_atomically
from harness.anomalies import anomaly_classes, rate_text
from harness.bisect.faithful import plan_steps, shortfalls
from harness.bisect.search import Bisection, ReplayFailed, RunResult, Trial, Undecided
from harness.config.protocol import FIRST_STREAMS_RELEASE, STREAMS, kstreams_refusal
from harness.config.run import RunConfig
from harness.config.suts import names_with, sut_kind
from harness.console import err, out
from harness.errors import HarnessError, UsageError
from harness.kafka.releases import fetch_metadata, in_range, releases
from harness.report.pages import environment, href
from harness.results import new_run_dir
from harness.shrink.failing import (
    check_reruns,
    original_result,
    require_run_folder,
    target_classes_of,
)
from harness.sut.kstreams import default_version


def _inputs(run_dir: Path, times: int, min_hits: int,
            anomaly: str | None) -> tuple[RunConfig, Any, tuple[str, ...]]:
    from harness.run.command import read_config_and_plan

    check_reruns(times, min_hits)
    require_run_folder(run_dir, "a failing --sut kstreams run")
    config, plan = read_config_and_plan(run_dir)
    if not sut_kind(config.sut).bisect:
        raise UsageError(f"{run_dir} ran --sut {config.sut}: bisect replays a "
                         f"{names_with('bisect')} run on other Kafka Streams releases (for the "
                         "worker's switches, `kchaos shrink` or `kchaos repro`)")
    return config, plan, target_classes_of(run_dir, anomaly, "bisect", from_valid=True)


def _write(folder: Path, log: dict[str, Any], trials: list[Trial]) -> Path:
    write_atomically(folder / "bisect.json", json.dumps(log, indent=2) + "\n")
    rows = [{"version": t.version, "reproduced": t.reproduced, "rate": _rate(t),
             "links": [(Path(r.run_dir).name, href(os.path.relpath(
                 Path(r.run_dir) / "report.html", folder)), r.anomalies, r.shortfalls)
                       for r in t.runs]}
            for t in trials]
    page = environment().get_template("bisect.html.j2").render(
        log=log, trials=rows, wall_min=f"{log['wall_s'] / 60:.1f}",
        plotly_src=None, plotly_js=None)
    path = folder / "report.html"
    write_atomically(path, page)
    return path


def _rate(trial: Trial) -> str:
    """Hits of the counted replays, and those that fell short of the plan."""
    rate = rate_text(trial.hits, trial.counted)
    return f"{rate}, {trial.unreached} fell short" if trial.unreached else rate


def bisect(run_dir: Path, versions: str | None, times: int, min_hits: int,
           results_dir: Path | None, anomaly: str | None = None) -> int:
    from harness.run.command import execute, require_tools

    config, plan, classes = _inputs(run_dir, times, min_hits, anomaly)
    version = config.kstreams_version or default_version()
    served = releases(fetch_metadata())
    if config.group_protocol == STREAMS:  # only the releases that take its protocol
        served = [v for v in served if kstreams_refusal(v) is None]
    try:
        chosen = in_range(served, versions or "", version)
    except UsageError as exc:
        if config.group_protocol != STREAMS:
            raise
        raise UsageError(f"{exc} (a --group-protocol streams run is replayed only on the "
                         f"releases that take it, {FIRST_STREAMS_RELEASE} on)") from None
    require_tools(config)
    folder = new_run_dir(results_dir or run_dir.parent, f"bisect-{run_dir.name}")
    out.print(f"bisect folder: {folder}", highlight=False, soft_wrap=True, markup=False)
    err.print(f"aiming at {', '.join(classes)} over {len(chosen)} releases "
              f"({chosen[0]} … {chosen[-1]}); a release reproduces at {min_hits} of {times}")

    original_steps = plan_steps(run_dir)

    def replay(release: str) -> RunResult:
        err.rule(f"Kafka Streams {release}")
        started = time.monotonic()
        try:
            outcome = execute(replace(config, kstreams_version=release), folder / "runs", plan)
        except (HarnessError, UsageError) as exc:
            return RunResult("", (), 255, time.monotonic() - started, error=str(exc))
        return RunResult(str(outcome.run_dir), anomaly_classes(outcome.run_dir),
                         outcome.exit_code, time.monotonic() - started,
                         shortfalls=shortfalls(original_steps, plan_steps(outcome.run_dir)))

    def said(trial: Trial) -> None:
        word = "[red]reproduces[/]" if trial.reproduced else "[green]does not[/]"
        err.print(f"Kafka Streams {trial.version}: {word} ({_rate(trial)})")

    search = Bisection(chosen, replay, classes, times, min_hits,
                       known={version: original_result(run_dir)}, on_trial=said)
    started = time.monotonic()
    log: dict[str, Any] = {
        "original_run": str(run_dir), "original_version": version, "versions": chosen,
        "target_classes": list(classes), "times": times, "min_hits": min_hits,
        "answer": None, "error": None}
    undecided = False
    try:
        answer = search.run()
        log["answer"] = answer.to_json()
    except ReplayFailed as exc:
        log["error"] = f"a replay could not run, so the search stopped: {exc}"
    except Undecided as exc:
        undecided = True
        log["error"] = f"a release could not be judged, so the search stopped: {exc}"
    finally:  # Ctrl-C or a failed replay keeps what was established
        trials = sorted(search.trials.values(), key=lambda t: chosen.index(t.version))
        log.update(trials=[t.to_json() for t in trials], wall_s=time.monotonic() - started,
                   replays=sum(len(t.runs) for t in trials))
        page = _write(folder, log, trials)
    if undecided:  # unknown, Jepsen's 2: the replays ran, the plan did not
        err.print(f"[yellow]{log['error']}[/] (evidence: {page})", soft_wrap=True)
        return 2
    if log["error"]:
        raise HarnessError(f"{log['error']} (evidence so far: {page})")
    out.print(answer.sentence(), highlight=False)
    out.print(f"report: {page}", highlight=False, soft_wrap=True)
    return 0 if answer.older is not None else 2
