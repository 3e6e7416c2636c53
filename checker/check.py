"""Judge one run: load its history, run every check, write `results.json`.

`check_run` never raises for a bad history or a failing check: a check that throws is
`unknown` with the error text, and if Spark itself cannot start or load, every check is
`unknown`. Figures time each phase so the bench and reports can show where time goes.
"""

from __future__ import annotations

import contextlib
import json
import time
import traceback
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from checker.checks import CHECKS, Check, checks_for, event_tallies, principal_check
from checker.coverage import coverage_section
from checker.frames import Frames, damaged_history_file, load_frames
from checker.meta import Meta, load_meta
from checker.model import UNKNOWN, CheckResult, compose, not_applicable, unknown
from checker.oracle.reference import OracleSettings, ensure_reference
from checker.session import is_connect_url, session_settings_for, start_spark
from checker.spark_server import wait_listening

RESULTS_FILE = "results.json"
# How long a check waits for a Connect server on this machine that does not listen yet: a
# nightly's shared server starts beside its first runs and may still be coming up.
CONNECT_WAIT_S = 120.0


def _error_text(exc: BaseException) -> str:
    # The last line of a Py4J/Spark error is usually the useful one; keep it short.
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return text if len(text) <= 2000 else text[:2000] + " ..."


def history_bytes(history_dir: Path) -> int:
    return sum(f.stat().st_size for f in Path(history_dir).rglob("*.parquet") if f.is_file())


def run_checks(
    spark: Any, frames: Frames, meta: Meta, checks: Mapping[str, Check] = CHECKS
) -> tuple[dict[str, CheckResult], dict[str, float]]:
    results: dict[str, CheckResult] = {}
    seconds: dict[str, float] = {}
    for name, check in checks.items():
        reason = meta.not_applicable.get(name)
        if reason is not None:
            results[name] = not_applicable(reason)
            continue
        t = time.perf_counter()
        try:
            results[name] = check(spark, frames, meta)
        except Exception as exc:  # a broken check is "unknown", never a crashed run
            results[name] = unknown(_error_text(exc))
        seconds[name] = round(time.perf_counter() - t, 3)
    return results, seconds


# Files whose undecodable lines are expected: a pod killed mid-write tears its last trace
# line. Records in topics, and the harness's own history, must all decode.
TORN_LINES_EXPECTED = ("traces",)


def incomplete_collection(meta: Meta) -> str | None:
    """Why the collected history cannot be trusted to be whole, if it cannot."""
    coll = meta.raw.get("collection") or {}
    if not isinstance(coll, dict):
        return f"meta.json has no readable collection figures: {coll!r}"
    reasons = []
    parts = {k: v for k, v in (coll.get("incomplete") or {}).items() if v}
    if parts:
        reasons.append(f"topics not read to their end offsets: {parts}")
    missing = list(coll.get("missing_topics") or [])
    if missing:
        reasons.append(f"topics missing: {', '.join(map(str, missing))}")
    bad = {
        k: v for k, v in (coll.get("undecodable") or {}).items()
        if v and k not in TORN_LINES_EXPECTED
    }
    if bad:
        reasons.append(f"undecodable records skipped: {bad}")
    return "; ".join(reasons) or None


def results_document(
    results: Mapping[str, CheckResult],
    figures: Mapping[str, Any],
    incomplete: str | None = None,
    principal: str | None = None,
    ran_with: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    verdict = compose(r.valid for r in results.values() if r.not_applicable is None)
    doc: dict[str, Any] = {
        # A history missing records may hide anomalies, so it is never valid; an anomaly
        # found in what was read stays found (false > unknown > true).
        "verdict": compose([verdict, UNKNOWN]) if incomplete else verdict,
        "checks": {name: r.to_json() for name, r in results.items()},
        "anomaly_counts": {name: r.count for name, r in results.items() if r.count},
        "figures": dict(figures),
    }
    if incomplete:
        doc["incomplete"] = incomplete
    if ran_with:  # what the checks judged by: an app's guarantee and cache, and whose
        doc["ran_with"] = dict(ran_with)
    chief = results.get(principal) if principal else None
    if chief is not None and chief.not_applicable is not None:
        # A verdict the run's own check did not take part in: said beside it, never hidden.
        doc["not_judged"] = {"check": principal, "reason": chief.not_applicable}
    elif chief is not None and chief.details.get("not_judged"):
        # Judged in part (an app's oracle under at-least-once): what was and what was not.
        doc["partly_judged"] = {"check": principal, "judged": chief.details.get("judged"),
                                "not_judged": chief.details["not_judged"]}
    return doc


def ran_with(meta: Meta) -> dict[str, Any]:
    """An app run's guarantee and record cache with whose choice each was (meta.json's
    `app`, harness/sut/app.py), for results.json; empty for a ledger run, whose settings
    are run.json's."""
    app = meta.raw.get("app")
    if not isinstance(app, Mapping):
        return {}
    keys = ("guarantee_chosen_by", "record_cache_bytes", "record_cache_chosen_by")
    return {"guarantee": meta.guarantee, **{k: app[k] for k in keys if k in app}}


def _listening(spark_master: str) -> bool:
    return not is_connect_url(spark_master) or wait_listening(spark_master, CONNECT_WAIT_S)


def check_history(
    history_dir: Path, spark_master: str | None = None, *, spark: Any = None,
    fallback: str | None = None,
) -> dict[str, Any]:
    """Judge `history_dir` and return the results document (nothing written). A given
    `spark` session is used and left running (tests share one); otherwise one is started
    and stopped here."""
    t0 = time.perf_counter()
    figures: dict[str, Any] = {"spark_master": spark_master or "local[*]"}
    if fallback is not None:  # the caller's Spark server failed before this check
        figures["spark_fallback"] = fallback
    try:
        meta = load_meta(history_dir)
    except (OSError, ValueError) as exc:
        err = f"cannot read {history_dir}/meta.json: {_error_text(exc)}"
        return results_document({name: unknown(err) for name in CHECKS}, figures)
    checks = checks_for(meta)
    damaged = damaged_history_file(history_dir)
    if damaged is not None:
        return results_document({name: unknown(damaged) for name in checks}, figures)
    oracle = OracleSettings.from_meta(meta.raw)
    if oracle is not None and "oracle" in checks and not oracle.not_applicable:
        t = time.perf_counter()
        reference = ensure_reference(history_dir, oracle)
        meta = replace(meta, raw={**meta.raw, "reference": reference})
        figures["reference_s"] = round(time.perf_counter() - t, 3)
    own = spark is None
    frames: Frames | None = None
    try:
        t = time.perf_counter()
        if own and spark_master is not None and not _listening(spark_master):
            # A nightly's shared server that never came up: the run is checked all the same.
            figures["spark_fallback"] = (f"{spark_master} did not listen within "
                                         f"{CONNECT_WAIT_S:.0f} s; checked on local[*]")
            spark_master, figures["spark_master"] = None, "local[*]"
        if own:
            spark = start_spark(spark_master)
        figures["spark_start_s"] = round(time.perf_counter() - t, 3)
        settings = session_settings_for(history_bytes(history_dir))
        for key, value in settings.items():
            spark.conf.set(key, value)
        figures["shuffle_partitions"] = int(settings["spark.sql.shuffle.partitions"])
        figures["adaptive"] = settings["spark.sql.adaptive.enabled"] == "true"
        t = time.perf_counter()
        frames = load_frames(spark, history_dir)
        if meta.raw.get("workload") == "app":  # no ledger events: the app's input records
            events = frames.app_input.count()
        else:
            events = frames.tally(event_tallies(meta, frames))
        figures["load_s"] = round(time.perf_counter() - t, 3)
        figures["events"] = events
        results, seconds = run_checks(spark, frames, meta, checks)
        figures["check_s"] = seconds
    except Exception as exc:  # Spark could not start or load: nothing can be decided
        err = f"checker failed before the checks: {_error_text(exc)}"
        results = {name: unknown(err) for name in checks}
    finally:
        # Clean-up that fails (a server gone meanwhile) leaves the results as they are.
        if frames is not None:
            with contextlib.suppress(Exception):
                frames.unpersist()
        if own and spark is not None:
            with contextlib.suppress(Exception):
                spark.stop()
    total = time.perf_counter() - t0
    figures["total_s"] = round(total, 3)
    if figures.get("events"):
        figures["events_per_s"] = round(figures["events"] / total, 1)
    return results_document(results, figures, incomplete_collection(meta), principal_check(meta),
                            ran_with(meta))


def check_run(
    run_dir: Path, spark_master: str | None = None, *, spark: Any = None,
    fallback: str | None = None,
) -> dict[str, Any]:
    """Judge `run_dir/history/`, add the run's fault coverage, write
    `run_dir/results.json`, return its content."""
    run_dir = Path(run_dir)
    doc = check_history(run_dir / "history", spark_master, spark=spark, fallback=fallback)
    # Which dangerous moments the run created (issue 17): traces and nemesis ops only.
    doc["coverage"] = coverage_section(run_dir)
    tmp = run_dir / (RESULTS_FILE + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=False, default=str) + "\n")
    tmp.replace(run_dir / RESULTS_FILE)
    return doc
