"""What a machine crash would undo on the fault filesystem: per file, the bytes written since
its last fsync; per directory, the entries created, removed or renamed since its last fsync.

The model is POSIX's strict one (as LazyFS and ALICE use): `fsync(file)` makes that file's
data durable, not its name; a create, unlink, mkdir, rmdir or rename is durable once every
directory it changed was fsynced after it. Writes go through to the backing directory at
once (reads see writes); the journal keeps what it needs to put the durable state back:
- data: the first time a block below the file's durable size is overwritten (or cut off by
  a truncate) since the last fsync, its old bytes; and the durable size itself (appends
  past it need no copy: a truncate undoes them). Keyed by the backing inode, so renames
  keep it;
- names: removed files and directories are moved into a trash folder beside the backing
  directory (not deleted) until the removal is durable, so a crash can bring them back.

Not modelled (said so to stay honest): attribute changes (chmod, utimens), paths recorded
inside a directory that is itself renamed later, and rename flags (mfusepy drops them).
"""

from __future__ import annotations

import itertools
import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BLOCK = 4096
MAX_PATHS = 50  # paths a power loss reports (a store has a few dozen files at most)


@dataclass
class FileUndo:
    durable_size: int
    saved: dict[int, bytes] = field(default_factory=dict)  # block index -> durable bytes


@dataclass
class NameOp:
    """One namespace change not yet durable; `dirs` are the directories still to fsync."""

    kind: str  # create, mkdir, unlink, rmdir, rename
    path: str
    dirs: set[str]
    other: str = ""  # rename: the new path
    trash: str = ""  # unlink/rename over a file: where the removed entry waits


def parent(path: str) -> str:
    return os.path.dirname(path.rstrip("/")) or "/"


class Journal:
    """Thread-safe; paths are the filesystem's own (`/a/b`), relative to `backing`."""

    def __init__(self, backing: Path, trash: Path) -> None:
        self.backing = backing
        self.trash = trash
        self.trash.mkdir(parents=True, exist_ok=True)
        self.lock = threading.Lock()
        self._files: dict[int, FileUndo] = {}
        self._names: list[NameOp] = []
        self._seq = itertools.count()

    def real(self, path: str) -> str:
        return str(self.backing) + path if path != "/" else str(self.backing)

    # -- data ----------------------------------------------------------------------------

    def _undo_for(self, fd: int) -> tuple[int, FileUndo]:
        st = os.fstat(fd)
        undo = self._files.get(st.st_ino)
        if undo is None:  # first change since the last fsync: what is there now is durable
            undo = self._files[st.st_ino] = FileUndo(st.st_size)
        return st.st_ino, undo

    def _save(self, fd: int, undo: FileUndo, start: int, end: int) -> None:
        end = min(end, undo.durable_size)
        blocks = [b for b in range(start // BLOCK, (end - 1) // BLOCK + 1)
                  if b not in undo.saved] if start < end else []
        if not blocks:
            return
        # The caller's handle may be write-only (open(path, "w") of an existing file):
        # the old bytes are read through a handle of our own on the same open file.
        reader = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY)
        try:
            for block in blocks:
                offset = block * BLOCK
                undo.saved[block] = os.pread(reader, min(BLOCK, undo.durable_size - offset),
                                             offset)
        finally:
            os.close(reader)

    def before_write(self, fd: int, offset: int, length: int) -> None:
        with self.lock:
            _, undo = self._undo_for(fd)
            self._save(fd, undo, offset, offset + length)

    def before_truncate(self, fd: int, size: int) -> None:
        with self.lock:
            _, undo = self._undo_for(fd)
            self._save(fd, undo, size, undo.durable_size)

    def fsynced(self, fd: int) -> None:
        with self.lock:
            self._files.pop(os.fstat(fd).st_ino, None)

    # -- names ---------------------------------------------------------------------------

    def _trash_path(self) -> str:
        return str(self.trash / f"t{next(self._seq)}")

    def created(self, path: str, kind: str = "create") -> None:
        """After a create, mknod, symlink, link (kind create) or mkdir (kind mkdir)."""
        with self.lock:
            self._names.append(NameOp(kind, path, {parent(path)}))

    def unlink(self, path: str) -> None:
        """Remove a file or symlink, keeping it in the trash until the removal is durable."""
        with self.lock:
            trash = self._trash_path()
            os.rename(self.real(path), trash)
            self._names.append(NameOp("unlink", path, {parent(path)}, trash=trash))

    def rmdir(self, path: str) -> None:
        with self.lock:
            os.rmdir(self.real(path))
            self._names.append(NameOp("rmdir", path, {parent(path)}))

    def rename(self, old: str, new: str) -> None:
        with self.lock:
            trash = ""
            target = self.real(new)
            if os.path.lexists(target) and not os.path.isdir(target):
                trash = self._trash_path()
                os.rename(target, trash)  # the replaced file, back on a crash
            try:
                os.rename(self.real(old), target)
            except OSError:
                if trash:
                    os.rename(trash, target)
                raise
            self._names.append(NameOp("rename", old, {parent(old), parent(new)}, new, trash))

    def dir_fsynced(self, path: str) -> None:
        """Every pending change of `path` is durable; a change whose directories are all
        durable now is final (its trash emptied)."""
        with self.lock:
            keep: list[NameOp] = []
            for op in self._names:
                op.dirs.discard(path)
                if op.dirs:
                    keep.append(op)
                elif op.trash:
                    self._drop_trash(op.trash)
            self._names = keep

    def _drop_trash(self, trash: str) -> None:
        try:
            st = os.lstat(trash)
        except FileNotFoundError:
            return
        self._files.pop(st.st_ino, None)  # its inode number may be reused
        os.unlink(trash)

    # -- crash and clean shutdown -------------------------------------------------------

    def pending(self) -> dict[str, int]:
        with self.lock:
            return {"files": len(self._files), "names": len(self._names),
                    "bytes": sum(len(b) for u in self._files.values() for b in u.saved.values())}

    def power_loss(self) -> dict[str, Any]:
        """Put back the durable state: names undone newest first, then file data. Call
        with the filesystem unmounted (nothing else touches the backing directory).
        Returns the counts and the paths touched (the first MAX_PATHS, sorted): what the
        crash took, for the coverage classes and a person reading the run."""
        with self.lock:
            names = len(self._names)
            touched = {path for op in self._names for path in (op.path, op.other) if path}
            for op in reversed(self._names):
                self._undo_name(op)
            self._names = []
            by_inode = self._inodes()
            files = 0
            for ino, undo in self._files.items():
                path = by_inode.get(ino)
                if path is None:
                    continue  # its creation was undone
                with open(path, "r+b") as f:
                    for block, data in sorted(undo.saved.items()):
                        os.pwrite(f.fileno(), data, block * BLOCK)
                    f.truncate(undo.durable_size)
                files += 1
                touched.add("/" + os.path.relpath(path, self.backing))
            self._files = {}
            shutil.rmtree(self.trash, ignore_errors=True)
            self.trash.mkdir(parents=True, exist_ok=True)
            return {"names_undone": names, "files_rolled_back": files,
                    "paths": sorted(touched)[:MAX_PATHS]}

    def all_durable(self) -> None:
        """A clean unmount: everything written reaches the disk."""
        with self.lock:
            self._names, self._files = [], {}
            shutil.rmtree(self.trash, ignore_errors=True)

    def _undo_name(self, op: NameOp) -> None:
        real = self.real(op.path)
        if op.kind == "create":
            if os.path.lexists(real) and not os.path.isdir(real):
                os.unlink(real)
        elif op.kind == "mkdir":
            shutil.rmtree(real, ignore_errors=True)
        elif op.kind == "rmdir":
            if os.path.isdir(os.path.dirname(real)) and not os.path.lexists(real):
                os.mkdir(real)
        elif op.kind == "unlink":
            if os.path.isdir(os.path.dirname(real)) and not os.path.lexists(real):
                os.rename(op.trash, real)
        elif op.kind == "rename":
            new = self.real(op.other)
            if os.path.lexists(new) and not os.path.lexists(real) and os.path.isdir(
                    os.path.dirname(real)):
                os.rename(new, real)
            if op.trash and not os.path.lexists(new) and os.path.isdir(os.path.dirname(new)):
                os.rename(op.trash, new)

    def _inodes(self) -> dict[int, str]:
        found: dict[int, str] = {}
        for root, _dirs, files in os.walk(self.backing):
            for name in files:
                path = os.path.join(root, name)
                st = os.lstat(path)
                if not os.path.islink(path):
                    found[st.st_ino] = path
        return found
