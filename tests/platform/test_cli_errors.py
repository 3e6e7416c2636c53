"""Bad input gets one line that says what to do, and exit code 254."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _kchaos(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True, text=True, timeout=60, env=env,
    )


def test_unknown_option_exits_254_with_one_line() -> None:
    result = _kchaos("kafka", "up", "--brokers", "x")
    assert result.returncode == 254
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--brokers" in lines[0]


def test_unsupported_cluster_size_exits_254(tmp_path: Path) -> None:
    result = _kchaos("--results-dir", str(tmp_path), "kafka", "up", "--brokers", "2")
    assert result.returncode == 254
    assert "1 or 3" in result.stderr


def test_missing_java_says_what_to_install(tmp_path: Path) -> None:
    # A PATH with python but without java: the broker cannot start, nothing is left behind.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": str(bin_dir)}
    result = _kchaos("--results-dir", str(tmp_path / "r"), "kafka", "up", env=env)
    assert result.returncode == 254
    assert "`java` not found" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_restart_policy_and_broker_profile_on_one_broker_exit_254(tmp_path: Path) -> None:
    for args, says in ((["--restart", "sometimes"], "--restart"),
                       (["--profile", "broker"], "--brokers 3")):
        result = _kchaos("--results-dir", str(tmp_path), "run", *args)
        assert result.returncode == 254, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0]
    assert not any(tmp_path.iterdir()), "nothing written before the run starts"
