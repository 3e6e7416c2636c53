"""The declared system packages (scripts/system-packages.txt) as the suite sees them.

A test that runs a system command says so with `@pytest.mark.needs("iptables")`. Where the
command is missing, the test skips with the reason if set-up may not install it here (not
root, or no apt-get), and fails if it could have: a missing install step must be red on
the machine that has it, not green because CI's machine kept what earlier work installed.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIST = REPO / "scripts" / "system-packages.txt"
INSTALLER = REPO / "scripts" / "install-system-packages.sh"


@dataclass(frozen=True)
class Requirement:
    group: str
    package: str
    probe: str  # a command on PATH, or PYTHON:MODULE
    purpose: str

    def present(self) -> bool:
        if ":" in self.probe:
            python, module = self.probe.split(":", 1)
            # Only this interpreter's imports are knowable without running another one.
            return shutil.which(python) is not None and (
                importlib.util.find_spec(module) is not None)
        return shutil.which(self.probe) is not None


def declared(path: Path = LIST) -> dict[str, Requirement]:
    """Each probe of the list and what provides it."""
    found: dict[str, Requirement] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split(maxsplit=3)
        if len(fields) != 4:
            raise ValueError(f"{path}:{number}: want GROUP PACKAGE PROBE PURPOSE: {line!r}")
        found[fields[2]] = Requirement(*fields)
    return found


def could_install() -> bool:
    """Whether `make setup` installs missing packages here (root with apt-get)."""
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


def problem(probe: str) -> tuple[str, bool] | None:
    """Why the probe's command is missing, and whether that is a failure (set-up could
    have installed it) rather than a reason to skip; None when it is there."""
    requirement = declared().get(probe)
    if requirement is None:
        return (f"{probe} is not declared in {LIST.relative_to(REPO)}: add it", True)
    if requirement.present():
        return None
    if could_install():
        return (f"{probe} (package {requirement.package}) is declared in "
                f"{LIST.relative_to(REPO)} and this machine could install it, yet it is "
                f"missing: run `bash {INSTALLER.relative_to(REPO)} {requirement.group}` "
                f"(`make setup` does)", True)
    return (f"needs {probe} for {requirement.purpose}: as root, apt-get install "
            f"{requirement.package}", False)
