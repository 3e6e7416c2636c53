"""One run in a few facts: verdict, anomalies, config, time, and whether it met its
expectation. The index, the JUnit files and the nightly summary all speak from this, so
they never disagree about a run.

Expectation: the fixed worker (no bug switch) must be valid; a run with a bug switched on
is expected to find anomalies (detection, and zero false positives on the fixed worker).
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from checker.model import Verdict, verdict_of_exit
from harness.config.suts import DEFAULT_SUT, sut_kind
from harness.report.run_files import FileState, RunFiles, dig, read_verdict_files

RunVerdict = Verdict | None  # None: no results.json to read a verdict from
EXIT_NAMES = {0: "valid", 1: "invalid", 2: "unknown", 254: "bad input", 255: "harness failed"}


def parse_time(value: Any) -> datetime | None:
    """run.json times: ISO 8601 strings or epoch seconds; anything else is unknown."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(float(value), tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def bug_list(raw: Any) -> list[str]:
    """`bugs` as written by the run: a list, a comma string, or absent."""
    if isinstance(raw, str):
        return [b.strip() for b in raw.split(",") if b.strip()]
    if isinstance(raw, list | tuple):
        return [str(b) for b in raw if str(b).strip()]
    return []


def mutant_bug(key: Any) -> list[str]:
    """A run of a catalogued mutant (harness/mutants) is no fixed worker: it counts as a
    bug of its own, `mutant:KEY`, expected to be caught like a switch."""
    return [f"mutant:{key}"] if isinstance(key, str) and key else []


def verdict_of(raw: Any) -> RunVerdict:
    if raw is True or raw is False:
        return raw
    return "unknown" if raw == "unknown" else None


VERDICT_LABELS: dict[RunVerdict, str] = {True: "valid", False: "invalid", "unknown": "unknown"}
VERDICT_CLASSES: dict[RunVerdict, str] = {True: "valid", False: "invalid"}


def verdict_label(verdict: RunVerdict) -> str:
    return VERDICT_LABELS.get(verdict, "no verdict")


def verdict_class(verdict: RunVerdict) -> str:
    """CSS class (and colour) of a verdict: green, red, or amber for anything undecided."""
    return VERDICT_CLASSES.get(verdict, "unknown")


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    """A finite number, else None (a hand-edited or damaged run.json can hold NaN)."""
    if isinstance(value, int | float) and not isinstance(value, bool) \
            and math.isfinite(value):
        return float(value)
    return None


def _duration(run: Mapping[str, Any], started: datetime | None) -> float | None:
    finished = parse_time(run.get("finished_at"))
    if started and finished and finished >= started:
        return (finished - started).total_seconds()
    timings = run.get("timings")
    if isinstance(timings, Mapping):
        parts = [_number(v) for v in timings.values()]
        known = [p for p in parts if p is not None]
        return sum(known) if known else None
    return None


def _anomaly_counts(results: Mapping[str, Any] | None) -> dict[str, int]:
    counts = dig(results, "anomaly_counts")
    if isinstance(counts, Mapping):
        return {str(k): int(v) for k, v in counts.items() if _int_or_none(v)}
    # Older or partial results: derive from the per-check counts.
    checks = dig(results, "checks")
    out: dict[str, int] = {}
    if isinstance(checks, Mapping):
        for name, check in checks.items():
            count = _int_or_none(dig(check, "count"))
            if count:
                out[str(name)] = count
    return out


def repro_command(run_dir: Path, run: Mapping[str, Any]) -> str:
    given = run.get("repro_command")
    if isinstance(given, str) and given.strip():
        return given.strip()
    return f"kchaos repro {shlex.quote(str(run_dir))}"


@dataclass(frozen=True)
class RunSummary:
    run_dir: Path
    run_id: str
    verdict: RunVerdict
    anomaly_counts: dict[str, int]
    profile: str
    seed: str
    bugs: list[str]
    guarantee: str
    started_at: datetime | None
    duration_s: float | None
    exit_code: int | None
    repro: str
    problems: list[FileState] = field(default_factory=list)
    # The system under test (run.json config.sut). Runs of another SUT than the Python
    # worker are observations (e.g. KAFKA-20685 on real Kafka Streams): no gate either way.
    sut: str = "python"

    @property
    def label(self) -> str:
        return verdict_label(self.verdict)

    @property
    def css(self) -> str:
        return verdict_class(self.verdict)

    @property
    def fixed_worker(self) -> bool:
        """A SUT with switches run without any: it is expected valid."""
        return not self.bugs and sut_kind(self.sut).bug_switches

    @property
    def harness_failed(self) -> bool:
        """No verdict was reached because the harness (not the system under test) broke."""
        abnormal_exit = self.exit_code is not None and self.exit_code not in (0, 1, 2)
        return abnormal_exit or self.verdict is None

    @property
    def detected(self) -> bool:
        return self.verdict is False

    @property
    def outcome(self) -> str:
        """What the run means for the project: fixed worker ok / false alarm, bug caught /
        missed, or the harness broke."""
        if self.harness_failed:
            return "harness failed"
        if not sut_kind(self.sut).bug_switches:  # a real release: what it does is news
            return f"{self.sut} observed {self.label}"
        if self.fixed_worker:
            return "ok" if self.verdict is True else f"fixed worker {self.label}"
        return "bug caught" if self.detected else "bug missed"

    @property
    def expectation_met(self) -> bool:
        if not sut_kind(self.sut).bug_switches:
            return not self.harness_failed
        return self.outcome in ("ok", "bug caught")

    @property
    def anomalies_text(self) -> str:
        return ", ".join(f"{k}: {v}" for k, v in sorted(self.anomaly_counts.items())) or "-"


def summarize(files: RunFiles) -> RunSummary:
    run = files.run
    config = run.get("config")
    if not isinstance(config, Mapping):
        config = {}
    results = files.results
    started = parse_time(run.get("started_at"))
    exit_code = _int_or_none(run.get("exit_code"))
    verdict = verdict_of(dig(results, "verdict"))
    if verdict is None:
        # results.json lost but the run said how it ended: trust the exit code.
        verdict = verdict_of_exit(exit_code)
    seed = config.get("seed", run.get("seed"))
    return RunSummary(
        run_dir=files.run_dir,
        run_id=str(run.get("run_id") or files.run_dir.name),
        verdict=verdict,
        anomaly_counts=_anomaly_counts(results),
        profile=str(config.get("profile") or run.get("profile") or "?"),
        seed="?" if seed is None else str(seed),
        bugs=bug_list(config.get("bugs", run.get("bugs"))) + mutant_bug(config.get("mutant")),
        guarantee=_guarantee(run, config),
        started_at=started,
        duration_s=_duration(run, started),
        exit_code=exit_code,
        repro=repro_command(files.run_dir, run),
        problems=files.problems,
        sut=str(config.get("sut") or DEFAULT_SUT),
    )


def _guarantee(run: Mapping[str, Any], config: Mapping[str, Any]) -> str:
    """The guarantee the pods ran with: an app's as chosen once it was described
    (run.json's `ran_with`), else the one given, else the SUT's default; "?" if unknown."""
    ran = run.get("ran_with")
    chosen = ran.get("guarantee") if isinstance(ran, Mapping) else None
    sut = sut_kind(str(config.get("sut") or DEFAULT_SUT))
    return str(chosen or config.get("guarantee") or sut.default_guarantee or "?")


def broken_summary(run_dir: Path, error: str) -> RunSummary:
    """A run whose files could not even be summarized: listed, amber, with the reason."""
    return RunSummary(
        run_dir=run_dir, run_id=run_dir.name, verdict=None, anomaly_counts={}, profile="?",
        seed="?", bugs=[], guarantee="?", started_at=None, duration_s=None, exit_code=None,
        repro=repro_command(run_dir, {}), problems=[FileState("run.json", "damaged", error)],
    )


def summarize_dir(run_dir: Path) -> RunSummary:
    return summarize(read_verdict_files(run_dir))


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
