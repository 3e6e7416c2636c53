"""SUT `python`: the Python streams worker of workloads/worker (the default)."""

from __future__ import annotations

import sys
from collections.abc import Mapping

from harness.run.config import RunConfig
from harness.sut.base import PodImage, PodPaths, PodSettings

WORKER_MODULE = "workloads.worker"


class PythonWorker:
    name = "python"
    refused_faults: Mapping[str, str] = {}
    not_applicable: Mapping[str, str] = {}
    watches_state_dirs = False  # the worker traces its own checkpoint operations
    version: str | None = None  # not Kafka Streams

    @classmethod
    def from_config(cls, config: RunConfig) -> PythonWorker:
        return cls()

    def prepare(self) -> None:
        """Nothing to build: the worker runs from the sources with the harness's Python."""

    def command(self, settings: PodSettings, pod: str, paths: PodPaths) -> list[str]:
        return [sys.executable, "-m", WORKER_MODULE, *settings.argv(pod, paths)]

    def env(self) -> dict[str, str]:
        return {"PYTHONUNBUFFERED": "1"}

    def pod_image(self) -> PodImage:
        return PodImage("worker")

    def container_command(self, settings: PodSettings, pod: str, paths: PodPaths) -> list[str]:
        return settings.argv(pod, paths)  # the worker image's entrypoint is the worker
