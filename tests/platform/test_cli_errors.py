"""Bad options, as a new user would type them: one line that says what to do, exit 254,
nothing written in the working directory and no run folder started."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from cli_helpers import assert_bad_input, files_under, kchaos


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    """An empty working directory: a bad command must leave it empty."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    return folder


def test_unknown_option_exits_254_with_one_line(cwd: Path) -> None:
    assert_bad_input(kchaos("kafka", "up", "--brokers", "x", cwd=cwd), "--brokers")


def test_unsupported_cluster_size_exits_254(tmp_path: Path, cwd: Path) -> None:
    result = kchaos("--results-dir", str(tmp_path / "r"), "kafka", "up", "--brokers", "2",
                    cwd=cwd)
    assert_bad_input(result, "1 or 3")


def _path_without(tmp_path: Path, *tools: str) -> dict[str, str]:
    """A PATH with python (and what else the run needs) but without `tools`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("python", "java", "mvn"):
        found = sys.executable if name == "python" else _which(name)
        if name not in tools and found and not (bin_dir / name).exists():
            (bin_dir / name).symlink_to(found)
    return {"PATH": str(bin_dir)}


def _which(name: str) -> str | None:
    import shutil

    return shutil.which(name)


def test_missing_java_says_what_to_install(tmp_path: Path, cwd: Path) -> None:
    # A PATH with python but without java: the broker cannot start, nothing is left behind.
    env = _path_without(tmp_path, "java")
    result = kchaos("--results-dir", str(tmp_path / "r"), "kafka", "up", env=env, cwd=cwd)
    assert_bad_input(result, "`java` not found")
    assert files_under(cwd) == []


def test_run_without_java_is_bad_input(tmp_path: Path, cwd: Path) -> None:
    env = _path_without(tmp_path, "java")
    results = tmp_path / "r"
    result = kchaos("--results-dir", str(results), "run", "--time-limit", "10", env=env,
                    cwd=cwd)
    assert_bad_input(result, "`java` not found")
    assert files_under(cwd) == []
    assert files_under(results) == []  # found before a run folder is made


def test_missing_maven_with_an_empty_jar_cache(tmp_path: Path, cwd: Path) -> None:
    env = {**_path_without(tmp_path, "mvn"), "KCHAOS_CACHE": str(tmp_path / "cache")}
    assert_bad_input(kchaos("kafka", "fetch", env=env, cwd=cwd), "`mvn` not found", "Maven")
    assert files_under(cwd) == []


@pytest.mark.parametrize(("args", "says"), [
    (["serve", "--port", "99999"], ["--port", "99999"]),
    (["serve", "--port", "http"], ["--port"]),
    (["run", "--bootstrap", "notahost:1"], ["notahost:1", "kchaos kafka up"]),
    (["run", "--bootstrap", "localhost"], ["HOST:PORT"]),
    (["run", "--bootstrap", "127.0.0.1:70000"], ["HOST:PORT"]),
    (["run", "--profile", "nosuch"], ["--profile nosuch", "KAFKA-7672"]),
    (["run", "--bugs", "KAFKA-7762"], ["--bugs KAFKA-7762", "known switches"]),
    (["run", "--time-limit", "5"], ["--time-limit"]),
    (["run", "--pods", "0"], ["--pods"]),
    (["run", "--brokers", "2"], ["--brokers"]),
    (["run", "--guarantee", "exactly_once"], ["--guarantee"]),
    (["run", "--platform", "k8s"], ["--platform"]),
    (["run", "--seed", "one"], ["--seed"]),
    (["run", "--rate", "-1"], ["--rate"]),
    (["frobnicate"], ["frobnicate"]),
    (["nightly", "--budget", "2x"], ["--budget"]),
    # an option of another command (--results-dir goes before the command): its own help
    (["nightly", "--results-dir", "r"], ["--results-dir", "`kchaos nightly --help`"]),
    (["nightly", "--budget", "0"], ["--budget"]),
    (["nightly", "--matrix", "absent.yaml"], ["cannot read the matrix"]),
    (["repro", "absent-run"], ["absent-run"]),
    (["repro", ".", "--times", "0"], ["--times"]),
    (["check", "absent-run"], ["history"]),
    (["report", "absent-run"], ["absent-run"]),
])
def test_bad_options(tmp_path: Path, cwd: Path, args: list[str], says: list[str]) -> None:
    results = tmp_path / "results"
    assert_bad_input(kchaos("--results-dir", str(results), *args, cwd=cwd, timeout=60), *says)
    # Nothing written: not in the working directory, no run folder, no nightly folder.
    assert files_under(cwd) == []
    assert files_under(results) == []


def test_serve_on_a_busy_port(tmp_path: Path, cwd: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        result = kchaos("--results-dir", str(tmp_path), "serve", "--port", port, cwd=cwd)
    assert_bad_input(result, f"127.0.0.1:{port}")


def test_help_is_not_an_error(cwd: Path) -> None:
    result = kchaos("run", "--help", cwd=cwd)
    assert result.returncode == 0 and "--bootstrap" in result.stdout
    assert os.listdir(cwd) == []


@pytest.mark.parametrize(("args", "says"), [
    (["--restart", "sometimes"], "--restart"),
    (["--profile", "broker"], "--brokers 3"),
])
def test_bad_restart_policy_and_broker_profile_on_one_broker_exit_254(
    tmp_path: Path, cwd: Path, args: list[str], says: str
) -> None:
    result = kchaos("--results-dir", str(tmp_path / "r"), "run", *args, cwd=cwd)
    assert_bad_input(result, says)
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
