"""Synthetic ledger histories for bench_checker.py: valid by construction, written with
Spark, kept under bench/out/checker/<events>/ and reused."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from checker.session import start_spark  # noqa: E402
from workloads.ledger.contract import changelog_topic, store_digest, task_id  # noqa: E402

OUT = REPO / "bench" / "out" / "checker"
PARTITIONS = 8
T0_MS = 1_700_000_000_000
RESEND_EVERY = 20  # offset % 20 == 19 re-sends the event 37 offsets earlier
RESEND_BACK = 37
APP = "bench-app"


def generate(spark: object, n: int, history: Path) -> None:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    per_part_accounts = max(1, n // 100 // PARTITIONS)
    i = F.col("id")
    p = (i % PARTITIONS).cast("int")
    o = (i / PARTITIONS).cast("long")
    resend = ((o % RESEND_EVERY) == RESEND_EVERY - 1) & (o >= RESEND_BACK)
    j = F.when(resend, i - RESEND_BACK * PARTITIONS).otherwise(i)  # the original's id
    oj = (j / PARTITIONS).cast("long")
    acct_idx = (oj * 7919 % per_part_accounts) * PARTITIONS + p
    base = spark.range(n).select(  # type: ignore[attr-defined]
        p.alias("partition"),
        o.alias("offset"),
        (F.lit(T0_MS) + i).alias("timestamp_ms"),
        F.concat(F.lit("e-"), j.cast("string")).alias("event_id"),
        F.format_string("acct-%07d", acct_idx).alias("account"),
        ((j * 31 % 201) - 100).alias("amount"),
        resend.alias("resend"),
    )
    base.drop("resend").write.mode("overwrite").parquet(str(history / "input.parquet"))

    half_ms = T0_MS + n // 2
    by_account = (
        Window.partitionBy("account")
        .orderBy("offset")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    # 1 account in 100 gets version 2 half way; outputs after it (plus a second) see it.
    bumped = F.abs(F.hash("account")) % 100 == 0
    firsts = base.where(~F.col("resend")).withColumn("balance", F.sum("amount").over(by_account))
    firsts = firsts.withColumn(
        "global_version",
        F.when(bumped & (F.col("timestamp_ms") > half_ms + 1000), 2).otherwise(1).cast("long"),
    )
    firsts.select(
        "partition",
        "offset",
        (F.col("timestamp_ms") + 3).alias("timestamp_ms"),
        "event_id",
        "account",
        "amount",
        "balance",
        F.col("partition").alias("in_partition"),
        F.col("offset").alias("in_offset"),
        "global_version",
    ).write.mode("overwrite").parquet(str(history / "output.parquet"))

    out = spark.read.parquet(str(history / "output.parquet"))  # type: ignore[attr-defined]
    changelog = out.select(
        F.lit("balances").alias("store"),
        "partition",
        "offset",
        F.col("account").alias("key"),
        F.col("balance").cast("string").alias("value"),
    ).unionByName(
        out.select(
            F.lit("dedup").alias("store"),
            "partition",
            "offset",
            F.col("event_id").alias("key"),
            F.concat_ws(":", "in_partition", "in_offset").alias("value"),
        )
    )
    changelog.write.mode("overwrite").parquet(str(history / "changelog.parquet"))

    accounts = spark.range(per_part_accounts * PARTITIONS).select(  # type: ignore[attr-defined]
        F.format_string("acct-%07d", F.col("id")).alias("account")
    )
    v1 = accounts.select(
        F.lit(T0_MS - 1000).alias("timestamp_ms"), "account", F.lit(1).cast("long").alias("version")
    )
    v2 = accounts.where(bumped).select(
        F.lit(half_ms).alias("timestamp_ms"), "account", F.lit(2).cast("long").alias("version")
    )
    v1.unionByName(v2).select(
        F.monotonically_increasing_id().alias("offset"),
        "timestamp_ms",
        "account",
        "version",
        F.lit("basic").alias("tier"),
    ).write.mode("overwrite").parquet(str(history / "accounts.parquet"))

    ends = base.groupBy("partition").agg((F.max("offset") + 1).alias("end"))
    ends.select("partition", F.col("end").alias("committed"), "end").write.mode(
        "overwrite"
    ).parquet(str(history / "offsets.parquet"))

    _traces(spark, n, history, out)
    meta = {
        "guarantee": "exactly_once_v2",
        "partitions": PARTITIONS,
        "application_id": APP,
        "drained": True,
        "drain_seconds": 1.0,
        "dead_pods": [],
    }
    (history / "meta.json").write_text(json.dumps(meta))


def _traces(spark: object, n: int, history: Path, out: object) -> None:
    """Task inits at start (no checkpoint) and at a clean restart half way (checkpoint and
    the digest the store had, computed independently of the checker's delta method), and a
    dedup-skip event for every re-send."""
    from pyspark.sql import functions as F

    cl = spark.read.parquet(str(history / "changelog.parquet"))  # type: ignore[attr-defined]
    half = n // PARTITIONS // 2
    upto = cl.where(F.col("offset") <= half)
    state = upto.groupBy("store", "partition", "key").agg(F.max_by("value", "offset").alias("v"))
    digests = {
        (r["store"], r["partition"]): (r["c"], r["last"])
        for r in state.groupBy("store", "partition")
        .agg(F.count("*").alias("c"))
        .join(
            upto.groupBy("store", "partition").agg(F.max("offset").alias("last")),
            ["store", "partition"],
        )
        .collect()
    }
    sums = {
        (r["store"], r["partition"]): r["s"]
        for r in state.groupBy("store", "partition")
        .agg(F.sum(F.crc32(F.concat("key", F.lit("\u0000"), "v").cast("binary"))).alias("s"))
        .collect()
    }
    lines = []
    mid_ns = (T0_MS + n // 2) * 1_000_000
    for part in range(PARTITIONS):
        t = task_id(part)
        lines.append(
            {
                "ts_ns": T0_MS * 1_000_000 - 10,
                "pid": 1,
                "event": "task-init",
                "task": t,
                "kind": "active",
                "store": "balances",
                "checkpoint": None,
                "digest": store_digest([]),
                "entries": 0,
            }
        )
        lines.append({"ts_ns": T0_MS * 1_000_000 - 9, "pid": 1, "event": "task-running", "task": t})
        offsets = {changelog_topic(APP, s): digests[(s, part)][1] for s in ("balances", "dedup")}
        lines.append(
            {
                "ts_ns": mid_ns,
                "pid": 1,
                "event": "checkpoint-write",
                "task": t,
                "offsets": offsets,
                "reason": "close",
            }
        )
        for k, store in enumerate(("balances", "dedup")):
            count, last = digests[(store, part)]
            lines.append(
                {
                    "ts_ns": mid_ns + 1 + k,
                    "pid": 2,
                    "event": "task-init",
                    "task": t,
                    "kind": "active",
                    "store": store,
                    "checkpoint": last,
                    "digest": f"{count}:{sums[(store, part)]}",
                    "entries": count,
                }
            )
        lines.append(
            {
                "ts_ns": mid_ns + 3,
                "pid": 2,
                "event": "checkpoint-read",
                "task": t,
                "offsets": offsets,
            }
        )
        lines.append(
            {
                "ts_ns": mid_ns + 4,
                "pid": 2,
                "event": "checkpoint-delete",
                "task": t,
                "reason": "eos-init",
            }
        )
        lines.append({"ts_ns": mid_ns + 5, "pid": 2, "event": "task-running", "task": t})
    rows = [
        (
            f"pod-{x['task']}",
            x["pid"],
            x["ts_ns"],
            "StreamThread-1",
            x["event"],
            x["task"],
            json.dumps({"pod": f"pod-{x['task']}", "thread": "StreamThread-1", **x}),
        )
        for x in lines
    ]
    lifecycle = spark.createDataFrame(  # type: ignore[attr-defined]
        rows,
        "pod STRING, pid BIGINT, ts_ns BIGINT, thread STRING, event STRING, task STRING, "
        "data STRING",
    )
    inp = spark.read.parquet(str(history / "input.parquet"))  # type: ignore[attr-defined]
    skips = inp.where(
        ((F.col("offset") % RESEND_EVERY) == RESEND_EVERY - 1) & (F.col("offset") >= RESEND_BACK)
    ).select(
        F.concat(F.lit("pod-0_"), F.col("partition").cast("string")).alias("pod"),
        F.lit(2).cast("long").alias("pid"),
        (F.col("timestamp_ms") * 1_000_000 + 2).alias("ts_ns"),
        F.lit("StreamThread-1").alias("thread"),
        F.lit("dedup-skip").alias("event"),
        F.concat(F.lit("0_"), F.col("partition").cast("string")).alias("task"),
        F.to_json(F.struct("event_id", "partition", "offset")).alias("data"),
    )
    lifecycle.unionByName(skips).write.mode("overwrite").parquet(str(history / "traces.parquet"))


def ensure_history(n: int, regenerate: bool) -> Path:
    run = OUT / str(n)
    done = run / "history" / ".complete"
    if done.exists() and not regenerate:
        return run
    shutil.rmtree(run, ignore_errors=True)
    (run / "history").mkdir(parents=True)
    t = time.perf_counter()
    spark = start_spark(app_name="kchaos-bench-generate")
    try:
        generate(spark, n, run / "history")
    finally:
        spark.stop()
    done.write_text("")
    print(f"generated {n:,} events in {time.perf_counter() - t:.1f} s -> {run}", flush=True)
    return run
