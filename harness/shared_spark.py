"""One Spark Connect server for every check of a nightly, instead of a JVM per run.

The server starts beside the first runs rather than before them: its URL is known at
launch, and no run checks before its load phase (a minute) is over. Meanwhile it checks an
empty history once (checker/warmup.py), so that the first runs' checks do not pay its cold
start. If it cannot start, the runs launched from then on start their own Spark, and those
already launched fall back to their own when the URL does not answer (checker/check.py).
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.console import err

if TYPE_CHECKING:
    from checker.spark_server import SparkConnectServer

SPARK_MASTER_FLAG = "--spark-master"


class SharedChecker:
    """The `kchaos run` options of the runs launched now: pointing at the shared server
    while it is starting or up, without it once it failed."""

    def __init__(self, given: tuple[str, ...], url: str | None = None) -> None:
        self.given = given
        self.url = url
        self.failed: str | None = None
        self.warm_up_s: float | None = None

    @property
    def extra_args(self) -> tuple[str, ...]:
        if self.url is None or self.failed is not None:
            return self.given
        return (*self.given, SPARK_MASTER_FLAG, self.url)


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
    from checker.spark_server import SparkConnectServer

    server = SparkConnectServer(log_dir / "spark-connect.log")
    try:
        server.launch()
    except OSError as exc:
        err.print(f"[yellow]no shared Spark ({exc}); each run starts its own[/]")
        yield SharedChecker(given)
        return
    shared = SharedChecker(given, server.url)
    err.print(f"checks go to the shared Spark at {server.url} (starting)", highlight=False)
    ready = threading.Thread(target=_ready_and_warm, args=(server, shared),
                             name="shared-spark", daemon=True)
    ready.start()
    try:
        yield shared
    finally:
        server.stop()
        ready.join(timeout=30)


def _ready_and_warm(server: SparkConnectServer, shared: SharedChecker) -> None:
    from checker.spark_server import SparkServerError
    from checker.warmup import warm_up

    try:
        server.wait_ready()
    except SparkServerError as exc:
        shared.failed = str(exc)
        err.print(f"[yellow]no shared Spark ({exc}); the runs from now on start their own[/]")
        return
    if server.proc is None:  # stopped meanwhile: the nightly is over
        return
    with tempfile.TemporaryDirectory(prefix="kchaos-spark-warm-up-") as folder:
        shared.warm_up_s = warm_up(server.url, Path(folder))
    err.print(f"shared Spark up and warmed up ({shared.warm_up_s:.1f} s)", highlight=False)
