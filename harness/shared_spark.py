"""One Spark Connect server for every check of a nightly, instead of a JVM per run."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from harness.console import err


@contextlib.contextmanager
def shared_checker(
    extra_args: Sequence[str], log_dir: Path, enabled: bool = True
) -> Iterator[tuple[str, ...]]:
    """Yields the `kchaos run` options that point each run's check at one shared server
    (its log: `log_dir/spark-connect.log`). Options that already name a `--spark-master`
    win; if the server cannot start, each run starts its own Spark as before."""
    given = tuple(extra_args)
    if not enabled or "--spark-master" in given:
        yield given
        return
    from checker.spark_server import SparkConnectServer, SparkServerError

    server = SparkConnectServer(log_dir / "spark-connect.log")
    try:
        with err.status("starting the shared Spark Connect server"):
            server.start()
    except (OSError, SparkServerError) as exc:
        err.print(f"[yellow]no shared Spark ({exc}); each run starts its own[/]")
        yield given
        return
    try:
        err.print(f"checks go to the shared Spark at {server.url}", highlight=False)
        yield (*given, "--spark-master", server.url)
    finally:
        server.stop()
