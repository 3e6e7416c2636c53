"""The reference execution: the app's topology in Kafka's TopologyTestDriver, fed the input
the cluster's input topics committed (`history/app_input.parquet`), written to
`history/reference.parquet`.

The input goes to the launcher (workloads/kstreams, `AppLauncher reference`) as one file per
input partition, in offset order; the launcher runs one driver per task, so that stream
time is kept per task as the cluster keeps it (ReferenceTasks.java says where it cannot be:
a topology with a repartition topic runs in one driver). It runs twice, from the stored
files only:
- the tasks in turn, each task's partitions merged by timestamp as Kafka Streams merges
  them, equal timestamps by topic name;
- every task at once, all partitions merged by timestamp, equal timestamps by topic name
  the other way, with each driver's wall-clock time advancing a second a record.
A deterministic topology whose output depends only on each task's order gives the same
output per key both times; one that does not (state shared across tasks, wall-clock
punctuation, the order of equal timestamps) is caught by the difference, and the oracle
says "not applicable" for it.

Rows go through bounded batches, so a million-record input is never held as Python objects
(the sort is Arrow's, in columns).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import pyarrow as pa
import pyarrow.parquet as pq

from checker.parquet_sink import ParquetSink
from checker.schema import REFERENCE

LAUNCHER_CLASS = "dev.kchaos.kstreams.AppLauncher"
SUMMARY_FILE = "reference.json"
ALT_WALL_CLOCK_STEP_MS = 1000
BATCH_ROWS = 50_000


@dataclass(frozen=True)
class OracleSettings:
    """meta.json's `oracle`: how to run the reference (written by the harness)."""

    classpath: tuple[str, ...]
    app_class: str
    sinks: tuple[str, ...]  # the output topics to compare
    ignore_json_fields: tuple[str, ...] = ()
    # why the oracle cannot judge this topology, if the harness found out before the run
    not_applicable: str | None = None
    config: tuple[str, ...] = ()  # KEY=VALUE given to the topology
    # The launcher's flags for the app's entry (`--app-main CLASS ...`; default `--app-class
    # app_class`) and the JVM's options it needs (a main: the launcher's Java agent).
    entry: tuple[str, ...] = ()
    jvm_options: tuple[str, ...] = ()
    # For the at-least-once judgments (checker/oracle/alos.py): the topology's state stores,
    # global ones included (empty: a stateless topology; None: not described, as the ledger
    # app's and a run folder's from before), and what the input spec says its output topics
    # promise (compare.grows: topic -> number format; compare.every_key).
    stores: tuple[str, ...] | None = None
    grows: Mapping[str, str] = field(default_factory=dict)
    every_key: tuple[str, ...] = ()
    # The record cache's size the pods ran with (0: off, every update out; an older run
    # folder has none and ran with it off): checker/oracle/cached.py.
    record_cache_bytes: int = 0

    @property
    def keeps_state(self) -> bool:
        """Whether the topology may keep state (a store, or stores not described)."""
        return self.stores is None or bool(self.stores)

    @staticmethod
    def from_meta(raw: Mapping[str, Any]) -> OracleSettings | None:
        doc = raw.get("oracle")
        if not isinstance(doc, Mapping):
            return None
        return OracleSettings(
            classpath=tuple(str(p) for p in doc.get("classpath") or ()),
            app_class=str(doc.get("app_class") or ""),
            sinks=tuple(str(t) for t in doc.get("sinks") or ()),
            ignore_json_fields=tuple(str(f) for f in doc.get("ignore_json_fields") or ()),
            not_applicable=doc.get("not_applicable"),
            config=tuple(str(c) for c in doc.get("config") or ()),
            entry=tuple(str(a) for a in doc.get("entry") or ()),
            jvm_options=tuple(str(o) for o in doc.get("jvm_options") or ()),
            stores=(None if doc.get("stores") is None
                    else tuple(str(o) for o in doc.get("stores") or ())),
            grows={str(k): str(v) for k, v in (doc.get("grows") or {}).items()},
            every_key=tuple(str(t) for t in doc.get("every_key") or ()),
            record_cache_bytes=int(doc.get("record_cache_bytes") or 0),
        )

    def to_json(self) -> dict[str, Any]:
        return {"classpath": list(self.classpath), "app_class": self.app_class,
                "sinks": list(self.sinks), "ignore_json_fields": list(self.ignore_json_fields),
                "not_applicable": self.not_applicable, "config": list(self.config),
                "entry": list(self.entry), "jvm_options": list(self.jvm_options),
                "stores": None if self.stores is None else list(self.stores),
                "grows": dict(self.grows),
                "every_key": list(self.every_key),
                "record_cache_bytes": self.record_cache_bytes}


@dataclass(frozen=True)
class Order:
    """One reference run: its name in the history and the launcher's flags."""

    name: str
    feed: str  # --order: tasks-in-turn or interleaved
    ties: str  # --ties: equal timestamps by topic name, ascending or descending
    wall_clock_step_ms: int


ORDERS = (
    Order("reference", "tasks-in-turn", "ascending", 0),
    Order("reference_alt", "interleaved", "descending", ALT_WALL_CLOCK_STEP_MS),
)
SOURCES_FILE = "sources.json"


def ensure_reference(history_dir: Path, settings: OracleSettings) -> dict[str, Any]:
    """Run the reference in both orders unless its files are there already (a re-check);
    returns the summary (also `history/reference.json`), with "error" if it could not run."""
    summary_path = history_dir / SUMMARY_FILE
    outputs = [history_dir / f"{order.name}.parquet" for order in ORDERS]
    if summary_path.exists() and all(p.exists() for p in outputs):
        summary: dict[str, Any] = json.loads(summary_path.read_text())
        if not summary.get("error"):
            return summary
    summary = {}
    try:
        java = _java()
        missing = [p for p in settings.classpath if not Path(p).exists()]
        if missing:
            raise ReferenceFailed(f"the app's build is gone ({missing[0]}): run the app again "
                                 f"on this machine to judge it")
        fed = history_dir / "reference-input"
        try:
            write_sources(pq.read_table(history_dir / "app_input.parquet"), fed)
            for order in ORDERS:
                summary[order.name] = _run_order(java, settings, fed, order, history_dir)
        finally:
            shutil.rmtree(fed, ignore_errors=True)
    except (ReferenceFailed, OSError, ValueError) as exc:
        summary["error"] = str(exc)
    summary_path.write_text(json.dumps(summary, indent=2) + "\n")
    return summary


class ReferenceFailed(Exception):
    """The reference could not run: the oracle is unknown, with this as its reason."""


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise ReferenceFailed("no Java to run the reference: install Java 17 (e.g. "
                             "`apt-get install openjdk-17-jre-headless`)")
    return java


def _run_order(java: str, settings: OracleSettings, fed: Path, order: Order,
               history_dir: Path) -> dict[str, Any]:
    produced = history_dir / f"{order.name}-output.jsonl"
    started = time.monotonic()
    entry = settings.entry or ("--app-class", settings.app_class)
    command = [java, "-Xmx512m", *settings.jvm_options, "-cp", os.pathsep.join(settings.classpath),
               LAUNCHER_CLASS, "reference", *entry, "--input", str(fed),
               "--output", str(produced), "--order", order.feed, "--ties", order.ties,
               "--wall-clock-step-ms", str(order.wall_clock_step_ms),
               *[arg for c in settings.config for arg in ("--config", c)]]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1][:500]
        raise ReferenceFailed(f"the reference ({order.name}) failed with exit "
                             f"{result.returncode}: {last}")
    with ParquetSink(history_dir / f"{order.name}.parquet", REFERENCE) as sink:
        for row in _output_rows(produced):
            sink.add(row)
    produced.unlink()
    figures = json.loads((result.stdout.strip().splitlines() or ["{}"])[-1])
    return {**figures, "wall_clock_step_ms": order.wall_clock_step_ms, "order": order.feed,
            "ties": order.ties, "wall_s": round(time.monotonic() - started, 3)}


def _b64(value: bytes | None) -> str | None:
    return None if value is None else base64.b64encode(value).decode("ascii")


def write_sources(table: pa.Table, folder: Path) -> list[dict[str, Any]]:
    """One JSONL file per input partition in `folder`, its records in offset order, and
    `sources.json` naming them (topic, partition, file, records): the launcher's input."""
    folder.mkdir(parents=True, exist_ok=True)
    ordered = table.sort_by([("topic", "ascending"), ("partition", "ascending"),
                             ("offset", "ascending")])
    sources: list[dict[str, Any]] = []
    out: TextIO | None = None
    try:
        for batch in ordered.to_batches(BATCH_ROWS):
            for row in batch.to_pylist():
                here = (row["topic"], row["partition"])
                if not sources or (sources[-1]["topic"], sources[-1]["partition"]) != here:
                    if out is not None:
                        out.close()
                    name = f"{len(sources):05d}.jsonl"
                    sources.append({"topic": here[0], "partition": here[1], "file": name,
                                    "records": 0})
                    out = (folder / name).open("w")
                assert out is not None
                out.write(json.dumps({"offset": row["offset"], "timestamp": row["timestamp_ms"],
                                      "key": _b64(row["key"]), "value": _b64(row["value"])})
                          + "\n")
                sources[-1]["records"] += 1
    finally:
        if out is not None:
            out.close()
    (folder / SOURCES_FILE).write_text(json.dumps(sources, indent=1) + "\n")
    return sources


def _output_rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open() as lines:
        for line in lines:
            doc = json.loads(line)
            yield {"topic": doc["topic"], "seq": doc["seq"], "input_index": doc["input_index"],
                   "timestamp_ms": doc.get("timestamp"),
                   "key": None if doc.get("key") is None else base64.b64decode(doc["key"]),
                   "value": None if doc.get("value") is None else base64.b64decode(doc["value"])}
