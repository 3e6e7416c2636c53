"""A throwaway Spark standalone cluster (one master, one worker) from the pyspark install,
on free loopback ports, for tests. Every process is ended by its PID."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pyspark

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    # SPARK_LOCAL_IP also binds the master's and worker's web UIs to loopback.
    env.update(SPARK_LOCAL_IP="127.0.0.1", SPARK_LOG_DIR=str(work), SPARK_WORKER_DIR=str(work))
    return env


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as resp:
            return int(json.load(resp).get("aliveworkers", 0))
    except (OSError, ValueError):
        return 0


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the JVM (a worker then ends its executors), then kill what is left."""
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        children = []
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    for child in children:
        try:
            child.kill()
            child.wait(10)
        except psutil.NoSuchProcess:
            pass


@contextmanager
def standalone_cluster(work: Path, cores: int = 2, memory: str = "2g") -> Iterator[str]:
    """Yields the master URL once the worker has registered."""
    work.mkdir(parents=True, exist_ok=True)
    port, ui, wport, wui = free_port(), free_port(), free_port(), free_port()
    env = _env(work)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with open(work / "master.log", "ab") as log:
            procs.append(
                subprocess.Popen(
                    [
                        str(SPARK_CLASS),
                        "org.apache.spark.deploy.master.Master",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(port),
                        "--webui-port",
                        str(ui),
                    ],
                    env=env,
                    stdout=log,
                    stderr=log,
                )
            )
        url = f"spark://127.0.0.1:{port}"
        with open(work / "worker.log", "ab") as log:
            procs.append(
                subprocess.Popen(
                    [
                        str(SPARK_CLASS),
                        "org.apache.spark.deploy.worker.Worker",
                        url,
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(wport),
                        "--webui-port",
                        str(wui),
                        "--cores",
                        str(cores),
                        "--memory",
                        memory,
                        "--work-dir",
                        str(work),
                    ],
                    env=env,
                    stdout=log,
                    stderr=log,
                )
            )
        deadline = time.monotonic() + 120
        while _alive_workers(ui) < 1:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                logs = "".join((work / n).read_text()[-2000:] for n in ("master.log", "worker.log"))
                raise RuntimeError(f"standalone cluster did not come up:\n{logs}")
            time.sleep(0.5)
        yield url
    finally:
        for proc in reversed(procs):  # worker first, so it can end its executors
            _stop(proc)
