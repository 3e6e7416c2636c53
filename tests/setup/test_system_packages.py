"""The one declared list of system packages (scripts/system-packages.txt): it names every
command the code runs, the installer and the suite read it alike, and bad usage of the
installer is one line and 254."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from system_packages import INSTALLER, REPO, declared

SOURCES = ("harness", "faults", "checker", "common", "workloads")
# Debian's Essential packages: on every Debian system, minbase images included.
ESSENTIAL = {"bash", "sh", "true", "tar", "kill"}
SUBPROCESS_CALLS = {"run", "Popen", "check_output", "check_call", "call"}
COMMAND_FIRST = {"which", "require_tool", "_command", "quiet"}  # f("cmd", ...)
COMMAND_SECOND = {"in_netns"}  # f(namespace, "cmd", ...)


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _text(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def commands_in(tree: ast.AST) -> set[str]:
    """The literal command names a module runs or looks up on PATH."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name, first = _name(node.func), node.args[0]
        if name in SUBPROCESS_CALLS and isinstance(first, ast.List | ast.Tuple) and first.elts:
            found.add(_text(first.elts[0]) or "")
        elif name in COMMAND_FIRST:
            found.add(_text(first) or "")
        elif name in COMMAND_SECOND and len(node.args) > 1:
            found.add(_text(node.args[1]) or "")
    return found - {""}


def test_every_command_the_code_runs_is_declared() -> None:
    used: dict[str, str] = {}
    for package in SOURCES:
        for path in sorted((REPO / package).rglob("*.py")):
            for command in commands_in(ast.parse(path.read_text(), str(path))):
                used.setdefault(command, str(path.relative_to(REPO)))
    # The scan itself must see the commands we know the code runs.
    assert {"ip", "tc", "iptables", "fusermount3", "mvn", "java"} <= set(used)
    undeclared = {c: where for c, where in used.items()
                  if c not in declared() and c not in ESSENTIAL}
    assert not undeclared, f"add to scripts/system-packages.txt: {undeclared}"


def test_the_list_is_well_formed() -> None:
    requirements = declared()
    assert {r.group for r in requirements.values()} == {"given", "core", "test", "docker"}
    for r in requirements.values():
        assert r.purpose and " " not in r.package


def test_the_installer_and_the_suite_agree_on_what_is_missing() -> None:
    groups = ["given", "core", "test", "docker"]
    done = subprocess.run(["bash", str(INSTALLER), "--check", *groups],
                          capture_output=True, text=True)
    said = {line.split()[2] for line in done.stderr.splitlines() if " missing " in line}
    assert said == {probe for probe, r in declared().items() if not r.present()}
    assert done.returncode == (3 if said else 0)


@pytest.mark.parametrize("args", [[], ["nope"], ["--check", "core", "nope"]])
def test_bad_usage_is_one_line_and_254(args: list[str]) -> None:
    done = subprocess.run(["bash", str(INSTALLER), *args], capture_output=True, text=True)
    assert done.returncode == 254
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("installable", "fatal"), [(True, True), (False, False)])
def test_a_missing_command_fails_where_set_up_could_have_installed_it(
        monkeypatch: pytest.MonkeyPatch, installable: bool, fatal: bool) -> None:
    import system_packages

    gone = system_packages.Requirement("core", "kchaos-gone", "kchaos-no-such-command", "a test")
    monkeypatch.setattr(system_packages, "declared", lambda: {gone.probe: gone})
    monkeypatch.setattr(system_packages, "could_install", lambda: installable)
    found = system_packages.problem(gone.probe)
    assert found is not None and found[1] is fatal
    assert ("install-system-packages.sh core" in found[0]) is fatal
    assert system_packages.problem("undeclared-command") == (
        "undeclared-command is not declared in scripts/system-packages.txt: add it", True)
