"""The checker's SparkSession: local[*] by default, small and quiet, bound to 127.0.0.1.

Sized for the 2-core / 24 GiB machines the harness runs on: a 4 GiB driver (on local[*]
it is also the executor), a modest number of shuffle partitions, adaptive execution, and
no UI server. Logging goes through a generated log4j2 file so Spark's INFO chatter does
not bury the verdict.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

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


def _log_config() -> Path:
    path = Path(tempfile.gettempdir()) / "kchaos-checker-log4j2.properties"
    if not path.exists() or path.read_text() != LOG4J2:
        write_atomically(path, LOG4J2)
    return path


def start_spark(
    master: str | None = None,
    *,
    driver_memory: str | None = None,
    shuffle_partitions: int | None = None,
    app_name: str = "kchaos-checker",
) -> SparkSession:
    """Start (or join the already running) session. The caller stops it."""
    # The launcher (spark-submit) and the JVM must bind to loopback, never a public address.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    java_opts = f"-Dlog4j2.configurationFile=file:{_log_config()}"
    partitions = shuffle_partitions or int(
        os.environ.get("KCHAOS_SHUFFLE_PARTITIONS", DEFAULT_SHUFFLE_PARTITIONS)
    )
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master or "local[*]")
        .config(
            "spark.driver.memory",
            driver_memory or os.environ.get("KCHAOS_DRIVER_MEMORY", DEFAULT_DRIVER_MEMORY),
        )
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(partitions))
        .config("spark.default.parallelism", str(partitions))
        .config("spark.sql.adaptive.enabled", "true")
        # The cached per-event view is read a few times, then dropped: compressing it
        # costs more CPU than the reads save.
        .config("spark.sql.inMemoryColumnarStorage.compressed", "false")
        .config("spark.sql.session.timeZone", "UTC")
        # Inputs and outputs are distributed by account once; joins on (account, ...)
        # may then reuse that distribution instead of shuffling on all their keys.
        .config("spark.sql.requireAllClusterKeysForCoPartition", "false")
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.executor.extraJavaOptions", java_opts)
        # A standalone executor gets 1 GiB by default: enough for our jobs' spills.
        .config("spark.executor.memory", os.environ.get("KCHAOS_EXECUTOR_MEMORY", "2g"))
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
