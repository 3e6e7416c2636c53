"""`kchaos run`, `kchaos repro`, `kchaos check`: the run lifecycle behind a live display."""

from __future__ import annotations

import json
import socket
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.live import Live
from rich.markup import escape
from rich.table import Table

from checker.model import Verdict, compose, compose_exit_codes, exit_code
from faults.kinds import FAULT_KINDS
from faults.model import Plan
from faults.params import ParamError
from harness.anomalies import rate_text, read_failing_counts
from harness.config.platforms import PLATFORMS
from harness.config.run import RunConfig, repro_command
from harness.config.suts import SUT_KINDS
from harness.console import err, out
from harness.errors import UsageError
from harness.results import read_json
from harness.run.lifecycle import Run, RunOutcome, draw_run_plan
from harness.run.progress import Progress

VERDICT_STYLE: dict[Verdict, str] = {True: "[bold green]VALID[/]", False: "[bold red]INVALID[/]"}


def _progress_table(config: RunConfig, progress: Progress) -> Table:
    table = Table.grid(padding=(0, 2))
    elapsed = time.monotonic() - progress.started
    lag = "?" if progress.lag is None else str(progress.lag)
    table.add_row(
        f"[bold]{progress.phase}[/]",
        f"{elapsed:5.0f}s",
        f"events sent {progress.sent} / acked {progress.acked}",
        f"pods up {progress.pods_up}/{progress.pods}",
        f"faults {progress.faults_applied}/{progress.faults_planned}"
        + (f" ({progress.faults_failed} failed)" if progress.faults_failed else ""),
        f"lag {lag}",
    )
    return table


def execute(config: RunConfig, results_dir: Path, plan: Plan | None = None) -> RunOutcome:
    from harness.platforms import require_platform

    plan = plan or draw_run_plan(config)
    # Before the run folder exists: an engine that answers, faults the platform can apply.
    require_platform(config.platform, (step.fault for step in plan.steps), config.bootstrap)
    run = Run(config, results_dir, plan)
    out.print(f"run folder: {run.run_dir}", highlight=False, soft_wrap=True, markup=False)
    what = (f"app {escape(config.app or '?')}" if SUT_KINDS[config.sut].user_app
            else f"bugs {','.join(config.bugs) or 'none'}")
    err.print(
        f"profile [bold]{config.profile}[/] seed {config.seed} {what}; {config.pods} pods x "
        f"{config.threads} threads, {config.brokers} broker(s), {config.time_limit_s:.0f}s at "
        f"{config.rate:.0f} events/s"
    )
    if config.drawn_knobs:  # a broad profile's settings, drawn from the seed (faults/knobs.py)
        drawn = ", ".join(f"{k} {getattr(config, k)}" for k in config.drawn_knobs)
        err.print(f"[dim]drawn from the seed (--knobs default: none): {drawn}[/]",
                  highlight=False)
    outcome = execute_showing_progress(config, run)
    _print_verdict(outcome)
    return outcome


def execute_showing_progress(config: RunConfig, run: Run) -> RunOutcome:
    """The run's phases under a live status line on stderr."""
    with Live(_progress_table(config, run.progress), console=err, refresh_per_second=4,
              transient=False) as live:
        outcome = run.execute(lambda p: live.update(_progress_table(config, p)))
    if not err.is_terminal:  # Live ends its last frame without a newline there
        err.line()
    return outcome


def _print_verdict(outcome: RunOutcome) -> None:
    results_path = outcome.run_dir / "results.json"
    doc: dict[str, Any] = {}
    if results_path.exists():
        doc = json.loads(results_path.read_text())
    counts: dict[str, Any] = doc.get("anomaly_counts", {})
    verdict = VERDICT_STYLE.get(outcome.verdict, "[bold yellow]UNKNOWN[/]")
    anomalies = ", ".join(f"{k}: {v}" for k, v in counts.items()) or "no anomalies"
    if outcome.verdict is True and counts:  # e.g. duplicates under at-least-once
        anomalies = f"no anomalies; counted but allowed: {anomalies}"
    out.print(f"verdict {verdict}  ({anomalies}){not_judged(doc)}", highlight=False,
              soft_wrap=True)
    configured = ran_with_line(doc)
    if configured:
        out.print(configured, highlight=False, soft_wrap=True, markup=False)
    report = outcome.run_dir / "report.html"
    if report.exists():
        out.print(f"report: {report}", highlight=False, soft_wrap=True)
    out.print(f"repro:  {repro_command(outcome.run_dir)}", highlight=False, soft_wrap=True)


def ran_with_line(results: dict[str, Any]) -> str:
    """What an app run's verdict was judged by, under the verdict: the guarantee and the
    record cache the pods ran with and whose choice each was (results.json's `ran_with`);
    empty for a ledger run."""
    ran = results.get("ran_with")
    if not isinstance(ran, dict):
        return ""
    line = f"ran with: guarantee {ran.get('guarantee')} ({ran.get('guarantee_chosen_by', '?')})"
    if "record_cache_bytes" in ran:
        size = int(ran["record_cache_bytes"])
        cache = f"{size} bytes" if size else "off"
        line += f", record cache {cache} ({ran.get('record_cache_chosen_by', '?')})"
    return line


def not_judged(results: dict[str, Any]) -> str:
    """The verdict line's tail when the check that carries the run's meaning was not
    applicable (an app's oracle): the verdict is the other checks' only; or when it judged
    only part of the output (an app under at-least-once)."""
    missing = results.get("not_judged")
    partly = results.get("partly_judged")
    if isinstance(partly, dict):
        judged = "; ".join(str(j) for j in partly.get("judged") or ())
        return (f"  [bold yellow]PARTLY JUDGED[/] by the {partly.get('check')}: "
                f"{escape(judged)}; the rest not judged (see the report)")
    if not isinstance(missing, dict):
        return ""
    return (f"  [bold yellow]NOT JUDGED[/] by the {missing.get('check')}: "
            f"{escape(str(missing.get('reason')))}")


def require_tools(config: RunConfig) -> None:
    """What the run needs from the machine, checked before its folder exists (after what
    its SUT refuses: a release, or one that cannot take the run's protocol, is said before
    anything is fetched)."""
    from harness.kafka.jars import require_java
    from harness.platforms import require_platform
    from harness.sut import open_sut

    open_sut(config)
    require_platform(config.platform)
    require_bootstrap(config.bootstrap)
    local_brokers = config.bootstrap is None and PLATFORMS[config.platform].brokers_need_java
    if local_brokers or SUT_KINDS[config.sut].needs_java:
        require_java()  # for the brokers the run starts, or a Java SUT's build
    if config.kafka_version is not None and config.bootstrap is None:
        from harness.kafka.jars import kafka_libs

        # Fetched now (once per release): one Maven Central does not serve is one line,
        # before a run folder exists.
        with err.status(f"fetching Kafka {config.kafka_version} jars from Maven Central"):
            kafka_libs(config.kafka_version)


def require_bootstrap(bootstrap: str | None, timeout_s: float = 5.0) -> None:
    """A --bootstrap given by the user must be HOST:PORT[,HOST:PORT...] and answer on TCP:
    said now, in one line, rather than as a client timeout deep in the setup phase."""
    if bootstrap is None:
        return
    reasons = []
    for address in bootstrap.split(","):
        host, _, port = address.strip().rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise UsageError(f"--bootstrap {bootstrap}: give HOST:PORT, e.g. 127.0.0.1:9092")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
            return
        except OSError as exc:
            reasons.append(f"{address.strip()}: {exc.strerror or exc}")
    raise UsageError(
        f"--bootstrap {bootstrap}: no broker answers ({'; '.join(reasons)}); start one with "
        "`kchaos kafka up` or leave --bootstrap out to have the run start its own"
    )


def run(explicit: dict[str, Any], results_dir: Path, draw_knobs: bool = True) -> int:
    from harness.config.run import resolve

    config = resolve(explicit, draw_knobs)
    require_tools(config)
    return execute(config, results_dir).exit_code


def read_config_and_plan(run_dir: Path) -> tuple[RunConfig, Plan]:
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir} is not a folder: pass a run folder under results/")
    info = read_json(run_dir / "run.json")
    try:
        config = RunConfig.from_json(info["config"])
        plan = Plan.from_json(read_json(run_dir / "plan.json"))
    except ParamError as exc:  # a hand-edited plan: a misspelt or mistyped parameter
        raise UsageError(f"{run_dir / 'plan.json'}: {exc}") from exc
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UsageError(f"{run_dir} has a damaged run.json or plan.json ({exc})") from exc
    unknown = sorted({s.fault for s in plan.steps} - set(FAULT_KINDS))
    if unknown:
        raise UsageError(f"{run_dir}/plan.json names unknown fault kinds {unknown}")

    from checker.session import is_connect_url

    if is_connect_url(config.spark_master):
        # A shared Connect server (a nightly's, a test session's) is gone by now.
        config = replace(config, spark_master=None)
    return config, plan


def repro(run_dir: Path, times: int, results_dir: Path | None,
          spark_master: str | None = None) -> int:
    """Replay a run's config and plan `times` times; how often each anomaly came back.
    `spark_master` checks the replays there (a running Connect server: no JVM start)."""
    if times < 1:
        raise UsageError("--times must be at least 1")
    config, plan = read_config_and_plan(run_dir)
    if spark_master is not None:
        config = replace(config, spark_master=spark_master)
    require_tools(config)
    original = _anomalies(run_dir)
    target = _target(run_dir, read_failing_counts(run_dir))
    where = results_dir or run_dir.parent
    seen: Counter[str] = Counter()
    codes: list[int] = []
    hits = 0
    for k in range(times):
        err.print(f"[bold]repro {k + 1}/{times}[/] of {run_dir.name}")
        outcome = execute(config, where, plan)
        codes.append(outcome.exit_code)
        came_back = _anomalies(outcome.run_dir).keys()
        seen.update(came_back)
        hits += bool(set(target) & set(read_failing_counts(outcome.run_dir)))
    # A shrunk plan folder has no run of its own: its original column is "-", not 0.
    was_run = (run_dir / "results.json").is_file()
    table = Table(title=f"repro of {run_dir.name}: {times} run(s)")
    table.add_column("anomaly")
    table.add_column("original" if was_run else "original (a plan folder: not run)")
    table.add_column("came back")
    for name in sorted(set(original) | set(seen) | set(target)):
        table.add_row(name, str(original.get(name, 0)) if was_run else "-",
                      f"{seen[name]}/{times}")
    out.print(table)
    if target:
        out.print(f"reproduction rate: {rate_text(hits, times)} of {times} replay(s) showed "
                  f"{' or '.join(target)}", highlight=False)
    else:
        out.print("reproduction rate: n/a (the original run found no anomaly to reproduce)",
                  highlight=False)
    return compose_exit_codes(codes)


def _target(run_dir: Path, original: dict[str, int]) -> tuple[str, ...]:
    """The classes a replay must show one of to count as a reproduction: the original's
    (less `unavailable` when it found more), or those a shrunk plan folder names."""
    from harness.anomalies import TARGET_KEY, target_classes

    found = tuple(sorted(name for name, n in original.items() if n))
    if not found:
        try:
            found = tuple(read_json(run_dir / "run.json").get(TARGET_KEY, ()))
        except (UsageError, AttributeError):
            found = ()
    return target_classes(found)


def _anomalies(run_dir: Path) -> dict[str, int]:
    try:
        return dict(json.loads((run_dir / "results.json").read_text()).get("anomaly_counts", {}))
    except (OSError, ValueError):
        return {}


def _why_unknown(doc: dict[str, Any]) -> str:
    """The first error an undecided check gave (the same for all when the history could
    not be read), so that an UNKNOWN names its cause on its own line."""
    if doc.get("verdict") != "unknown":
        return ""
    checks = doc.get("checks") or {}
    errors = [c.get("error") for c in checks.values() if isinstance(c, dict) and c.get("error")]
    return f": {errors[0]}" if errors else ""


def check(run_dirs: list[Path], spark_master: str | None) -> int:
    """Judge each run again with one Spark for all of them (one JVM start, not one per run);
    the exit code composes the verdicts: invalid > unknown > valid."""
    for run_dir in run_dirs:
        if not (run_dir / "history").is_dir():
            raise UsageError(f"{run_dir} has no history/ folder: is it a collected kchaos run?")
    from checker.check import check_run
    from checker.frames import damaged_history_file
    from checker.session import start_spark
    from harness.run.runinfo import render_reports

    verdicts: list[Verdict] = []
    spark = None
    if any(damaged_history_file(d / "history") is None for d in run_dirs):
        with err.status("starting Spark"):
            try:
                spark = start_spark(spark_master)
            except Exception:  # check_run starts its own and records why it cannot
                spark = None
    try:
        for run_dir in run_dirs:
            with err.status(f"checking {run_dir.name} with Spark"):
                doc = check_run(run_dir, spark_master, spark=spark)
            verdict = doc.get("verdict", "unknown")
            counts = doc.get("anomaly_counts", {})
            name = f"{run_dir.name}: " if len(run_dirs) > 1 else ""
            out.print(f"{name}verdict {VERDICT_STYLE.get(verdict, '[bold yellow]UNKNOWN[/]')} "
                      f"({', '.join(f'{k}: {v}' for k, v in counts.items()) or 'no anomalies'})"
                      f"{_why_unknown(doc)}{not_judged(doc)}", highlight=False, soft_wrap=True)
            render_reports(run_dir)
            verdicts.append(verdict)
    finally:
        if spark is not None:
            spark.stop()
    return exit_code(compose(verdicts))
