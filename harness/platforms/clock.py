"""The clock shim under the pods of a plan with a clock fault (faults/clock.py): built here
from clock_shim.c with the C compiler (scripts/system-packages.txt), once per source, into
the kchaos cache; preloaded into each pod with the path of the pod's clock file.

Why not libfaketime (Debian bookworm's 0.9.10): under it Python 3.11's `time.sleep` fails
with EINVAL whatever the offset, `+0` included (its clock_nanosleep wrapper shifts an
absolute CLOCK_MONOTONIC deadline by the faked wall clock even with
FAKETIME_DONT_FAKE_MONOTONIC; fixed upstream in 0.9.11, not in Debian 12), so the worker
cannot run under it; the JVM does. The shim fakes the wall clock alone and nothing else
(docs/faults.md#clock)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from faults.clock import CLOCK_FILE
from harness.errors import UsageError

SHIM_SOURCE = Path(__file__).with_name("clock_shim.c")
SHIM_NAME = "libkchaosclock.so"
CONTAINER_SHIM = f"/kchaos/clock/{SHIM_NAME}"  # where the docker platform mounts it


def _cache() -> Path:
    return Path(os.environ.get("KCHAOS_CACHE") or Path.home() / ".cache" / "kchaos") / "clock"


def clock_shim() -> Path:
    """The built shim (built now if this source was never built); UsageError when no C
    compiler can build it."""
    source = SHIM_SOURCE.read_bytes()
    target = _cache() / hashlib.sha256(source).hexdigest()[:12] / SHIM_NAME
    if target.exists():
        return target
    compiler = shutil.which("cc")
    if compiler is None:
        raise UsageError("clock faults need a C compiler for their clock shim: apt-get "
                         "install gcc libc6-dev (scripts/system-packages.txt), or a "
                         "profile without them")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    result = subprocess.run(
        [compiler, "-O2", "-shared", "-fPIC", "-o", str(partial), str(SHIM_SOURCE), "-ldl"],
        capture_output=True, text=True)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"the clock shim does not build here ({last[:160]}): apt-get "
                         "install gcc libc6-dev")
    partial.replace(target)
    return target


def require_clock_shim() -> None:
    clock_shim()


def clock_env(shim: str, pod_dir: str) -> dict[str, str]:
    """A pod's environment for the shim: `shim` and `pod_dir` as the pod sees them."""
    return {"LD_PRELOAD": shim, "KCHAOS_CLOCK_FILE": f"{pod_dir}/{CLOCK_FILE}"}


def with_clock_shim(spec: dict[str, Any], shim: Path) -> dict[str, Any]:
    """A pod container's spec (docker_specs.pod_container_spec) with the shim mounted and
    preloaded, its clock file in the pod's folder (mounted at POD_MOUNT)."""
    from harness.platforms.docker_specs import POD_MOUNT

    env = {**spec.get("environment", {}), **clock_env(CONTAINER_SHIM, POD_MOUNT)}
    volumes = {**spec["volumes"], str(shim): {"bind": CONTAINER_SHIM, "mode": "ro"}}
    return {**spec, "environment": env, "volumes": volumes}
