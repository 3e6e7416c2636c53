"""The `.checkpoint` file, byte-compatible with Kafka Streams' OffsetCheckpoint.

    0                      <- version
    2                      <- number of entries
    topic partition offset <- one line per changelog partition

An offset is that of the last changelog record the store reflects; restoration resumes at
offset + 1. Writes go to a temp file, are fsynced, atomically renamed over the old file and
the directory is fsynced, so a crash leaves either the old or the new file, never a torn one.
"""

from __future__ import annotations

import os
from pathlib import Path

CHECKPOINT_FILE = ".checkpoint"
VERSION = 0

Offsets = dict[tuple[str, int], int]


def offsets_for_trace(offsets: Offsets) -> dict[str, int]:
    """{(topic, p): o} -> {"topic-p": o}, the trace's changelog-partition naming."""
    return {f"{t}-{p}": o for (t, p), o in sorted(offsets.items())}


def read_checkpoint(path: Path) -> Offsets | None:
    """Offsets in the file, or None when there is no file. Malformed -> ValueError."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    lines = text.splitlines()
    if len(lines) < 2 or int(lines[0]) != VERSION:
        raise ValueError(f"bad checkpoint header in {path}")
    count = int(lines[1])
    entries = [ln for ln in lines[2:] if ln.strip()]
    if len(entries) != count:
        raise ValueError(f"checkpoint {path}: expected {count} entries, found {len(entries)}")
    offsets: Offsets = {}
    for ln in entries:
        topic, part, off = ln.split()
        offsets[(topic, int(part))] = int(off)
    return offsets


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs_durable(directory: Path) -> None:
    """mkdir -p, fsyncing the parent of every directory it creates: a directory whose
    creation never reached the disk vanishes in a machine crash, with the checkpoint and
    stores inside it (found with the fault filesystem's power loss)."""
    created: list[Path] = []
    d = directory
    while not d.exists():
        created.append(d)
        d = d.parent
    directory.mkdir(parents=True, exist_ok=True)
    for d in reversed(created):
        _fsync_dir(d.parent)


def write_checkpoint(path: Path, offsets: Offsets) -> None:
    # Negative offsets are never written (Kafka Streams rejects them too): a store with no
    # known changelog position simply has no entry.
    valid = {k: v for k, v in sorted(offsets.items()) if v >= 0}
    body = f"{VERSION}\n{len(valid)}\n" + "".join(f"{t} {p} {o}\n" for (t, p), o in valid.items())
    make_dirs_durable(path.parent)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(body)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def delete_checkpoint(path: Path, durable: bool = True) -> bool:
    """Remove the file, durably (the directory fsynced: a machine crash cannot bring it
    back) unless told otherwise (a mutant); True if there was one."""
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    if durable:
        _fsync_dir(path.parent)
    return True
