"""Systems under test: what runs in the pods. Each is a module here implementing
`SystemUnderTest` (base.py), named with what it offers in harness/config/suts.py and loaded by
its entry in `LOADERS`; `open_sut` builds a run's from its settings."""

from __future__ import annotations

from collections.abc import Callable

from harness.config.protocol import refuse_kstreams
from harness.config.run import RunConfig
from harness.sut.base import PodPaths, PodSettings, SystemUnderTest, refuse_plan

__all__ = ["LOADERS", "PodPaths", "PodSettings", "SystemUnderTest", "open_sut", "refuse_plan"]


# Each loader imports its class only when a run needs it (the Kafka Streams SUTs bring the
# Maven and app-build machinery along); typed, so mypy checks each against the protocol.
def _python() -> type[SystemUnderTest]:
    from harness.sut.python import PythonWorker

    return PythonWorker


def _kstreams() -> type[SystemUnderTest]:
    from harness.sut.kstreams import KafkaStreamsApp

    return KafkaStreamsApp


def _app() -> type[SystemUnderTest]:
    from harness.sut.app import UserApp

    return UserApp


LOADERS: dict[str, Callable[[], type[SystemUnderTest]]] = {
    "python": _python, "kstreams": _kstreams, "app": _app,
}


def open_sut(config: RunConfig) -> SystemUnderTest:
    """The run's SUT, from its settings (validate() has checked the name and which options
    it takes); UsageError for what only the SUT can judge (a release, an app, a release
    that cannot take the run's rebalance protocol)."""
    sut = LOADERS[config.sut]().from_config(config)
    refuse_kstreams(config.group_protocol, sut.version)
    return sut
