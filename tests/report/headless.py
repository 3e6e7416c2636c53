"""Real headless Chromium for the report tests: dump the DOM after scripts ran, or take a
screenshot. Chromium spawns helpers (zygote, renderer, GPU); it leads its own process
group, so a timeout kills that group by its id and nothing is left behind."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
TIMEOUT_S = 90
# No sandbox (tests may run as root), no network side-channels, no first-run UI.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    # Let plotly's (asynchronous) rendering finish before the DOM is dumped.
    "--virtual-time-budget=10000",
)


def available() -> bool:
    return CHROMIUM.exists() and os.access(CHROMIUM, os.X_OK)


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    profile = tempfile.mkdtemp(prefix="kchaos-chromium-")
    argv = [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    finally:
        _reap_group(proc.pid)
        shutil.rmtree(profile, ignore_errors=True)
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def _reap_group(pgid: int) -> None:
    """Helpers that outlive the browser process (it happens on crashes) die with the group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def dump_dom(page: Path) -> str:
    result = _run(["--dump-dom", page.resolve().as_uri()])
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def screenshot(page: Path, png: Path, size: tuple[int, int] = (1400, 2000)) -> Path:
    result = _run([f"--screenshot={png}", f"--window-size={size[0]},{size[1]}",
                   page.resolve().as_uri()])
    assert result.returncode == 0 and png.exists(), result.stderr[-2000:]
    return png
