"""scripts/docker-engine.sh: idempotent, and `down` never stops an engine `up` did not
start. Each test points KCHAOS_ENGINE_DIR at its own folder, so the PID file of the engine
the session runs on is never touched."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
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


# -- `with CMD`: what make test runs its broker/Spark/docker tier under -------------------

FAKE_DOCKERD = """#!/usr/bin/env bash
# A stand-in dockerd: "answers" (docker info) while it runs, stops on SIGTERM.
trap 'rm -f "$FAKE/running"; exit 0' TERM
touch "$FAKE/running"
while true; do sleep 0.1; done
"""

FAKE_DOCKER = """#!/usr/bin/env bash
# A stand-in docker CLI: info answers while the fake dockerd runs; one container and one
# network labelled kchaos.run are "left behind" until removed.
echo "$*" >>"$FAKE/calls"
case "$1" in
  info) [[ -f "$FAKE/running" ]] ;;
  ps) [[ -f "$FAKE/removed" ]] || echo c0ffee ;;
  network) [[ "$2" == ls ]] && { [[ -f "$FAKE/removed" ]] || echo beef; } ; true ;;
  rm) touch "$FAKE/removed" ;;
  *) true ;;
esac
"""


def fake_engine(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("dockerd", FAKE_DOCKERD), ("docker", FAKE_DOCKER),
                       ("python", "#!/bin/sh\necho \"$*\" >>\"$FAKE/images\"\n")):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE": str(tmp_path),
            "KCHAOS_PYTHON": str(bin_dir / "python"), "DOCKER_HOST": ""}


def test_with_runs_the_command_where_no_engine_can_be_had(tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to become an unprivileged user")
    tmp_path.chmod(0o777)
    done = engine_script("with", "sh", "-c", "echo ran; exit 7", state=tmp_path / "state",
                         user="65534", env={"DOCKER_HOST": f"unix://{tmp_path}/none.sock"})
    assert done.returncode == 7 and done.stdout.strip() == "ran"  # the command's own code
    assert "the docker tests skip" in done.stderr


def test_with_starts_builds_runs_sweeps_and_stops_its_dockerd(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root may start a dockerd: `with` would skip to the command")
    env = fake_engine(tmp_path)
    try:
        done = engine_script("with", "sh", "-c", "test -f \"$FAKE/running\" && exit 3",
                             state=tmp_path / "state", env=env)
    finally:  # a failing `with` must not leave the fake dockerd looping
        pid_file = tmp_path / "state" / "dockerd.pid"
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert done.returncode == 3, done.stderr  # the command ran with the engine up
    assert "-m harness.platforms.docker_images" in (tmp_path / "images").read_text()
    assert "left behind, removed: container c0ffee" in done.stderr
    assert "rm -f -v c0ffee" in (tmp_path / "calls").read_text()
    assert "down (dockerd" in done.stderr and not (tmp_path / "running").exists()
    assert not (tmp_path / "state" / "dockerd.pid").exists()


def test_with_leaves_an_engine_it_did_not_start(tmp_path: Path) -> None:
    env = fake_engine(tmp_path)
    (tmp_path / "running").touch()  # someone else's engine answers
    done = engine_script("with", "true", state=tmp_path / "state", env=env)
    assert done.returncode == 0, done.stderr
    assert "already running" in done.stderr
    assert "down (dockerd" not in done.stderr and "rm -f" not in (tmp_path / "calls").read_text()


def test_with_without_a_command_is_bad_input(tmp_path: Path) -> None:
    done = engine_script("with", state=tmp_path)
    assert done.returncode == 254 and "usage:" in done.stderr


def test_with_a_dockerd_that_cannot_start_exits_255_without_the_command(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root may start a dockerd: `with` would skip to the command")
    env = fake_engine(tmp_path)
    (tmp_path / "bin" / "dockerd").write_text("#!/bin/sh\necho 'failed to start: no cgroups'\n"
                                              "exit 1\n")
    done = engine_script("with", "sh", "-c", "touch \"$FAKE/ran\"", state=tmp_path / "state",
                         env=env)
    assert done.returncode == 255
    assert "dockerd exited at start: failed to start: no cgroups" in done.stderr
    assert not (tmp_path / "ran").exists() and not (tmp_path / "images").exists()


def test_with_runs_the_command_when_the_images_cannot_be_built(tmp_path: Path) -> None:
    env = fake_engine(tmp_path)
    (tmp_path / "running").touch()  # an engine answers
    (tmp_path / "bin" / "python").write_text("#!/bin/sh\nexit 255\n")  # the build fails
    done = engine_script("with", "sh", "-c", "exit 4", state=tmp_path / "state", env=env)
    assert done.returncode == 4  # the command ran; its code is the verdict
    assert "the images could not be built: the docker tests will fail" in done.stderr
