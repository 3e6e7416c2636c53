"""Turn the checker's free-form anomaly examples into what the page shows: the example's own
fields, and every list of records or trace events inside it as a table, with the records
the anomaly is about highlighted.

The checker may nest context (e.g. `context.input`, `context.output`, `traces`); any list
of objects at any depth becomes a table named by its path, so new kinds of context show up
without a change here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_ROWS = 100
MAX_CELL = 300
# Keys that identify the record an anomaly is about; a context row sharing them is marked.
ID_KEYS = ("event_id",)
POSITION_KEYS = (("partition", "offset"), ("in_partition", "in_offset"))


@dataclass(frozen=True)
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]
    marked: list[bool]
    dropped: int = 0


@dataclass(frozen=True)
class Example:
    fields: list[tuple[str, str]]
    tables: list[Table] = field(default_factory=list)


def cell(value: Any) -> str:
    """One table cell: scalars as they are, structures as compact JSON, long text cut."""
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool | int | float):
        text = json.dumps(value)
    else:
        text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return text if len(text) <= MAX_CELL else text[:MAX_CELL] + " ..."


def _text(value: Any, limit: int = 4000) -> str:
    """Error and note texts: shown whole up to a bound (a Spark error can be long)."""
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[:limit] + " ..."


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _anchor(example: Mapping[str, Any]) -> tuple[set[str], set[tuple[str, str]]]:
    ids = {str(example[k]) for k in ID_KEYS if example.get(k) is not None}
    p, o = example.get("partition"), example.get("offset")
    positions = {(str(p), str(o))} if p is not None and o is not None else set()
    return ids, positions


def _is_marked(row: Mapping[str, Any], ids: set[str], positions: set[tuple[str, str]]) -> bool:
    data = row.get("data")  # trace rows from the checker keep their fields under `data`
    if isinstance(data, Mapping) and _is_marked(data, ids, set()):
        return True
    if any(str(row.get(k)) in ids for k in ID_KEYS if row.get(k) is not None):
        return True
    return any(
        (str(row.get(pk)), str(row.get(ok))) in positions
        for pk, ok in POSITION_KEYS
        if row.get(pk) is not None
    )


def records_table(
    title: str,
    records: Sequence[Mapping[str, Any]],
    anchor: tuple[set[str], set[tuple[str, str]]] = (set(), set()),
    origin_ns: int | None = None,
) -> Table:
    """Columns in order of first appearance; trace rows get a `t (s)` column relative to
    the timeline's origin so they line up with the chart."""
    shown = list(records[:MAX_ROWS])
    columns = list(dict.fromkeys(k for r in shown for k in r))
    timed = origin_ns is not None and "ts_ns" in columns
    if timed:
        columns.insert(0, "t (s)")
    rows = []
    for r in shown:
        row = [cell(r.get(c)) for c in columns if c != "t (s)"]
        if timed:
            ts = r.get("ts_ns")
            if isinstance(ts, int | float) and not isinstance(ts, bool) and origin_ns is not None:
                row.insert(0, f"{(ts - origin_ns) / 1e9:.3f}")
            else:
                row.insert(0, "")
        rows.append(row)
    ids, positions = anchor
    marked = [_is_marked(r, ids, positions) for r in shown]
    return Table(title, columns, rows, marked, dropped=len(records) - len(shown))


def _walk(
    prefix: str, value: Mapping[str, Any], fields: list[tuple[str, str]], tables: list[tuple]
) -> None:
    for key, item in value.items():
        name = f"{prefix}{key}"
        if _is_records(item):
            tables.append((name, item))
        elif isinstance(item, Mapping) and any(_is_records(v) for v in item.values()):
            _walk(f"{name}.", item, fields, tables)
        else:
            fields.append((name, cell(item)))


def build_example(raw: Any, origin_ns: int | None = None) -> Example:
    if not isinstance(raw, Mapping):
        return Example(fields=[("example", cell(raw))])
    fields: list[tuple[str, str]] = []
    found: list[tuple[str, list]] = []
    _walk("", raw, fields, found)
    anchor = _anchor(raw)
    tables = [records_table(name, rows, anchor, origin_ns) for name, rows in found]
    return Example(fields=fields, tables=tables)


@dataclass(frozen=True)
class CheckView:
    name: str
    valid: str  # "valid" / "invalid" / "unknown" / "not-applicable"
    count: int
    error: str
    note: str
    examples: list[Example]
    details: list[tuple[str, str]]


def check_views(checks: Any, origin_ns: int | None = None) -> list[CheckView]:
    """Failing checks first (they are why the reader is here), then unknown, then valid."""
    if not isinstance(checks, Mapping):
        return []
    views = []
    for name, check in checks.items():
        check = check if isinstance(check, Mapping) else {"error": f"damaged entry: {cell(check)}"}
        valid = check.get("valid")
        label = "valid" if valid is True else "invalid" if valid is False else "unknown"
        if valid is None and check.get("not_applicable"):
            label = "not-applicable"
        count = check.get("count")
        examples = check.get("examples")
        details = check.get("details")
        views.append(
            CheckView(
                name=str(name),
                valid=label,
                count=count if isinstance(count, int) and not isinstance(count, bool) else 0,
                error=_text(check.get("error")),
                note=_text(check.get("note") or check.get("not_applicable")),
                examples=[
                    build_example(e, origin_ns)
                    for e in (examples if isinstance(examples, list) else [])
                ],
                details=[(str(k), cell(v)) for k, v in details.items()]
                if isinstance(details, Mapping)
                else [],
            )
        )
    order = {"invalid": 0, "unknown": 1, "valid": 2, "not-applicable": 3}
    return sorted(views, key=lambda v: (order[v.valid], v.name))
