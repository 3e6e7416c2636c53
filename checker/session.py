"""The checker's SparkSession: local[*] by default, small and quiet, bound to 127.0.0.1.

Sized for the 2-core / 24 GiB machines the harness runs on: a 4 GiB driver (on local[*]
it is also the executor), a modest number of shuffle partitions, adaptive execution, and
no UI server. Logging goes through a generated log4j2 file so Spark's INFO chatter does
not bury the verdict.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO

from pyspark.sql import SparkSession

from common.files import write_atomically

LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
# PySpark's gateway counts as a shell: Spark would reset the level to that logger's (WARN
# by default) and announce it on stderr; pinning it to the root level keeps both quiet.
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
"""

DEFAULT_DRIVER_MEMORY = "4g"
# 16, not 2 x cores: the per-event aggregation holds a hash map per task, and smaller
# maps stay in cache; measured 20% less CPU than 8 on 10M events (bench_checker.py).
DEFAULT_SHUFFLE_PARTITIONS = 16
# Small histories (a 60 s run is 0.5 MB of Parquet) pay per task, not per row: 2 partitions
# instead of 16 took 40% less JVM CPU to check a 60 s run (docs/speed.md).
BYTES_PER_SHUFFLE_PARTITION = 8 * 2**20
MIN_SHUFFLE_PARTITIONS = 2
# Below this, adaptive execution costs more than it finds: it runs every shuffle and
# broadcast as a job of its own and re-plans after each (a 60 s run's stale-checkpoint:
# 14 jobs adaptive, 6 not). Nothing in a history that small is skewed or needs coalescing.
ADAPTIVE_MIN_BYTES = 64 * 2**20


def _log_config() -> Path:
    path = Path(tempfile.gettempdir()) / "kchaos-checker-log4j2.properties"
    if not path.exists() or path.read_text() != LOG4J2:
        write_atomically(path, LOG4J2)
    return path


def spark_conf(shuffle_partitions: int | None = None) -> dict[str, str]:
    """The driver settings of every checker Spark, in-process or a Connect server's."""
    java_opts = f"-Dlog4j2.configurationFile=file:{_log_config()}"
    partitions = shuffle_partitions or int(
        os.environ.get("KCHAOS_SHUFFLE_PARTITIONS", DEFAULT_SHUFFLE_PARTITIONS)
    )
    return {
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(partitions),
        "spark.default.parallelism": str(partitions),
        "spark.sql.adaptive.enabled": "true",
        # The cached per-event view is read a few times, then dropped: compressing it
        # costs more CPU than the reads save.
        "spark.sql.inMemoryColumnarStorage.compressed": "false",
        "spark.sql.session.timeZone": "UTC",
        # Inputs and outputs are distributed by account once; joins on (account, ...)
        # may then reuse that distribution instead of shuffling on all their keys.
        "spark.sql.requireAllClusterKeysForCoPartition": "false",
        "spark.driver.extraJavaOptions": java_opts,
        "spark.executor.extraJavaOptions": java_opts,
        # A standalone executor gets 1 GiB by default: enough for our jobs' spills.
        "spark.executor.memory": os.environ.get("KCHAOS_EXECUTOR_MEMORY", "2g"),
    }


def shuffle_partitions_for(history_bytes: int) -> int:
    """Shuffle partitions for a history of this size; KCHAOS_SHUFFLE_PARTITIONS wins."""
    if os.environ.get("KCHAOS_SHUFFLE_PARTITIONS"):
        return int(os.environ["KCHAOS_SHUFFLE_PARTITIONS"])
    wanted = -(-history_bytes // BYTES_PER_SHUFFLE_PARTITION)
    return max(MIN_SHUFFLE_PARTITIONS, min(DEFAULT_SHUFFLE_PARTITIONS, wanted))


def adaptive_for(history_bytes: int) -> bool:
    """Adaptive execution for a history of this size; KCHAOS_ADAPTIVE (true/false) wins."""
    given = os.environ.get("KCHAOS_ADAPTIVE", "").strip().lower()
    if given in ("true", "false"):
        return given == "true"
    return history_bytes >= ADAPTIVE_MIN_BYTES


def session_settings_for(history_bytes: int) -> dict[str, str]:
    """The SQL settings one check sets on its session (a shared server's too): sized for
    the history at hand, not for the largest one the server may see."""
    return {
        "spark.sql.shuffle.partitions": str(shuffle_partitions_for(history_bytes)),
        "spark.sql.adaptive.enabled": str(adaptive_for(history_bytes)).lower(),
    }


def is_connect_url(master: str | None) -> bool:
    return bool(master) and str(master).startswith("sc://")


# pyspark turns a local session into a Spark Connect one when these are in the environment:
# a user's SPARK_REMOTE, or the marks a Connect session leaves on its process and children.
# The checker's Spark is chosen by its master alone, and figures name that master.
CONNECT_ENVIRONMENT = ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE")


def start_spark(
    master: str | None = None,
    *,
    driver_memory: str | None = None,
    shuffle_partitions: int | None = None,
    app_name: str = "kchaos-checker",
) -> SparkSession:
    """Start (or join the already running) session. The caller stops it.

    `sc://HOST:PORT` connects to a running Spark Connect server (checker/spark_server.py)
    instead: no JVM is started here, and stopping the session leaves the server up. Any
    other master is a classic local or cluster session, whatever SPARK_REMOTE or
    SPARK_API_MODE say (they are dropped from this process's environment).
    """
    # The launcher (spark-submit) and the JVM must bind to loopback, never a public address.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if master is not None and is_connect_url(master):
        # A session of its own (not getOrCreate's shared one): stopping it closes only its
        # channel, not that of another check on the same server in this process.
        session = SparkSession.builder.remote(master).create()
        # Session-level settings only: the server's driver settings are its own.
        session.conf.set("spark.sql.session.timeZone", "UTC")
        if shuffle_partitions:
            session.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions))
        return session
    for name in CONNECT_ENVIRONMENT:
        os.environ.pop(name, None)
    settings = {
        "spark.app.name": app_name, "spark.master": master or "local[*]",
        "spark.driver.memory":
            driver_memory or os.environ.get("KCHAOS_DRIVER_MEMORY", DEFAULT_DRIVER_MEMORY),
        "spark.api.mode": "classic", **spark_conf(shuffle_partitions),
    }
    _launch_quiet_jvm(settings)
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# Spark's launcher always adds --add-modules=jdk.incubator.vector, and the JVM then tells
# every run's console so, a line nobody can act on. Everything else the JVM says passes.
INCUBATOR_WARNING = b"WARNING: Using incubator modules"


def _launch_quiet_jvm(settings: dict[str, str]) -> None:
    """Start this process's Spark JVM (once: pyspark keeps it for the process) with its
    stderr filtered through a thread that drops the incubator warning."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    with SparkContext._lock:
        if SparkContext._gateway is not None:
            return
        conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
        gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
        proc = getattr(gateway, "proc", None)
        if proc is not None and proc.stderr is not None:
            threading.Thread(target=_forward_stderr, args=(proc.stderr,), daemon=True,
                             name="spark-stderr").start()
        SparkContext._ensure_initialized(gateway=gateway)


def _forward_stderr(stream: IO[bytes]) -> None:
    for line in iter(stream.readline, b""):
        if not line.startswith(INCUBATOR_WARNING):
            sys.stderr.buffer.write(line)
            sys.stderr.buffer.flush()
