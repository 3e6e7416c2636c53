"""The rules of single run settings that take more than a bound (a release, a switch, a
pair's shape) and the checks of settings that need other parts of kchaos (a mutant's
catalog, the brokers a protocol needs), apart from the table of settings
(harness/config/run.py), which reads them."""

from __future__ import annotations

from typing import Protocol

from harness.config.platforms import PLATFORMS
from harness.config.protocol import STREAMS, broker_refusal
from harness.config.settings import Rule
from harness.config.suts import SUT_KINDS, names_with
from harness.errors import UsageError


class Given(Protocol):
    """The settings the checks below read (a RunConfig: this module is below it)."""

    @property
    def sut(self) -> str: ...
    @property
    def platform(self) -> str: ...
    @property
    def group_protocol(self) -> str: ...
    @property
    def bootstrap(self) -> str | None: ...
    @property
    def kafka_version(self) -> str | None: ...


def known_bugs() -> tuple[str, ...]:
    """The worker's switches, read from its registry (a constant list; no runtime import
    of the worker's machinery)."""
    from workloads.worker.bugs import BUG_NAMES

    return tuple(BUG_NAMES)


def kafka_release() -> Rule:
    """A release kchaos can start brokers of (harness/kafka/jars.py says which)."""

    def wants() -> str:
        from harness.kafka.jars import OLDEST_BROKER

        return (f"{'.'.join(map(str, OLDEST_BROKER))} or newer, its jars fetched from Maven "
                "Central")

    def refuse(version: str) -> str | None:
        from harness.kafka.jars import kafka_release_refusal

        return kafka_release_refusal(version)

    def shown(version: str) -> str:
        from harness.kafka.jars import release_shown

        return release_shown(version)

    return Rule(wants, refuse, shown)


# --standbys is at most --pods too (`validate`: a rule of two settings).
STANDBYS = Rule(lambda: "0 to --pods",
                lambda n: None if n >= 0 else "must be 0 to --pods")
BROKERS = Rule(lambda: "1 or 3",
               lambda n: None if n in (1, 3) else "kchaos runs clusters of 1 or 3 nodes")
FRACTION = Rule(lambda: "in [0, 1)", lambda x: None if 0 <= x < 1 else "must be in [0, 1)")
# Only the pair's shape: the key and value are Kafka Streams' to judge.
KEY_VALUE = Rule(lambda: "",
                 lambda s: None if "=" in s.strip("=") else "give KEY=VALUE[,KEY=VALUE]")


def check_mutant(key: str, config: Given, python_worker: bool) -> None:
    if not python_worker:
        raise UsageError(f"mutant {key}: mutants are of the Python worker (--sut python), "
                         f"not of --sut {config.sut}")
    if PLATFORMS[config.platform].needs_engine:
        raise UsageError(f"mutant {key}: its worker tree is built on this machine; run it "
                         "with --platform local")
    from harness.mutants.catalog import find_mutant

    find_mutant(key)


def check_group_protocol(config: Given) -> None:
    """Under the streams protocol: a SUT that speaks it, brokers of a release that hold streams
    groups (the Kafka Streams release is the SUT's to judge: harness/sut, open_sut)."""
    if config.group_protocol != STREAMS:
        return
    if not SUT_KINDS[config.sut].streams_protocol:
        raise UsageError(f"--group-protocol streams needs {names_with('streams_protocol')}: "
                         f"--sut {config.sut} keeps the classic protocol")
    if config.bootstrap is None:  # a --bootstrap cluster is taken as it is
        from harness.kafka.jars import kafka_version

        reason = broker_refusal(config.kafka_version or kafka_version())
        if reason is not None:
            raise UsageError(reason)
