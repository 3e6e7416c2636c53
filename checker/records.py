"""Kafka records of the ledger topics -> rows of the history schemas (checker/schema.py).

Values are decoded as plain JSON dicts rather than through the contract dataclasses: a
worker bug that writes an extra or missing field must still be collected and judged, not
crash collection.
"""

from __future__ import annotations

import json
from typing import Any

from kafka.consumer.fetcher import ConsumerRecord


def _text(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("utf-8", errors="replace")


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _where(rec: ConsumerRecord) -> dict[str, Any]:
    """Where the record is in its topic, and when: the first columns of every topic's rows
    that keep them (schema.POSITION)."""
    return {"partition": rec.partition, "offset": rec.offset, "timestamp_ms": rec.timestamp}


def _event_row(rec: ConsumerRecord, v: dict[str, Any]) -> dict[str, Any]:
    """Where the record is and the event it carries: what input and output rows share."""
    return {
        **_where(rec),
        "event_id": str(v["event_id"]),
        "account": str(v["account"]),
        "amount": int(v["amount"]),
    }


def input_row(rec: ConsumerRecord) -> dict[str, Any]:
    return _event_row(rec, json.loads(rec.value))


def output_row(rec: ConsumerRecord) -> dict[str, Any]:
    v = json.loads(rec.value)
    return {
        **_event_row(rec, v),
        "balance": int(v["balance"]),
        "in_partition": int(v["partition"]),
        "in_offset": int(v["offset"]),
        "global_version": _opt_int(v.get("global_version")),
    }


def changelog_row(store: str, rec: ConsumerRecord) -> dict[str, Any]:
    return {
        "store": store,
        "partition": rec.partition,
        "offset": rec.offset,
        "key": _text(rec.key),
        "value": _text(rec.value),
    }


def account_row(rec: ConsumerRecord) -> dict[str, Any]:
    # A tombstone (account deleted) keeps its key, with no version.
    v = json.loads(rec.value) if rec.value is not None else {}
    account = v.get("account") if v else None
    return {
        "offset": rec.offset,
        "timestamp_ms": rec.timestamp,
        "account": str(account) if account is not None else _text(rec.key),
        "version": _opt_int(v.get("version")),
        "tier": v.get("tier"),
    }


def raw_row(rec: ConsumerRecord) -> dict[str, Any]:
    """Any app's record as it is (the oracle compares bytes)."""
    return {"topic": rec.topic, **_where(rec), "key": rec.key, "value": rec.value}


def windowed_row(rec: ConsumerRecord) -> dict[str, Any]:
    """A windows-topic or sessions-topic record (workloads/ledger/windowed.py)."""
    v = json.loads(rec.value)
    return {
        **_where(rec),
        "account": str(v["account"]),
        "start": int(v["start"]),
        "end": int(v["end"]),
        "count": _opt_int(v.get("count")),
        "sum": _opt_int(v.get("sum")),
        "removed": bool(v.get("removed", False)),
    }
