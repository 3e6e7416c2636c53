"""The durability model on a plain folder (no FUSE): what a power loss puts back."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from faults.faultfs.journal import BLOCK, Journal


def _journal(tmp_path: Path) -> Journal:
    (tmp_path / "b").mkdir()
    return Journal(tmp_path / "b", tmp_path / "trash")


def _write(j: Journal, path: str, data: bytes, offset: int, create: bool = False) -> None:
    real = j.real(path)
    fd = os.open(real, os.O_RDWR | (os.O_CREAT if create else 0), 0o644)
    try:
        if create:
            j.created(path)
        j.before_write(fd, offset, len(data))
        os.pwrite(fd, data, offset)
    finally:
        os.close(fd)


def _fsync(j: Journal, path: str) -> None:
    fd = os.open(j.real(path), os.O_RDONLY)
    try:
        j.fsynced(fd)
    finally:
        os.close(fd)


def test_overwrites_and_appends_roll_back_to_the_last_fsync(tmp_path: Path) -> None:
    j = _journal(tmp_path)
    _write(j, "/f", b"a" * (3 * BLOCK), 0, create=True)
    _fsync(j, "/f")
    j.dir_fsynced("/")
    _write(j, "/f", b"b" * 10, BLOCK + 5, )
    _write(j, "/f", b"c" * BLOCK, 3 * BLOCK)
    assert j.pending()["files"] == 1
    j.power_loss()
    assert (tmp_path / "b" / "f").read_bytes() == b"a" * (3 * BLOCK)


def test_a_write_only_handle_can_overwrite_a_durable_file(tmp_path: Path) -> None:
    # open(path, "w") of a file already fsynced: FUSE passes a write-only handle and a
    # truncate. The journal must save the old bytes without reading through that handle
    # (EBADF there crash-looped a worker restarting over a left-behind .checkpoint.tmp).
    j = _journal(tmp_path)
    _write(j, "/f", b"a" * (BLOCK + 7), 0, create=True)
    _fsync(j, "/f")
    j.dir_fsynced("/")
    fd = os.open(j.real("/f"), os.O_WRONLY)
    try:
        j.before_truncate(fd, 0)
        os.ftruncate(fd, 0)
        j.before_write(fd, 0, 3)
        os.pwrite(fd, b"new", 0)
    finally:
        os.close(fd)
    j.power_loss()
    assert (tmp_path / "b" / "f").read_bytes() == b"a" * (BLOCK + 7)


def test_a_power_loss_names_the_paths_it_rolled_back(tmp_path: Path) -> None:
    j = _journal(tmp_path)
    _write(j, "/durable", b"a" * BLOCK, 0, create=True)
    _fsync(j, "/durable")
    j.dir_fsynced("/")
    _write(j, "/durable", b"b", 7)  # data since the fsync
    _write(j, "/fresh.checkpoint", b"x", 0, create=True)  # a name never made durable
    undone = j.power_loss()
    assert undone["paths"] == ["/durable", "/fresh.checkpoint"]
    assert undone["files_rolled_back"] == 1 and undone["names_undone"] == 1
    assert j.power_loss()["paths"] == []  # nothing left to lose
    _write(j, "/a", b"a", 0, create=True)
    _fsync(j, "/a")
    j.dir_fsynced("/")
    j.rename("/a", "/b")  # both names change back
    assert j.power_loss()["paths"] == ["/a", "/b"]


def test_unlink_and_rename_come_back_unless_the_directory_was_fsynced(tmp_path: Path) -> None:
    j = _journal(tmp_path)
    for name in ("/keep", "/gone", "/old"):
        _write(j, name, name.encode(), 0, create=True)
        _fsync(j, name)
    j.dir_fsynced("/")
    j.unlink("/keep")
    j.rename("/old", "/gone")  # replaces /gone
    _write(j, "/new", b"x", 0, create=True)
    _fsync(j, "/new")  # data durable, its name not
    j.power_loss()
    b = tmp_path / "b"
    assert sorted(os.listdir(b)) == ["gone", "keep", "old"]
    assert (b / "gone").read_bytes() == b"/gone" and (b / "old").read_bytes() == b"/old"


def test_durable_removal_empties_the_trash(tmp_path: Path) -> None:
    j = _journal(tmp_path)
    _write(j, "/f", b"1", 0, create=True)
    j.dir_fsynced("/")
    j.unlink("/f")
    assert os.listdir(tmp_path / "trash")
    j.dir_fsynced("/")
    assert not os.listdir(tmp_path / "trash")
    j.power_loss()
    assert os.listdir(tmp_path / "b") == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5 * BLOCK), st.binary(min_size=1, max_size=BLOCK * 2),
                          st.booleans()), min_size=1, max_size=12))
def test_power_loss_gives_the_content_at_the_last_fsync(
        writes: list[tuple[int, bytes, bool]]) -> None:
    with tempfile.TemporaryDirectory() as tmp_dir:
        _check_writes(Path(tmp_dir), writes)


def _check_writes(tmp: Path, writes: list[tuple[int, bytes, bool]]) -> None:
    j = _journal(tmp)
    _write(j, "/f", b"", 0, create=True)
    j.dir_fsynced("/")
    model, durable = bytearray(), b""
    for offset, data, sync in writes:
        _write(j, "/f", data, offset)
        if len(model) < offset:
            model.extend(b"\0" * (offset - len(model)))
        model[offset:offset + len(data)] = data
        if sync:
            _fsync(j, "/f")
            durable = bytes(model)
    assert (tmp / "b" / "f").read_bytes() == bytes(model)
    j.power_loss()
    assert (tmp / "b" / "f").read_bytes() == durable
