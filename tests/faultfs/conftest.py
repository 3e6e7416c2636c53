"""A fault filesystem mounted in a temporary folder, unmounted whatever the test did."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faultfs.mounting import Mounted, fuse_missing, mount


@pytest.fixture
def faultfs(tmp_path: Path) -> Iterator[Mounted]:
    reason = fuse_missing()
    if reason:
        pytest.skip(reason)
    m = mount(tmp_path / "state", tmp_path / "state.mnt")
    try:
        yield m
    finally:
        if m.proc.poll() is None:
            m.proc.terminate()
            try:
                m.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                m.proc.kill()
                m.proc.wait()
        subprocess.run(["fusermount3", "-u", "-z", str(m.mnt)], capture_output=True)
        assert not os.path.ismount(m.mnt), "the fault filesystem stayed mounted"
