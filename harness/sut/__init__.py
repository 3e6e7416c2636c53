"""Systems under test: `python` (workloads/worker, the default) and `kstreams` (the ledger
app on Apache Kafka Streams, workloads/kstreams). `open_sut` gives a run's SUT."""

from __future__ import annotations

from harness.errors import UsageError
from harness.run.config import RunConfig
from harness.sut.base import PodPaths, PodSettings, SystemUnderTest, refuse_plan
from harness.sut.python import PythonWorker

__all__ = ["PodPaths", "PodSettings", "SystemUnderTest", "open_sut", "refuse_plan"]


def open_sut(config: RunConfig) -> SystemUnderTest:
    if config.sut == "python":
        return PythonWorker()
    if config.sut == "kstreams":
        from harness.sut.kstreams import KafkaStreamsApp, default_version

        return KafkaStreamsApp(config.kstreams_version or default_version(),
                               config.streams_config)
    raise UsageError(f"--sut {config.sut}: choose python or kstreams")
