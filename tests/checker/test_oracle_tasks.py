"""The reference keeps stream time per task, as the cluster does (checker/oracle/reference.py,
ReferenceRun.java): the examples' hopping count without grace, session count and
stream-stream join without grace, fed input whose partitions interleave in time, count
every record and give the same output in both reference orders, so the oracle judges them.
One driver fed partition by partition (the reference before) runs stream time ahead of every
later partition, drops those partitions' records as late and disagrees with its other
order: the oracle could only say "not judged". A topology that re-keys still runs in one
driver and says why.

Real parts: the launcher and the examples built with Maven, TopologyTestDriver, Spark.
Slow: the builds (cached) and a JVM per reference run."""

from __future__ import annotations

import base64
import json
import random
import subprocess
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from checker.check import check_history
from checker.oracle.reference import (
    ORDERS,
    SUMMARY_FILE,
    OracleSettings,
    ensure_reference,
    write_sources,
)
from checker.schema import META_FILE, TOPIC_RECORDS
from harness.app.build import app_jars
from harness.kafka.jars import require_java
from harness.sut import kstreams
from harness.sut.app import DEFAULT_VERSION, LAUNCHER_CLASS

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "workloads" / "app-examples"
PARTITIONS = 4
T0 = 1_700_000_000_000  # a multiple of every window size here
Row = dict[str, Any]
Sequences = dict[tuple[str, str], list[str | None]]  # (topic, key) -> its values in order


@pytest.fixture(scope="module")
def classpath() -> tuple[str, ...]:
    launcher = kstreams.build(DEFAULT_VERSION)
    return (*launcher.classpath.split(":"), *(str(j) for j in app_jars(str(EXAMPLES)).own))


def rows_of(records: list[tuple[str, str, str, int]]) -> list[Row]:
    """(topic, key, value, timestamp) in send order -> input rows, partitioned by key as a
    producer partitions (the same key, the same partition in every topic)."""
    offsets: dict[tuple[str, int], int] = defaultdict(int)
    rows = []
    for topic, key, value, timestamp in records:
        partition = zlib.crc32(key.encode()) % PARTITIONS
        rows.append({"topic": topic, "partition": partition, "offset": offsets[topic, partition],
                     "timestamp_ms": timestamp, "key": key.encode(), "value": value.encode()})
        offsets[topic, partition] += 1
    return rows


def clicks(users: int, count: int, every_ms: int) -> list[Row]:
    """A click every `every_ms`, by a user drawn at random (seeded)."""
    rng = random.Random(49)
    return rows_of([("clicks", f"user-{rng.randrange(users)}", f"/page/{i % 5}",
                     T0 + every_ms * i) for i in range(count)])


def sequences(records: list[Row]) -> Sequences:
    per_key: Sequences = defaultdict(list)
    for r in records:
        value = r["value"]
        per_key[r["topic"], r["key"].decode()].append(None if value is None else value.decode())
    return dict(per_key)


def per_task(history: Path, app_class: str, classpath: tuple[str, ...],
             rows: list[Row]) -> tuple[dict[str, Any], list[Sequences]]:
    """The oracle's own reference (both orders) of `rows`: its summary and each order's
    output per key."""
    pq.write_table(pa.Table.from_pylist(rows, TOPIC_RECORDS), history / "app_input.parquet")
    summary = ensure_reference(history, OracleSettings(classpath=classpath, app_class=app_class,
                                                       sinks=()))
    assert not summary.get("error"), summary
    return summary, [sequences(pq.read_table(history / f"{o.name}.parquet").to_pylist())
                     for o in ORDERS]


def one_driver(tmp: Path, app_class: str, classpath: tuple[str, ...],
               rows: list[Row]) -> list[Sequences]:
    """The reference as it was: one driver, fed partition by partition, then everything
    merged by timestamp with the wall clock advancing."""
    fed = tmp / "one-driver-input"
    write_sources(pa.Table.from_pylist(rows, TOPIC_RECORDS), fed)
    outputs = []
    for order in ORDERS:
        produced = tmp / f"one-driver-{order.name}.jsonl"
        done = subprocess.run(
            [require_java(), "-cp", ":".join(classpath), LAUNCHER_CLASS, "reference",
             "--app-class", app_class, "--input", str(fed), "--output", str(produced),
             "--drivers", "one", "--order", order.feed, "--ties", order.ties,
             "--wall-clock-step-ms", str(order.wall_clock_step_ms)],
            capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout.splitlines()[-1])["per_task"] is False
        out = [json.loads(line) for line in produced.read_text().splitlines()]
        outputs.append(sequences([{"topic": r["topic"], "key": base64.b64decode(r["key"]),
                                   "value": None if r["value"] is None
                                   else base64.b64decode(r["value"])} for r in out]))
    return outputs


def hopping_expected(rows: list[Row]) -> Sequences:
    """Each click in its two 10 s windows (advancing by 5 s), every window's count 1, 2, ..."""
    counts: dict[str, int] = defaultdict(int)
    expected: Sequences = defaultdict(list)
    for r in sorted(rows, key=lambda r: r["timestamp_ms"]):
        latest = r["timestamp_ms"] // 5000 * 5000
        for start in (latest - 5000, latest):
            key = f"{r['key'].decode()}@{start}"
            counts[key] += 1
            expected["clicks-per-hop", key].append(str(counts[key]))
    return dict(expected)


def test_a_hopping_count_without_grace_is_counted_per_task(tmp_path: Path,
                                                           classpath: tuple[str, ...]) -> None:
    rows = clicks(users=12, count=600, every_ms=50)  # 30 s, the partitions interleaved
    summary, (in_turn, at_once) = per_task(tmp_path, "dev.kchaos.examples.HoppingCount",
                                           classpath, rows)
    assert summary["reference"]["per_task"] is True and summary["reference"]["drivers"] == 4
    assert in_turn == at_once == hopping_expected(rows)
    old_in_turn, old_at_once = one_driver(tmp_path, "dev.kchaos.examples.HoppingCount",
                                          classpath, rows)
    assert old_at_once == in_turn
    # partition by partition, the later partitions' clicks came after stream time had passed
    # their windows: dropped, so the old reference disagreed with itself (not judged)
    assert old_in_turn != old_at_once
    assert sum(map(len, old_in_turn.values())) < sum(map(len, in_turn.values()))


def test_a_session_count_without_grace_keeps_every_click_per_task(
    tmp_path: Path, classpath: tuple[str, ...]
) -> None:
    # 40 users, a click every 60 ms: a user every 2.4 s on average, sessions (2 s gap) both
    # grow and end
    rows = clicks(users=40, count=500, every_ms=60)
    _, (in_turn, at_once) = per_task(tmp_path, "dev.kchaos.examples.SessionCount",
                                     classpath, rows)
    assert in_turn == at_once

    def counted(output: Sequences) -> int:
        """The clicks in the sessions standing at the end (their last value not a tombstone)."""
        return sum(int(values[-1]) for values in output.values() if values[-1] is not None)

    assert counted(in_turn) == len(rows)
    assert any(values[-1] is None for values in in_turn.values())  # a session grew past its key
    old_in_turn, old_at_once = one_driver(tmp_path, "dev.kchaos.examples.SessionCount",
                                          classpath, rows)
    assert counted(old_at_once) == len(rows) and counted(old_in_turn) < len(rows)


def test_a_join_without_grace_matches_every_payment_per_task(tmp_path: Path,
                                                             classpath: tuple[str, ...]) -> None:
    records = []
    for i in range(120):  # an order every 250 ms, its two payments 100 and 200 ms after
        at = T0 + 250 * i
        records += [("match-orders", f"order-{i}", f"order-{i}", at),
                    ("match-payments", f"order-{i}", f"paid-{i}a", at + 100),
                    ("match-payments", f"order-{i}", f"paid-{i}b", at + 200)]
    rows = rows_of(records)
    expected = {("matched-payments", f"order-{i}"): [f"order-{i}|paid-{i}a", f"order-{i}|paid-{i}b"]
                for i in range(120)}
    no_grace = "dev.kchaos.examples.OrderPaymentJoin#withNoGrace"
    _, (in_turn, at_once) = per_task(tmp_path, no_grace, classpath, rows)
    assert in_turn == at_once == expected
    old_in_turn, old_at_once = one_driver(tmp_path, no_grace, classpath, rows)
    assert old_at_once == expected and old_in_turn != expected


def test_a_topology_that_re_keys_runs_in_one_driver_and_says_why(
    tmp_path: Path, classpath: tuple[str, ...]
) -> None:
    rows = rows_of([("sentences", f"writer-{i % 9}", "kafka streams chaos", T0 + i)
                    for i in range(40)])
    summary, (in_turn, at_once) = per_task(tmp_path, "dev.kchaos.examples.WordCount",
                                           classpath, rows)
    ran = summary["reference"]
    assert ran["per_task"] is False and ran["drivers"] == 1
    assert "re-keys through topic word-counts-store-repartition" in ran["one_driver_why"]
    assert in_turn == at_once and in_turn["word-counts", "kafka"] == [str(n) for n in range(1, 41)]


def committed(expected: Sequences) -> list[Row]:
    """A committed output equal to `expected`, keys spread over partitions, interleaved."""
    rows: list[Row] = []
    offsets: dict[int, int] = defaultdict(int)
    queues = {key: list(values) for key, values in sorted(expected.items())}
    while queues:
        for (topic, key), values in list(queues.items()):
            partition = zlib.crc32(key.encode()) % PARTITIONS
            rows.append({"topic": topic, "partition": partition, "offset": offsets[partition],
                         "timestamp_ms": T0, "key": key.encode(),
                         "value": None if values[0] is None else values[0].encode()})
            offsets[partition] += 1
            values.pop(0)
            if not values:
                del queues[topic, key]
    return rows


def judge(history: Path, classpath: tuple[str, ...], rows: list[Row], output: list[Row],
          spark: SparkSession) -> dict[str, Any]:
    history.mkdir()
    pq.write_table(pa.Table.from_pylist(rows, TOPIC_RECORDS), history / "app_input.parquet")
    pq.write_table(pa.Table.from_pylist(output, TOPIC_RECORDS), history / "app_output.parquet")
    settings = OracleSettings(classpath=classpath, app_class="dev.kchaos.examples.HoppingCount",
                              sinks=("clicks-per-hop",))
    (history / META_FILE).write_text(json.dumps({
        "workload": "app", "guarantee": "exactly_once_v2", "drained": True,
        "oracle": settings.to_json(), "collection": {}}))
    oracle: dict[str, Any] = check_history(history, spark=spark)["checks"]["oracle"]
    assert (history / SUMMARY_FILE).exists()
    return oracle


def test_the_oracle_judges_a_window_without_grace(tmp_path: Path, classpath: tuple[str, ...],
                                                  spark: SparkSession) -> None:
    """Judged, not "not judged": the committed counts equal to the windows' are valid, and a
    count lost from one window is found."""
    rows = clicks(users=12, count=300, every_ms=50)
    output = committed(hopping_expected(rows))
    oracle = judge(tmp_path / "right", classpath, rows, output, spark)
    assert oracle["valid"] is True, oracle
    assert oracle["details"]["compared_records"] == 2 * len(rows)
    oracle = judge(tmp_path / "lost", classpath, rows, output[:-1], spark)
    assert oracle["valid"] is False and oracle["details"]["keys"] == {"lost": 1}, oracle
