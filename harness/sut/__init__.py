"""Systems under test: `python` (workloads/worker, the default) and, per run, the one
`--sut` names. `open_sut` gives the SUT of a run's configuration."""

from __future__ import annotations

from harness.errors import UsageError
from harness.run.config import RunConfig
from harness.sut.base import PodPaths, PodSettings, SystemUnderTest, refuse_plan
from harness.sut.python import PythonWorker

__all__ = ["PodPaths", "PodSettings", "SystemUnderTest", "open_sut", "refuse_plan"]


def open_sut(config: RunConfig) -> SystemUnderTest:
    if config.sut == "python":
        return PythonWorker()
    raise UsageError(f"--sut {config.sut}: choose python")
