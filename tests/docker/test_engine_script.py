"""scripts/docker-engine.sh: idempotent, and `down` never stops an engine `up` did not
start. Each test points KCHAOS_ENGINE_DIR at its own folder, so the PID file of the engine
the session runs on is never touched."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import docker
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "docker-engine.sh"


def engine_script(*args: str, state: Path, env: dict[str, str] | None = None,
                  user: str | None = None) -> subprocess.CompletedProcess[str]:
    argv = ["bash", str(SCRIPT), *args]
    if user is not None:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "KCHAOS_ENGINE_DIR": str(state), **(env or {})})


def test_unknown_command_is_bad_input(tmp_path: Path) -> None:
    done = engine_script("restart", state=tmp_path)
    assert done.returncode == 254 and "usage:" in done.stderr


def test_down_without_an_engine_of_ours_stops_nothing(tmp_path: Path) -> None:
    (tmp_path / "dockerd.pid").write_text(str(os.getpid()))  # a live PID, not a dockerd
    done = engine_script("down", state=tmp_path)
    assert done.returncode == 0 and "nothing of ours" in done.stderr
    assert not (tmp_path / "dockerd.pid").exists()  # the stale record is dropped


def test_status_says_down_where_nothing_answers(tmp_path: Path) -> None:
    done = engine_script("status", state=tmp_path,
                         env={"DOCKER_HOST": f"unix://{tmp_path}/none.sock"})
    assert done.returncode == 3 and done.stdout.strip() == "down"


def test_up_as_a_user_who_may_not_start_one_exits_254(tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to become an unprivileged user")
    tmp_path.chmod(0o777)
    done = engine_script("up", state=tmp_path / "state", user="65534",
                         env={"DOCKER_HOST": f"unix://{tmp_path}/none.sock"})
    assert done.returncode == 254
    assert "only root on Linux may start one" in done.stderr


@pytest.mark.docker
def test_up_uses_the_engine_that_answers_and_down_leaves_it(
    engine: docker.DockerClient, tmp_path: Path
) -> None:
    before = engine.info()["ID"]
    up = engine_script("up", state=tmp_path)
    assert up.returncode == 0 and "already running" in up.stderr
    assert not (tmp_path / "dockerd.pid").exists()  # not ours: nothing recorded
    status = engine_script("status", state=tmp_path)
    assert status.returncode == 0 and "did not start" in status.stdout
    down = engine_script("down", state=tmp_path)
    assert down.returncode == 0 and "nothing of ours" in down.stderr
    assert engine.info()["ID"] == before  # the same engine, still answering
