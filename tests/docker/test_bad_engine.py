"""Bad docker situations end a run with one line and 254/255, never a hang: no engine, no
permission on the engine's socket, an image build that fails, the engine gone mid-run."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import docker
import pytest

from harness.platforms.docker_engine import cleanup_run
from harness.procs import is_same_process, load_records

ROOT = Path(__file__).resolve().parents[2]


def kchaos(results: Path, *args: str, env: dict[str, str] | None = None,
           timeout: float = 600, user: str | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "harness", "--results-dir", str(results), *args]
    if user is not None:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "300", **(env or {})})


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The CLI's error line (it may follow the live progress table on the same line)."""
    lines = re.findall(r"kchaos: [^\n]*", done.stderr)
    assert len(lines) == 1, done.stderr[-3000:]
    return str(lines[0])


def test_no_engine_exits_254_at_once(tmp_path: Path) -> None:
    missing = f"unix://{tmp_path}/no-engine.sock"
    done = kchaos(tmp_path / "results", "run", "--platform", "docker",
                  env={"DOCKER_HOST": missing}, timeout=60)
    assert done.returncode == 254
    assert f"no Docker engine answers at {missing}" in one_line(done)
    assert not (tmp_path / "results").exists()  # refused before a run folder


@pytest.mark.docker
def test_no_permission_on_the_socket_exits_254(engine: docker.DockerClient,
                                               tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to become a user without the engine")
    socket_path = "/var/run/docker.sock"
    if not os.path.exists(socket_path) or os.stat(socket_path).st_mode & 0o006:
        pytest.skip(f"{socket_path} is open to everyone here: no permission to lose")
    tmp_path.chmod(0o777)
    done = kchaos(tmp_path / "results", "run", "--platform", "docker", user="65534",
                  env={"DOCKER_HOST": f"unix://{socket_path}", "HOME": str(tmp_path)},
                  timeout=120)
    assert done.returncode == 254, done.stderr[-2000:]
    assert "no permission to use the Docker engine" in one_line(done)


@pytest.mark.docker
def test_an_image_build_that_fails_exits_255_with_its_log(engine: docker.DockerClient,
                                                           tmp_path: Path) -> None:
    # A base no registry has: the broker image's build fails at FROM.
    done = kchaos(tmp_path, "run", "--platform", "docker", "--time-limit", "20",
                  env={"KCHAOS_BASE_IMAGE": "kchaos-no-such-base:none"}, timeout=300)
    assert done.returncode == 255
    line = one_line(done)
    assert "building kchaos-kafka" in line and "failed" in line and "see /" in line
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert not engine.containers.list(all=True, filters={"label": f"kchaos.run={run_dir.name}"})


class SocketProxy:
    """A unix socket forwarding to the engine's; `cut()` makes the engine vanish for
    whoever talks to it through here (connections reset, the socket gone)."""

    def __init__(self, path: Path, upstream: str) -> None:
        self.path, self.upstream = path, upstream
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(64)
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            engine.connect(self.upstream)
            with self.lock:
                self.open += [client, engine]
            for a, b in ((client, engine), (engine, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self.server.close()
        self.path.unlink(missing_ok=True)
        with self.lock:
            for s in self.open:
                s.close()


@pytest.mark.docker
def test_engine_gone_mid_run_exits_255_without_hanging(engine: docker.DockerClient,
                                                       tmp_path: Path) -> None:
    proxy = SocketProxy(tmp_path / "engine.sock", "/var/run/docker.sock")
    results = tmp_path / "results"
    argv = [sys.executable, "-m", "harness", "--results-dir", str(results), "run",
            "--platform", "docker", "--profile", "kill", "--time-limit", "30"]
    run = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           cwd=ROOT, env={**os.environ, "COLUMNS": "300",
                                          "DOCKER_HOST": f"unix://{proxy.path}"})
    run_dir = None
    try:
        deadline = time.monotonic() + 400
        while time.monotonic() < deadline:  # until a pod has written its trace: mid-run
            dirs = [p for p in results.iterdir() if p.is_dir()] if results.exists() else []
            if dirs and list(dirs[0].glob("pods/*/trace.jsonl")):
                run_dir = dirs[0]
                break
            assert run.poll() is None, run.communicate()[1][-3000:]
            time.sleep(1)
        assert run_dir is not None, "the run never got its pods up"
        proxy.cut()
        _, stderr = run.communicate(timeout=400)  # never a hang
        assert run.returncode == 255, stderr[-3000:]
        lines = re.findall(r"kchaos: [^\n]*", stderr)
        assert len(lines) == 1 and "harness failed" in lines[0], stderr[-3000:]
        assert (run_dir / "history.jsonl").exists()  # what was collected is kept
        # The run's own processes (its check's Spark) are stopped though the teardown failed
        alive = [r for r in load_records(run_dir / "pids.json") if is_same_process(r)]
        assert not alive, f"left behind: {alive}"
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
        for folder in results.iterdir() if results.exists() else []:
            if folder.is_dir():  # the harness could not: its engine was gone
                cleanup_run(engine, folder.name)
