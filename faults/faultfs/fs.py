"""The fault filesystem's operations: a passthrough to a backing directory that tells the
journal about every change (so a power loss can undo what was not made durable) and
applies the nemesis' delay and failure rules first."""

from __future__ import annotations

import errno
import os
import time
from typing import Any

from mfusepy import FuseOSError, Operations

from faults.faultfs.journal import Journal
from faults.faultfs.rules import Rule, verdict

_STAT_KEYS = ("st_gid", "st_mode", "st_nlink", "st_size", "st_uid", "st_ino")
# With use_ns, mfusepy reads the times from these keys, in nanoseconds (st_mtime_ns and
# the like it skips: the mount showed every time as 1970).
_TIME_KEYS = {"st_atime": "st_atime_ns", "st_mtime": "st_mtime_ns", "st_ctime": "st_ctime_ns"}


class FaultFs(Operations):
    use_ns = True

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.rules: tuple[Rule, ...] = ()
        self.counts: dict[str, int] = {}  # operations delayed or failed, by op

    def _real(self, path: str) -> str:
        return self.journal.real(path)

    def _gate(self, op: str, *paths: str) -> None:
        rules = self.rules
        if not rules:
            return
        delay_ms, error = verdict(rules, op, *paths)
        if delay_ms or error:
            self.counts[op] = self.counts.get(op, 0) + 1
        if delay_ms:
            time.sleep(delay_ms / 1000)
        if error is not None:
            raise FuseOSError(error)

    # -- reading ----------------------------------------------------------------------

    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        st = os.fstat(fh) if fh is not None else os.lstat(self._real(path))
        return {**{k: getattr(st, k) for k in _STAT_KEYS},
                **{k: getattr(st, ns) for k, ns in _TIME_KEYS.items()}}

    def access(self, path: str, amode: int) -> int:
        if not os.access(self._real(path), amode):
            raise FuseOSError(errno.EACCES)
        return 0

    def readdir(self, path: str, fh: int) -> list[str]:
        return [".", "..", *os.listdir(self._real(path))]

    def readlink(self, path: str) -> str:
        return os.readlink(self._real(path))

    def statfs(self, path: str) -> dict[str, int]:
        sv = os.statvfs(self._real(path))
        return {k: getattr(sv, k) for k in ("f_bavail", "f_bfree", "f_blocks", "f_bsize",
                                             "f_favail", "f_ffree", "f_files", "f_flag",
                                             "f_frsize", "f_namemax")}

    def open(self, path: str, flags: int) -> int:
        fd = os.open(self._real(path), flags & ~os.O_TRUNC)
        if flags & os.O_TRUNC:
            self._truncate_fd(path, fd, 0)
        return fd

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(fh, size, offset)

    def release(self, path: str, fh: int) -> int:
        os.close(fh)
        return 0

    def flush(self, path: str, fh: int) -> int:
        return 0

    # -- data ---------------------------------------------------------------------------

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        self._gate("write", path or "")
        self.journal.before_write(fh, offset, len(data))
        return os.pwrite(fh, data, offset)

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        if fh is not None:
            self._truncate_fd(path, fh, length)
            return 0
        fd = os.open(self._real(path), os.O_RDWR)
        try:
            self._truncate_fd(path, fd, length)
        finally:
            os.close(fd)
        return 0

    def _truncate_fd(self, path: str, fd: int, length: int) -> None:
        self._gate("truncate", path or "")
        self.journal.before_truncate(fd, length)
        os.ftruncate(fd, length)

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        # The backing disk is never synced: durability is the journal's model, not the host's.
        self._gate("fsync", path or "")
        self.journal.fsynced(fh)
        return 0

    def fsyncdir(self, path: str, datasync: int, fh: int) -> int:
        self._gate("fsync", path or "")
        self.journal.dir_fsynced(path)
        return 0

    # -- names ----------------------------------------------------------------------------

    def create(self, path: str, mode: int, fi: int | None = None) -> int:
        self._gate("create", path)
        fd = os.open(self._real(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        self.journal.created(path)
        return fd

    def mknod(self, path: str, mode: int, dev: int) -> int:
        self._gate("create", path)
        os.mknod(self._real(path), mode, dev)
        self.journal.created(path)
        return 0

    def mkdir(self, path: str, mode: int) -> int:
        self._gate("mkdir", path)
        os.mkdir(self._real(path), mode)
        self.journal.created(path, "mkdir")
        return 0

    def symlink(self, target: str, source: str) -> int:
        self._gate("create", target)
        os.symlink(source, self._real(target))
        self.journal.created(target)
        return 0

    def link(self, target: str, source: str) -> int:
        self._gate("create", target)
        os.link(self._real(source), self._real(target))
        self.journal.created(target)
        return 0

    def unlink(self, path: str) -> int:
        self._gate("unlink", path)
        self.journal.unlink(path)
        return 0

    def rmdir(self, path: str) -> int:
        self._gate("unlink", path)
        self.journal.rmdir(path)
        return 0

    def rename(self, old: str, new: str) -> int:
        self._gate("rename", old, new)
        self.journal.rename(old, new)
        return 0

    # -- attributes (passed through, not journaled) ---------------------------------------

    def chmod(self, path: str, mode: int) -> int:
        os.chmod(self._real(path), mode)
        return 0

    def chown(self, path: str, uid: int, gid: int) -> int:
        os.chown(self._real(path), uid, gid, follow_symlinks=False)
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        if times is None:
            os.utime(self._real(path), follow_symlinks=False)
        else:
            os.utime(self._real(path), ns=times, follow_symlinks=False)
        return 0
