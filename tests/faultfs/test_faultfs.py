"""The fault filesystem mounted for real: reads see writes, a power loss keeps exactly what
was made durable, rules delay and fail operations, and nothing stays mounted."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest

from tests.faultfs.mounting import Mounted, mount
from workloads.worker.checkpoint import _fsync_dir as fsync_path  # a file's, here

pytestmark = [pytest.mark.fuse, pytest.mark.needs("fusermount3")]


def _write(path: Path, data: bytes, sync: bool) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        if sync:
            os.fsync(f.fileno())


def test_reads_see_writes(faultfs: Mounted) -> None:
    f = faultfs.mnt / "d" / "f"
    f.parent.mkdir()
    _write(f, b"hello " * 5000, sync=False)
    with open(f, "r+b") as h:
        h.seek(6)
        h.write(b"WORLD!")
    assert f.read_bytes()[:12] == b"hello WORLD!"
    assert (faultfs.backing / "d" / "f").read_bytes() == f.read_bytes()
    os.rename(f, f.with_name("g"))
    assert os.listdir(f.parent) == ["g"]


def test_times_are_the_files_own(faultfs: Mounted) -> None:
    """A directory's mtime is what Kafka Streams' state cleaner ages task directories by: a
    mount that said 1970 let it delete any unlocked one at its next pass."""
    d = faultfs.mnt / "0_1"
    d.mkdir()
    _write(d / ".checkpoint", b"0\n", sync=False)
    seen, real = (d).stat(), (faultfs.backing / "0_1").stat()
    assert seen.st_mtime_ns == real.st_mtime_ns and abs(time.time() - seen.st_mtime) < 60
    assert (seen.st_atime_ns, seen.st_ctime_ns) == (real.st_atime_ns, real.st_ctime_ns)


def test_power_loss_keeps_fsynced_data_and_drops_the_rest(faultfs: Mounted) -> None:
    m = faultfs.mnt
    _write(m / "synced", b"kept", sync=True)
    fsync_path(m)
    with open(m / "synced", "ab") as f:
        f.write(b" and lost")  # appended, never fsynced
    _write(m / "unsynced", b"lost", sync=False)
    fsync_path(m)  # the name is durable, its data is not
    (m / "newdir").mkdir()
    _write(m / "newdir" / "f", b"x", sync=True)  # newdir itself is not durable
    assert faultfs.ask(cmd="status")["pending"]["files"] >= 2
    faultfs.power_loss()
    b = faultfs.backing
    assert (b / "synced").read_bytes() == b"kept"
    assert (b / "unsynced").read_bytes() == b""
    assert not (b / "newdir").exists()
    again = mount(faultfs.backing, faultfs.mnt)  # the "reboot": the same state through FUSE
    faultfs.proc = again.proc
    assert (m / "synced").read_bytes() == b"kept"


def test_rename_without_directory_fsync_is_undone(faultfs: Mounted) -> None:
    m = faultfs.mnt
    _write(m / "ckpt", b"old", sync=True)
    fsync_path(m)
    _write(m / "ckpt.tmp", b"new", sync=True)
    os.replace(m / "ckpt.tmp", m / "ckpt")  # no directory fsync: not durable
    os.unlink(m / "ckpt")  # nor this
    faultfs.power_loss()
    assert sorted(os.listdir(faultfs.backing)) == ["ckpt"]
    assert (faultfs.backing / "ckpt").read_bytes() == b"old"


def test_durable_rename_survives(faultfs: Mounted) -> None:
    m = faultfs.mnt
    _write(m / "ckpt.tmp", b"new", sync=True)
    os.replace(m / "ckpt.tmp", m / "ckpt")
    fsync_path(m)
    faultfs.power_loss()
    assert os.listdir(faultfs.backing) == ["ckpt"]
    assert (faultfs.backing / "ckpt").read_bytes() == b"new"


@pytest.mark.parametrize(("error", "code"), [("EIO", errno.EIO), ("ENOSPC", errno.ENOSPC)])
def test_errors_hit_matching_paths_only(faultfs: Mounted, error: str, code: int) -> None:
    m = faultfs.mnt
    faultfs.ask(cmd="rules", rules=[{"ops": ["write", "fsync"], "pattern": "*.checkpoint*",
                                     "error": error}])
    with pytest.raises(OSError) as failed:
        _write(m / ".checkpoint.tmp", b"0\n0\n", sync=True)
    assert failed.value.errno == code
    _write(m / "other", b"fine", sync=True)
    faultfs.ask(cmd="rules", rules=[])
    _write(m / ".checkpoint.tmp", b"0\n0\n", sync=True)
    assert set(faultfs.ask(cmd="status")["gated"]) == {"write"}  # fsync never reached


def test_delay_slows_matching_operations(faultfs: Mounted) -> None:
    m = faultfs.mnt
    _write(m / "a", b"1", sync=False)
    faultfs.ask(cmd="rules", rules=[{"ops": ["rename"], "pattern": "/a", "delay_ms": 300}])
    started = time.monotonic()
    os.rename(m / "a", m / "b")
    # A lower bound only: the rule must have held the rename back.
    assert time.monotonic() - started >= 0.3
    assert faultfs.ask(cmd="status")["gated"] == {"rename": 1}


def test_bad_rules_are_refused_and_change_nothing(faultfs: Mounted) -> None:
    with pytest.raises(RuntimeError, match="rule ops"):
        faultfs.ask(cmd="rules", rules=[{"ops": ["chmod"]}])
    assert faultfs.ask(cmd="status")["rules"] == []


def test_sigterm_unmounts_and_keeps_everything(faultfs: Mounted) -> None:
    _write(faultfs.mnt / "f", b"unsynced but cleanly unmounted", sync=False)
    faultfs.proc.terminate()
    faultfs.proc.wait(timeout=15)
    assert not os.path.ismount(faultfs.mnt)
    assert (faultfs.backing / "f").read_bytes() == b"unsynced but cleanly unmounted"
