"""Mounting the fault filesystem from tests (tests/faultfs, tests/worker)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.waiting import wait_until
from faults.faultfs.control import request

REPO = Path(__file__).resolve().parents[2]


def fuse_missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root to mount FUSE"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse"
    if shutil.which("fusermount3") is None:
        return "no fusermount3 (apt-get install fuse3)"
    try:
        import mfusepy  # noqa: F401
    except (ImportError, OSError) as e:
        return f"mfusepy unusable: {e}"
    return None


@dataclass
class Mounted:
    backing: Path
    mnt: Path
    proc: subprocess.Popen[bytes]

    def ask(self, **msg: Any) -> dict[str, Any]:
        return request(str(self.mnt), msg)

    def power_loss(self) -> dict[str, Any]:
        reply = self.ask(cmd="power-loss")
        self.proc.wait(timeout=30)
        return reply


def mount(backing: Path, mnt: Path) -> Mounted:
    proc = subprocess.Popen([sys.executable, "-m", "faults.faultfs", str(backing), str(mnt)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if not wait_until(lambda: os.path.ismount(mnt) or proc.poll() is not None, 15, 0.05) \
            or not os.path.ismount(mnt):
        proc.kill()
        out = proc.communicate()[0].decode(errors="replace")
        raise RuntimeError(f"fault filesystem did not mount: {out}")
    return Mounted(backing, mnt, proc)
