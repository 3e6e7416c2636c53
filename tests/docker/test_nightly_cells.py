"""The docker runs CI leaves to the nightly (tests/e2e/test_docker_detection.py): the fixed
worker on the very plans each switch is caught with there (profile, seed, time limit), and
across partitions. Checked here so that neither side drifts from the other."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from harness.nightly import load_matrix
from harness.nightly.engine import platform_of

E2E = Path(__file__).resolve().parents[1] / "e2e" / "test_docker_detection.py"


def e2e_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docker_e2e", E2E)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_fixed_worker_runs_the_e2e_plans_on_docker_every_night() -> None:
    e2e, matrix = e2e_module(), load_matrix(None)
    docker = [c for c in matrix.cells if platform_of(c, matrix) == "docker"]
    for bug in e2e.EXPECTED:
        time_limit = e2e.TIME_LIMIT_S.get(bug, e2e.DEFAULT_TIME_LIMIT_S)
        cells = [c for c in docker if c.profile == bug and not c.bugs
                 and c.seed == int(e2e.SEED)]
        assert cells, f"no nightly cell runs the fixed worker on {bug}'s docker plan"
        (cell,) = cells
        assert cell.setting("time_limit_s") == float(time_limit), bug
    assert any(c.profile == "partition" and not c.bugs for c in docker)


def test_switches_caught_on_docker_only_in_the_nightly_have_a_cell() -> None:
    e2e, matrix = e2e_module(), load_matrix(None)
    docker = [c for c in matrix.cells if platform_of(c, matrix) == "docker"]
    assert e2e.NIGHTLY_ONLY and set(e2e.CAUGHT_IN_CI).isdisjoint(e2e.NIGHTLY_ONLY)
    for bug in e2e.NIGHTLY_ONLY:
        assert any(c.profile == bug and c.bugs == (bug,) for c in docker), bug

