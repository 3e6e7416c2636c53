"""The machine gets in the way: a full disk, a read-only or misplaced results folder.
One line, exit 254, and what was already in the run folder is still there.

A full disk is a tiny tmpfs, and a read-only folder a read-only bind mount, each made in
a private mount namespace (`unshare -m`) that ends with the command: nothing stays
mounted whatever happens to the test."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import REPO, assert_bad_input, files_under, kchaos

sys.path.insert(0, str(REPO / "tests" / "report"))
from synth_run import Spec, make_run

# sh -c SCRIPT sh MOUNTPOINT KCHAOS-ARGS...: mount, then kchaos as the namespace's last act.
FULL_DISK = ('mount -t tmpfs -o size=256k tmpfs "$1" && cp -a "$1.seed/." "$1/" && '
             '(dd if=/dev/zero of="$1/.fill" bs=4k 2>/dev/null; true) && shift && '
             'exec "$@"')
READ_ONLY = 'mount --bind -o ro "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True)
    return probe.returncode == 0


_mount_namespaces = pytest.mark.skipif(
    not _namespaces_work(), reason="needs `unshare -m` (root or user namespaces)"
)


def needs_mounts(test: object) -> object:
    """util-linux's unshare from set-up, then mount namespaces that work here."""
    return pytest.mark.needs("unshare")(_mount_namespaces(test))


def _in_namespace(script: str, mountpoint: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
            str(mountpoint), sys.executable, "-m", "harness", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          cwd=mountpoint.parent,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})


@needs_mounts
def test_report_on_a_full_disk(tmp_path: Path) -> None:
    results = tmp_path / "results"
    seed = Path(f"{results}.seed")
    run_dir = make_run(seed, "run-1", Spec(verdict="invalid"))
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    results.mkdir()
    result = _in_namespace(FULL_DISK, results, "report", str(results / "run-1"))
    line = assert_bad_input(result, "no space left")
    assert "--results-dir" in line
    # The files the run had are untouched (the copy in the namespace is gone with it).
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before
    assert files_under(results) == []  # nothing mounted or written here afterwards


@needs_mounts
def test_run_on_a_full_disk(tmp_path: Path) -> None:
    results = tmp_path / "results"
    Path(f"{results}.seed").mkdir()
    results.mkdir()
    result = _in_namespace(FULL_DISK, results, "--results-dir", str(results), "run",
                           "--time-limit", "10")
    # The run had begun (its progress line is on stderr): the error is its last line.
    assert result.returncode == 254, result.stderr
    assert "Traceback" not in result.stderr
    assert "no space left" in result.stderr.strip().splitlines()[-1]


@needs_mounts
def test_run_into_a_read_only_results_folder(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    result = _in_namespace(READ_ONLY, results, "--results-dir", str(results), "run",
                           "--time-limit", "10")
    assert_bad_input(result, "cannot create a run folder", "writable --results-dir")
    assert files_under(results) == []


@needs_mounts
def test_report_of_a_run_on_a_read_only_disk(tmp_path: Path) -> None:
    results = tmp_path / "results"
    run_dir = make_run(results, "run-1", Spec(verdict="valid"))
    (run_dir / "report.html").unlink(missing_ok=True)
    result = _in_namespace(READ_ONLY, results, "report", str(run_dir))
    assert_bad_input(result, "read-only file system")


@pytest.mark.parametrize("command", [["run", "--time-limit", "10"], ["nightly"],
                                     ["kafka", "up"]])
def test_results_folder_that_is_a_file(tmp_path: Path, command: list[str]) -> None:
    results = tmp_path / "results"
    results.write_text("not a folder")
    result = kchaos("--results-dir", str(results), *command, cwd=tmp_path)
    assert_bad_input(result, str(results))
    assert results.read_text() == "not a folder"
