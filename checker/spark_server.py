"""A long-lived Spark Connect server on 127.0.0.1, shared by many checks.

Starting Spark costs a JVM per check (5 s and more on a busy 2-core machine); a nightly,
`kchaos check` over many runs and the test suite's end-to-end runs start one server
instead and point every check at `sc://127.0.0.1:<port>`. The server is an ordinary Spark
driver (`spark-submit` of Spark's own SparkConnectServer), so its master may be local[N]
or a standalone cluster: the checks stay Spark jobs that can run on a cluster.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from checker.session import DEFAULT_DRIVER_MEMORY, spark_conf

CONNECT_SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
START_TIMEOUT_S = 180.0  # a JVM under a load average of 8 on 2 cores takes its time


class SparkServerError(RuntimeError):
    """The server did not come up; the message names its log."""


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


class SparkConnectServer:
    """`with SparkConnectServer(log) as server: ... server.url ...`; stopped on exit."""

    def __init__(
        self, log: Path, master: str = "local[*]", port: int | None = None,
        driver_memory: str | None = None, niceness: int = 0,
    ) -> None:
        self.log = Path(log)
        self.master = master
        self.port = port or free_port()
        self.driver_memory = driver_memory or os.environ.get(
            "KCHAOS_DRIVER_MEMORY", DEFAULT_DRIVER_MEMORY
        )
        self.niceness = niceness  # added to the server's nice value (a lower priority)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def argv(self) -> list[str]:
        conf = {
            **spark_conf(),
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
        }
        args = [str(spark_home() / "bin" / "spark-submit"), "--class", CONNECT_SERVER_CLASS,
                "--master", self.master, "--name", "kchaos-checker",
                "--driver-memory", self.driver_memory]
        for key, value in conf.items():
            args += ["--conf", f"{key}={value}"]
        return args

    def start(self) -> SparkConnectServer:
        """Launch and wait until it listens (`START_TIMEOUT_S` at most)."""
        self.launch()
        self.wait_ready()
        return self

    def launch(self) -> None:
        """Start the JVM and return at once: its URL is known before it listens, so a
        nightly can hand it to runs whose checks come a minute later."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
        with open(self.log, "wb") as out:
            # Its own session: the whole spark-submit tree is stopped as one group.
            self.proc = subprocess.Popen(self._niced(self.argv()), stdout=out,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=env, start_new_session=True)

    def renice(self, niceness: int) -> bool:
        """Set every thread of the server's process group to `niceness`; False where this
        user may not (raising a priority back needs CAP_SYS_NICE)."""
        if self.proc is None:
            return False
        try:
            os.setpriority(os.PRIO_PGRP, self.proc.pid, niceness)
        except OSError:
            return False
        self.niceness = niceness
        return True

    def _niced(self, argv: list[str]) -> list[str]:
        nice = shutil.which("nice") if self.niceness else None
        return [nice, "-n", str(self.niceness), *argv] if nice else argv

    def wait_ready(self) -> None:
        """Until the launched server listens; stopped, and SparkServerError naming its log,
        if it exits or does not listen within `START_TIMEOUT_S`."""
        proc = self.proc
        if proc is None:
            raise SparkServerError(f"Spark Connect server not launched: see {self.log}")
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers(self.port):
            if proc.poll() is not None:
                raise SparkServerError(f"Spark Connect server exited {proc.returncode}: "
                                       f"see {self.log}")
            if time.monotonic() > deadline:
                self.stop()
                raise SparkServerError(f"Spark Connect server not listening after "
                                       f"{START_TIMEOUT_S:.0f} s: see {self.log}")
            time.sleep(0.2)

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def __enter__(self) -> SparkConnectServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def connect_port(url: str) -> int | None:
    """The port of a `sc://127.0.0.1:PORT[/...]` URL this machine serves; None for another
    host (nothing to wait for here)."""
    match = re.fullmatch(r"sc://(127\.0\.0\.1|localhost):(\d+)(/.*)?", url)
    return int(match.group(2)) if match else None


def wait_listening(url: str, timeout_s: float) -> bool:
    """Whether a local Connect server at `url` listens within `timeout_s` (a nightly's
    server may still be starting when a run's check begins). Another host's URL: True,
    its session says for itself whether it answers."""
    port = connect_port(url)
    if port is None:
        return True
    deadline = time.monotonic() + timeout_s
    while not _answers(port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


@contextlib.contextmanager
def shared_spark(log: Path, master: str | None = None) -> Iterator[str]:
    """A server for the duration of the block; yields the URL to give `--spark-master`."""
    with SparkConnectServer(log, master or "local[*]") as server:
        yield server.url
