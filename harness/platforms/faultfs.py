"""The fault filesystem under the local pods' volumes (faults/faultfs): one process per pod,
mounted over `<node>/<pod>/state` at `<node>/<pod>/state.mnt`, only in runs whose plan has
a storage fault. The harness keeps reading the backing folder (`volume()`); the pod's
state.dir is the mount.

A power loss kills the pod (the caller does), asks the filesystem to drop everything not
made durable (it unmounts, rolls back and exits), and mounts it again. Unmounting is a
clean shutdown: everything written becomes durable, as on a real disk.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from common.waiting import wait_until
from faults.faultfs.control import request
from harness.errors import HarnessError, UsageError
from harness.procs import ProcessRegistry

MOUNT_TIMEOUT_S = 15.0


def require_faultfs() -> None:
    """Bad input (254) where the fault filesystem cannot be mounted."""
    if not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None:
        raise UsageError("storage faults need FUSE: /dev/fuse and fusermount3 "
                         "(apt-get install fuse3, as `make setup` does as root)")
    try:
        import mfusepy  # noqa: F401
    except (ImportError, OSError) as e:  # OSError: the package is there, libfuse3 is not
        raise UsageError(f"storage faults need mfusepy with libfuse3 ({e}): run `make setup`"
                         ) from None


def mountpoint_of(backing: Path) -> Path:
    return backing.with_name(backing.name + ".mnt")


def unmount(mountpoint: Path) -> None:
    for args in (["-u"], ["-u", "-z"]):
        if subprocess.run(["fusermount3", *args, str(mountpoint)],
                          capture_output=True).returncode == 0:
            return


class FaultFsMounts:
    """The fault filesystems of a run's pods, by pod name."""

    def __init__(self, registry: ProcessRegistry) -> None:
        self.registry = registry
        self._mounted: dict[str, tuple[Path, subprocess.Popen[bytes]]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, pod: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(pod, threading.Lock())

    def mount(self, pod: str, backing: Path, log: Path) -> Path:
        """Mount (if not already) and return the path the pod uses as its state.dir."""
        with self._lock(pod):
            current = self._mounted.get(pod)
            if current is not None and current[1].poll() is None:
                if current[0] == mountpoint_of(backing.resolve()):
                    return current[0]
                self._unmount_locked(pod)
            elif current is not None:  # its process died: a dead mount may be left
                self._mounted.pop(pod, None)
                unmount(current[0])
            return self._mount_locked(pod, backing, log)

    def _mount_locked(self, pod: str, backing: Path, log: Path) -> Path:
        backing = backing.resolve()
        mountpoint = mountpoint_of(backing)
        backing.mkdir(parents=True, exist_ok=True)
        mountpoint.mkdir(parents=True, exist_ok=True)
        popen = self.registry.spawn(
            f"faultfs-{pod}", [sys.executable, "-m", "faults.faultfs", str(backing),
                               str(mountpoint)], log)
        self._mounted[pod] = (mountpoint, popen)
        if not wait_until(lambda: os.path.ismount(mountpoint) or popen.poll() is not None,
                          MOUNT_TIMEOUT_S, interval_s=0.05) or not os.path.ismount(mountpoint):
            self._unmount_locked(pod)
            raise HarnessError(f"the fault filesystem for {pod} did not mount: see {log}")
        return mountpoint

    def unmount(self, pod: str) -> None:
        """A clean shutdown of the pod's filesystem (the pod must be stopped)."""
        with self._lock(pod):
            self._unmount_locked(pod)

    def _unmount_locked(self, pod: str) -> None:
        entry = self._mounted.pop(pod, None)
        if entry is None:
            return
        mountpoint, popen = entry
        if popen.poll() is None:
            try:
                request(str(mountpoint), {"cmd": "unmount"}, timeout_s=30)
            except (OSError, RuntimeError, ValueError):
                unmount(mountpoint)
            self.registry.stop(popen.pid, grace_s=10)
        if os.path.ismount(mountpoint):
            unmount(mountpoint)

    def power_loss(self, pod: str, backing: Path, log: Path) -> dict[str, Any]:
        """Drop what the pod's filesystem holds un-fsynced (the pod is dead), mount again."""
        with self._lock(pod):
            entry = self._mounted.get(pod)
            if entry is None:
                raise HarnessError(f"power-loss: {pod} has no fault filesystem")
            mountpoint, popen = entry
            try:
                reply = request(str(mountpoint), {"cmd": "power-loss"}, timeout_s=120)
            finally:  # whatever it answered, the pod gets a fresh mount (its "reboot")
                self._mounted.pop(pod, None)
                self.registry.stop(popen.pid, grace_s=10)
                if os.path.ismount(mountpoint):
                    unmount(mountpoint)
                self._mount_locked(pod, backing, log)
            return dict(reply.get("undone", {}))

    def set_rules(self, pod: str, rules: list[dict[str, Any]]) -> None:
        with self._lock(pod):
            entry = self._mounted.get(pod)
            if entry is None:
                raise HarnessError(f"{pod} has no fault filesystem (is it running?)")
            request(str(entry[0]), {"cmd": "rules", "rules": rules}, timeout_s=30)

    def teardown(self) -> None:
        for pod in list(self._mounted):
            self.unmount(pod)
