"""A Spark Connect server that is warm by the time a check needs it: one for every check
of a nightly instead of a JVM per run, and one beside a single run's load.

The server starts beside the runs rather than before them: its URL is known at launch, and
no run checks before its load phase is over. Meanwhile it checks an empty history once
(checker/warmup.py), so that the first check does not pay its cold start. If it cannot
start, the runs launched from then on start their own Spark, and those already launched
fall back to their own when the URL does not answer (checker/check.py).
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from harness.console import err

SPARK_MASTER_FLAG = "--spark-master"


class WarmSpark:
    """A Spark Connect server launched now and warmed up in the background, for checks that
    come later: a nightly's (one server for every run) or a single run's (launched as its
    load starts, so that its check does not pay a JVM's start after the run). `niceness`
    lowers the server's CPU priority (its start and its warm-up) while the system under
    test is still at work."""

    def __init__(self, log: Path, *, niceness: int = 0) -> None:
        from checker.spark_server import SparkConnectServer

        self.server = SparkConnectServer(log, niceness=niceness)
        self.failed: str | None = None
        self.warm_up_s: float | None = None
        self._thread: threading.Thread | None = None

    def launch(self) -> bool:
        """Start the JVM and the thread that waits for it; False (and `failed` says why)
        when it cannot start."""
        try:
            self.server.launch()
        except OSError as exc:
            self.failed = str(exc)
            return False
        self._thread = threading.Thread(target=self._ready_and_warm, name="warm-spark",
                                        daemon=True)
        self._thread.start()
        return True

    @property
    def url(self) -> str | None:
        """Where checks go: None once the server failed (they start their own Spark)."""
        return None if self.failed is not None else self.server.url

    def hurry(self) -> None:
        """Back to the normal priority: what it was niced for is over."""
        self.server.renice(0)

    def stop(self) -> None:
        self.server.stop()
        if self._thread is not None:
            # A warm-up cut off by the stop retries against no server: it is a daemon, left
            # to end with the process rather than holding up the run's end.
            self._thread.join(timeout=5)

    def as_json(self) -> dict[str, object]:
        return {"url": self.server.url, "failed": self.failed, "warm_up_s": self.warm_up_s}

    def _ready_and_warm(self) -> None:
        from checker.spark_server import SparkServerError
        from checker.warmup import warm_up

        try:
            self.server.wait_ready()
        except SparkServerError as exc:
            self.failed = str(exc)
            return
        if self.server.proc is None:  # stopped meanwhile: its checks are over
            return
        with tempfile.TemporaryDirectory(prefix="kchaos-spark-warm-up-") as folder:
            self.warm_up_s = warm_up(self.server.url, Path(folder))


class SharedChecker:
    """The `kchaos run` options of the runs launched now: pointing at the shared server
    while it is starting or up, without it once it failed."""

    def __init__(self, given: tuple[str, ...], spark: WarmSpark | None = None) -> None:
        self.given = given
        self.spark = spark

    @property
    def extra_args(self) -> tuple[str, ...]:
        url = self.spark.url if self.spark is not None else None
        if url is None:
            return self.given
        return (*self.given, SPARK_MASTER_FLAG, url)


@contextlib.contextmanager
def shared_checker(
    extra_args: Sequence[str], log_dir: Path, enabled: bool = True
) -> Iterator[SharedChecker]:
    """Yields the options that point each run's check at one shared server (its log:
    `log_dir/spark-connect.log`). Options that already name a `--spark-master` win."""
    given = tuple(extra_args)
    if not enabled or SPARK_MASTER_FLAG in given:
        yield SharedChecker(given)
        return
    spark = WarmSpark(log_dir / "spark-connect.log")
    if not spark.launch():
        err.print(f"[yellow]no shared Spark ({spark.failed}); each run starts its own[/]")
        yield SharedChecker(given)
        return
    err.print(f"checks go to the shared Spark at {spark.url} (starting)", highlight=False)
    try:
        yield SharedChecker(given, spark)
    finally:
        spark.stop()
        if spark.failed is not None:
            err.print(f"[yellow]the shared Spark failed ({spark.failed}); the runs "
                      "launched after it started their own[/]")
        elif spark.warm_up_s is not None:
            err.print(f"shared Spark warmed up in {spark.warm_up_s:.1f} s", highlight=False)
