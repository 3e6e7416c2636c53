"""Systems under test: `python` (workloads/worker, the default), `kstreams` (the ledger
app on Apache Kafka Streams, workloads/kstreams) and `app` (the user's own Kafka Streams
app, harness/sut/app.py). `open_sut` gives a run's SUT."""

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
        from harness.sut.kstreams import GENERATIONS, KafkaStreamsApp, default_version

        sut = KafkaStreamsApp(config.kstreams_version or default_version(),
                              config.streams_config)
        if config.oracle and sut.generation is not GENERATIONS[0]:
            first = ".".join(map(str, GENERATIONS[0].first))
            raise UsageError(f"--oracle runs the reference with the launcher of Kafka Streams "
                             f"{first} or later: give --kstreams-version {first}.0 or newer")
        return sut
    if config.sut == "app":
        from pathlib import Path

        from harness.app.spec import read_spec
        from harness.sut.app import DEFAULT_VERSION, UserApp

        assert config.app is not None and config.input_spec is not None  # validate() says so
        spec = read_spec(Path(config.input_spec))
        app_class = config.app_class or spec.app_class
        if app_class is None:
            raise UsageError(f"--sut app needs --app-class, or app_class in {spec.path}")
        return UserApp(config.app, app_class, config.kstreams_version or DEFAULT_VERSION, spec,
                       (*spec.config, *config.streams_config))
    raise UsageError(f"--sut {config.sut}: choose python, kstreams or app")
