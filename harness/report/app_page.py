"""What the report of an app run (`--sut app`) says of the app rather than of the ledger:
the app and where it was entered, the Kafka Streams release it ran on, its guarantee and
its record cache and whose choice each was, its serdes and topics, the dependencies the
launcher provided in its place; and the run settings without the ledger's own (accounts,
duplicates, bugs).
Read from history/meta.json's `app` (harness/sut/app.py, UserApp.summary) and run.json.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# RunConfig settings that only the ledger workload or the Python worker reads.
LEDGER_ONLY = frozenset({"bugs", "partitions", "accounts", "duplicate_fraction", "oracle",
                         "cleaner_interval_ms"})
SHOWN_SETTINGS = ("default.key.serde", "default.value.serde", "processing.guarantee",
                  "default.timestamp.extractor", "commit.interval.ms")


@dataclass(frozen=True)
class AppFacts:
    name: str  # the app as given (jar, folder, coordinate)
    entry: str  # "main of C [args]" or "C#method"
    release: str  # the Kafka Streams release it ran on
    guarantee: str
    guarantee_chosen_by: str
    rows: tuple[tuple[str, str], ...]  # the app's table in the report


def _entry(doc: Mapping[str, Any]) -> str:
    main = doc.get("app_main")
    if main:
        args = " ".join(str(a) for a in doc.get("app_args") or ())
        return f"main of {main}" + (f" {args}" if args else "")
    return str(doc.get("app_class") or "?")


def _cache(app: Mapping[str, Any]) -> str:
    """The record cache the pods ran with (a run from before kchaos left it to the app ran
    with it off)."""
    size = app.get("record_cache_bytes")
    if size is None:
        return "off (0 bytes, the run's)"
    state = f"{int(size)} bytes" if size else "off (0 bytes)"
    return f"{state} ({app.get('record_cache_chosen_by') or '?'})"


def app_facts(run_dir: Path, run: Mapping[str, Any]) -> AppFacts | None:
    """None for a run that is not an app's (or whose meta.json has no app part)."""
    config = run.get("config")
    if not isinstance(config, Mapping) or config.get("sut") != "app":
        return None
    try:
        meta = json.loads((run_dir / "history" / "meta.json").read_text())
    except (OSError, ValueError):
        meta = {}
    app = meta.get("app") if isinstance(meta, Mapping) else None
    app = app if isinstance(app, Mapping) else {}
    release = str(app.get("kstreams_version") or config.get("kstreams_version") or "?")
    guarantee = str(meta.get("guarantee") or config.get("guarantee") or "?")
    chosen_by = str(app.get("guarantee_chosen_by") or "the run's")
    given = app.get("entry")
    entry: Mapping[str, Any] = given if isinstance(given, Mapping) else {
        "app_class": config.get("app_class"), "app_main": config.get("app_main")}
    built = app.get("app_config")
    settings: Mapping[str, Any] = built if isinstance(built, Mapping) else {}
    rows = [
        ("app", str(app.get("app") or config.get("app") or "?")),
        ("entered by", _entry(entry)),
        ("Kafka Streams", release),
        ("guarantee", f"{guarantee} ({chosen_by})"),
        ("record cache", _cache(app)),
        ("input topics", ", ".join(map(str, app.get("sources") or ())) or "-"),
        ("output topics", ", ".join(map(str, app.get("sinks") or ())) or "-"),
        *((f"app's {key}", str(settings[key])) for key in SHOWN_SETTINGS if key in settings),
    ]
    dropped = app.get("dropped_dependencies") or ()
    if dropped:
        rows.append(("provided by the launcher", ", ".join(map(str, dropped))))
    bundled = app.get("bundles_kafka_streams") or ()
    if bundled:
        rows.append(("bundles Kafka Streams (ignored)", ", ".join(map(str, bundled))))
    logging = app.get("logging_binding") or ()
    if logging:
        rows.append(("logging", f"the app's own ({', '.join(map(str, logging))})"))
    return AppFacts(str(app.get("app") or config.get("app") or "?"), _entry(entry), release,
                    guarantee, chosen_by, tuple(rows))


def app_config_rows(config: Mapping[str, Any]) -> dict[str, Any]:
    """The run settings an app run uses (a guarantee not given is the app's own, else Kafka
    Streams' default: the app's table says which)."""
    rows = {k: v for k, v in config.items() if k not in LEDGER_ONLY}
    if "guarantee" in rows and rows["guarantee"] is None:
        rows["guarantee"] = "not given"
    return rows
