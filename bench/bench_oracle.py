"""The differential oracle's two costs, printed (docs/speed.md, "The oracle"):

  reference  seconds of the reference execution (AppLauncher reference: the topology in
             TopologyTestDriver) per 10k input records, for each example app, in the
             primary order and the alternative one (wall clock advancing);
  compare    seconds of the oracle check on Spark over a synthetic history of N committed
             output records (default 1M; KEYS keys, each its running count), equal to the
             reference but for a few lost, repeated and changed records, on local[2].

    .venv/bin/python bench/bench_oracle.py [--part reference|compare|both]
        [--records 10000] [--output-records 1000000] [--keys 10000]

The reference's time is spent mostly in the driver's commit after every record (a RocksDB
flush per store): stateful apps cost about a hundred times a stateless one.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from checker.check import check_history
from checker.oracle.reference import ORDERS, SUMMARY_FILE, OracleSettings, ensure_reference
from checker.schema import META_FILE, REFERENCE, TOPIC_RECORDS
from checker.session import start_spark
from harness.app.build import app_jars
from harness.app.spec import read_spec, records
from harness.sut import kstreams
from harness.sut.app import DEFAULT_VERSION

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "workloads" / "app-examples"


def reference_part(count: int) -> None:
    launcher = kstreams.build(DEFAULT_VERSION)
    classpath = (*launcher.classpath.split(":"), *(str(j) for j in app_jars(str(EXAMPLES)).own))
    print(f"reference: {count} input records per example, Kafka Streams {DEFAULT_VERSION}")
    for spec_path in sorted(EXAMPLES.glob("*.yaml")):
        spec = read_spec(spec_path)
        if spec.app_class is None:  # entered by its main: the bench gives a topology method
            print(f"  {spec_path.stem}: entered by its main, not benched")
            continue
        rows: list[dict[str, Any]] = []
        offsets: dict[tuple[str, int], int] = {}
        for topic in spec.topics:
            made = records(topic, seed=1)
            for n, record in enumerate(made):
                if n >= (count if topic.count is None else min(count, topic.count)):
                    break
                partition = hash(record.key) % topic.partitions
                offset = offsets.get((topic.name, partition), 0)
                offsets[topic.name, partition] = offset + 1
                rows.append({"topic": topic.name, "partition": partition, "offset": offset,
                             "timestamp_ms": 1_000 + len(rows),
                             "key": None if record.key is None else record.key.encode(),
                             "value": None if record.value is None else record.value.encode()})
        with tempfile.TemporaryDirectory(prefix="kchaos-bench-ref-") as tmp:
            history = Path(tmp)
            pq.write_table(pa.Table.from_pylist(rows, TOPIC_RECORDS),
                           history / "app_input.parquet")
            settings = OracleSettings(classpath=classpath, app_class=spec.app_class, sinks=())
            summary = ensure_reference(history, settings)
            if summary.get("error"):
                print(f"  {spec_path.stem}: {summary['error']}")
                continue
            per_10k = {o.name: summary[o.name]["seconds"] * 10_000 / len(rows) for o in ORDERS}
            print(f"  {spec_path.stem:20} {len(rows):>8} records in  "
                  + "  ".join(f"{name} {s:6.2f} s/10k" for name, s in per_10k.items())
                  + f"  (out: {summary['reference']['records_out']})")


def synthetic_history(root: Path, outputs: int, keys: int) -> Path:
    """Committed output and reference equal but for a few anomalies (the check must find
    them: a bench of a check that finds nothing could be timing a no-op)."""
    history = root / "history"
    history.mkdir()
    per_key = max(1, outputs // keys)
    rng = random.Random(1)
    ref_rows: list[dict[str, Any]] = []
    for k in range(keys):
        key = f"key-{k}".encode()
        for n in range(per_key):
            ref_rows.append({"topic": "out", "seq": len(ref_rows), "input_index": len(ref_rows),
                             "timestamp_ms": 0, "key": key, "value": str(n + 1).encode()})
    out_rows = [{"topic": "out", "partition": hash(r["key"]) % 8, "offset": i,
                 "timestamp_ms": 0, "key": r["key"], "value": r["value"]}
                for i, r in enumerate(ref_rows)]
    for i in rng.sample(range(len(out_rows)), 3):
        out_rows[i] = {**out_rows[i], "value": b"changed"}
    pq.write_table(pa.Table.from_pylist(out_rows, TOPIC_RECORDS), history / "app_output.parquet")
    for order in ORDERS:
        pq.write_table(pa.Table.from_pylist(ref_rows, REFERENCE), history / f"{order.name}.parquet")
    (history / SUMMARY_FILE).write_text(json.dumps({"reference": {}}))
    settings = OracleSettings(classpath=(), app_class="bench.App", sinks=("out",))
    (history / META_FILE).write_text(json.dumps({
        "workload": "app", "guarantee": "exactly_once_v2", "drained": True,
        "oracle": settings.to_json(), "collection": {}}))
    return history


def compare_part(outputs: int, keys: int) -> None:
    with tempfile.TemporaryDirectory(prefix="kchaos-bench-oracle-") as tmp:
        history = synthetic_history(Path(tmp), outputs, keys)
        spark = start_spark("local[2]")
        try:
            for attempt in ("cold", "warm"):
                started = time.perf_counter()
                doc = check_history(history, "local[2]", spark=spark)
                wall = time.perf_counter() - started
                oracle = doc["checks"]["oracle"]
                print(f"compare ({attempt}): {outputs} output records, {keys} keys, local[2]: "
                      f"oracle {doc['figures']['check_s']['oracle']:.1f} s, whole check "
                      f"{wall:.1f} s; found {oracle['details']['keys']} (3 changed planted)")
        finally:
            spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("reference", "compare", "both"), default="both")
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--output-records", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    args = parser.parse_args()
    if args.part in ("reference", "both"):
        reference_part(args.records)
    if args.part in ("compare", "both"):
        compare_part(args.output_records, args.keys)


if __name__ == "__main__":
    main()
