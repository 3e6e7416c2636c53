"""SUT `python`: the Python streams worker of workloads/worker (the default)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from harness.config.run import RunConfig
from harness.sut.base import PodImage, PodPaths, PodSettings

WORKER_MODULE = "workloads.worker"


class PythonWorker:
    name = "python"
    refused_faults: Mapping[str, str] = {}
    not_applicable: Mapping[str, str] = {}
    watches_state_dirs = False  # the worker traces its own checkpoint operations
    version: str | None = None  # not Kafka Streams

    def __init__(self, mutant: str | None = None) -> None:
        self.mutant = mutant  # a key of harness/mutants/catalog.json: its tree runs instead

    @classmethod
    def from_config(cls, config: RunConfig) -> PythonWorker:
        return cls(config.mutant)

    def prepare(self) -> None:
        """Nothing to build: the worker runs from the sources with the harness's Python."""

    def command(self, settings: PodSettings, pod: str, paths: PodPaths) -> list[str]:
        # A mutant's tree comes first on PYTHONPATH; -P keeps the working directory (the
        # repository, often) from coming before it.
        isolated = ["-P"] if self.mutant is not None else []
        return [sys.executable, *isolated, "-m", WORKER_MODULE, *settings.argv(pod, paths)]

    def env(self) -> dict[str, str]:
        env = {"PYTHONUNBUFFERED": "1"}
        if self.mutant is not None:
            from harness.mutants.catalog import find_mutant, mutant_tree

            # First on the path: its `workloads` package shadows the repository's.
            tree = mutant_tree(find_mutant(self.mutant))
            env["PYTHONPATH"] = os.pathsep.join(
                [str(tree), *filter(None, [os.environ.get("PYTHONPATH")])])
        return env

    def pod_image(self) -> PodImage:
        return PodImage("worker")

    def container_command(self, settings: PodSettings, pod: str, paths: PodPaths) -> list[str]:
        return settings.argv(pod, paths)  # the worker image's entrypoint is the worker
