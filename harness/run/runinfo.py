"""What a run writes about itself: run.json, plan.json, and the reports at the end."""

from __future__ import annotations

import dataclasses
import platform
import subprocess
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from common.fault_traits import TRAITS_KEY, traits_json
from faults.kinds import traits_of
from faults.model import Plan
from faults.nemesis import StepOutcome
from harness.config.drawn import knobs_section
from harness.config.run import RunConfig, repro_command
from harness.kafka.jars import kafka_version


def git_rev() -> str:
    try:
        root = Path(__file__).resolve().parents[2]
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "") if out.returncode == 0 else "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def versions(kafka: str | None = None) -> dict[str, str]:
    """What ran: `kafka` is the brokers' release (default: harness/kafka/pom.xml's)."""
    def version_of(package: str) -> str:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return "?"

    return {
        "kchaos": git_rev(),
        "kafka": kafka or kafka_version(),
        "python": platform.python_version(),
        "kafka-python": version_of("kafka-python"),
        "pyspark": version_of("pyspark"),
        "rocksdict": version_of("rocksdict"),
    }


def initial(run_dir: Path, config: RunConfig, plan: Plan) -> dict[str, Any]:
    return {
        "run_id": run_dir.name,
        "config": config.to_json(),
        "seed": config.seed,
        "profile": config.profile,
        "plan_config": plan.config,
        "versions": versions(config.kafka_version),
        "repro_command": repro_command(run_dir),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def plan_document(plan: Plan, outcomes: Sequence[StepOutcome] | None,
                  config: RunConfig | None = None) -> dict[str, Any]:
    doc = plan.to_json()
    # What each of its kinds does, so the checker and the reports never name a kind.
    doc[TRAITS_KEY] = traits_json(traits_of({s.fault for s in plan.steps}))
    if config is not None:  # the settings drawn from the seed (faults/knobs.py)
        doc["knobs"] = knobs_section(config)
    if outcomes is not None:
        doc["steps"] = [o.to_json() for o in outcomes]
    return doc


def as_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def render_reports(run_dir: Path) -> list[Path]:
    """report.html, junit.xml and the results index; a failure here never changes the
    verdict (the files it reads are all on disk)."""
    from harness import report

    written: list[Path] = []
    for render in (report.render_report, report.write_run_junit):
        try:
            written.append(render(run_dir))
        except Exception as exc:
            (run_dir / "report-error.txt").write_text(f"{type(exc).__name__}: {exc}\n")
    try:
        written.append(report.render_index(run_dir.parent))
    except Exception as exc:
        (run_dir / "report-error.txt").write_text(f"index: {type(exc).__name__}: {exc}\n")
    return written
