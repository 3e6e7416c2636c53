"""The workload of a run: the topics it makes, the input it sends, what is collected for the
check. Two: the ledger (events against accounts, judged by the ledger checks; on Kafka
Streams with `--oracle`, by the differential oracle too) and any app's (`--sut app`: an
input spec's records, judged by the oracle). `open_workload` gives a run's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from checker.collect import CollectFigures, RawTopics, TopicNames, collect
from checker.oracle.reference import OracleSettings
from faults.context import GlobalTopic
from harness.app.spec import InputSpec
from harness.app.traffic import AppLoad
from harness.config.run import RunConfig
from harness.config.suts import SUT_KINDS
from harness.errors import UsageError
from harness.history import History, LoadCounters
from harness.run.accounts import AccountsTopic
from harness.run.topics import create_topics, create_topics_named
from harness.run.traffic import LoadClient
from harness.sut.app import UserApp
from harness.sut.base import SystemUnderTest
from workloads.ledger.contract import ACCOUNTS_TOPIC, INPUT_TOPIC, OUTPUT_TOPIC

LEDGER_APP_CLASS = "dev.kchaos.kstreams.LedgerApp"
# Ledger output fields that the reference cannot reproduce: the input's position (the test
# driver has one partition per topic, its own offsets) and the global table's version at the
# join (a matter of when the global thread caught up).
LEDGER_IGNORED_FIELDS = ("partition", "offset", "global_version")


class Load(Protocol):
    counters: LoadCounters

    def run(self, duration_s: float, stop: threading.Event) -> None: ...
    def close(self, timeout_s: float = 30.0) -> None: ...


class Workload(Protocol):
    name: str

    @property
    def global_topic(self) -> GlobalTopic | None:
        """What the nemesis's global-table faults disturb (None: the workload has none)."""
        ...

    def setup(self, bootstrap: str, replication: int) -> None:
        """Create the topics and send what must be there before the pods start."""
        ...

    def lag_topics(self) -> tuple[str, ...]:
        """The input topics the group's progress is measured on."""
        ...

    def rate_topics(self) -> Mapping[str, tuple[str, ...]]:
        """Topics whose end offsets the load phase samples into the history (`topic-progress`
        ops, with the group's lag) for the report's rates: {"in": ..., "out": ...}; empty
        when the report has better (the ledger's acks and traced commit offsets)."""
        ...

    def load(self, bootstrap: str) -> Load: ...

    def background(self) -> list[Callable[[threading.Event], None]]:
        """Work beside the load until its stop event (the ledger's account updates)."""
        ...

    def collect(self, run_dir: Path, bootstrap: str, meta: dict[str, Any]) -> CollectFigures: ...

    def ran_with(self) -> Mapping[str, Any]:
        """How the pods were configured where the run left it to the system under test,
        and whose choice each was (an app's guarantee and record cache); empty where the
        run's settings are all there is (the ledger). Known once the SUT is prepared."""
        ...

    def close(self) -> None: ...


class LedgerWorkload:
    name = "ledger"

    def __init__(self, config: RunConfig, history: History, sut: SystemUnderTest) -> None:
        self.config, self.history, self.sut = config, history, sut
        self.global_topic: AccountsTopic | None = None

    def setup(self, bootstrap: str, replication: int) -> None:
        c = self.config
        create_topics(bootstrap, c.partitions, replication, windowed=c.windows is not None)
        self.global_topic = AccountsTopic(bootstrap, self.history, c.accounts, c.seed)
        self.global_topic.publish_all()

    def lag_topics(self) -> tuple[str, ...]:
        return (INPUT_TOPIC,)

    def rate_topics(self) -> Mapping[str, tuple[str, ...]]:
        return {}

    def load(self, bootstrap: str) -> Load:
        c = self.config
        return LoadClient(bootstrap, self.history, c.seed, c.accounts, c.duplicate_fraction,
                          c.rate)

    def background(self) -> list[Callable[[threading.Event], None]]:
        return [self.global_topic.bump_periodically] if self.global_topic else []

    def oracle(self) -> OracleSettings | None:
        """The ledger app judged by the oracle too (`--oracle`): its reference is LedgerApp's
        topology, from the jar the pods run."""
        classpath = getattr(self.sut, "built", None)
        if not self.config.oracle or classpath is None:
            return None
        return OracleSettings(classpath=tuple(classpath.classpath.split(":")),
                              app_class=LEDGER_APP_CLASS, sinks=(OUTPUT_TOPIC,),
                              ignore_json_fields=LEDGER_IGNORED_FIELDS)

    def collect(self, run_dir: Path, bootstrap: str, meta: dict[str, Any]) -> CollectFigures:
        windows = self.config.windows
        if windows is not None:  # the window checks read the geometry the pods ran
            meta = {**meta, "windows": windows.to_json()}
        topics = TopicNames(windowed=windows is not None)
        oracle = self.oracle()
        if oracle is None:
            return collect(run_dir, bootstrap, self.config.application_id, meta, topics=topics)
        raw = RawTopics(inputs=(INPUT_TOPIC, ACCOUNTS_TOPIC), outputs=(OUTPUT_TOPIC,))
        return collect(run_dir, bootstrap, self.config.application_id,
                       {**meta, "oracle": oracle.to_json()}, topics=topics, raw=raw)

    def ran_with(self) -> Mapping[str, Any]:
        return {}

    def close(self) -> None:
        if self.global_topic is not None:
            self.global_topic.close()


class AppWorkload:
    name = "app"
    global_topic: GlobalTopic | None = None

    def __init__(self, config: RunConfig, history: History, sut: SystemUnderTest) -> None:
        assert isinstance(sut, UserApp), "an app run's pods are the user's app"
        self.config, self.history = config, history
        self.sut: UserApp = sut
        self.spec: InputSpec = sut.spec
        self._load: AppLoad | None = None

    def _inputs(self) -> tuple[str, ...]:
        described = self.sut.description
        given = [t.name for t in self.spec.topics]
        return tuple(dict.fromkeys([*given, *described.sources, *described.global_sources]))

    def setup(self, bootstrap: str, replication: int) -> None:
        described = self.sut.description
        read = {*described.sources, *described.global_sources}
        unread = [t.name for t in self.spec.topics if t.name not in read]
        if unread:
            raise UsageError(f"{self.spec.path}: the topology of {self.sut.app_class} does not "
                             f"read {unread[0]!r} (it reads {', '.join(sorted(read))})")
        unwritten = [t for t in self.spec.compare.declared if t not in described.sinks]
        if unwritten:
            raise UsageError(f"{self.spec.path}: compare names {unwritten[0]!r}, which the "
                             f"topology of {self.sut.app_class} does not write (it writes "
                             f"{', '.join(described.sinks) or 'nothing'})")
        partitions = {t.name: t.partitions for t in self.spec.topics}
        wanted = {name: partitions.get(name, self.spec.sink_partitions) for name in self._inputs()}
        wanted.update({name: self.spec.sink_partitions for name in described.sinks})
        create_topics_named(bootstrap, wanted, replication)
        self._load = AppLoad(bootstrap, self.history, self.spec, self.config.seed,
                             self.config.rate)
        self._load.send_first()

    def lag_topics(self) -> tuple[str, ...]:
        """The sources and the repartition topics: a group whose sources are all committed
        may still have a repartition topic's records to aggregate."""
        described = self.sut.description
        return (*described.sources,
                *(f"{self.config.application_id}-{t}" for t in described.internal))

    def rate_topics(self) -> Mapping[str, tuple[str, ...]]:
        described = self.sut.description
        return {"in": tuple(t.name for t in self.spec.topics), "out": described.sinks}

    def load(self, bootstrap: str) -> Load:
        assert self._load is not None, "setup first"
        return self._load

    def background(self) -> list[Callable[[threading.Event], None]]:
        return []

    def oracle(self) -> OracleSettings:
        return OracleSettings(
            classpath=self.sut.classpath, app_class=self.sut.app_class,
            sinks=self.sut.description.sinks,
            ignore_json_fields=self.spec.compare.ignore_json_fields,
            not_applicable=self.sut.description.not_applicable,
            config=self.sut.streams_config,
            entry=tuple(self.sut.launcher_args()), jvm_options=tuple(self.sut.jvm_options()),
            stores=(*self.sut.description.stores, *self.sut.description.global_stores),
            grows=self.spec.compare.grows, every_key=self.spec.compare.every_key,
            record_cache_bytes=self.sut.record_cache()[0],
        )

    def collect(self, run_dir: Path, bootstrap: str, meta: dict[str, Any]) -> CollectFigures:
        raw = RawTopics(inputs=self._inputs(), outputs=self.sut.description.sinks)
        doc = {**meta, "workload": "app", "oracle": self.oracle().to_json(),
               "input_spec": str(self.spec.path), "guarantee": self.sut.guarantee().guarantee,
               "app": self.sut.summary()}
        return collect(run_dir, bootstrap, self.config.application_id, doc, topics=None,
                       raw=raw)

    def ran_with(self) -> Mapping[str, Any]:
        return self.sut.ran_with()

    def close(self) -> None:
        pass  # the load's producer is closed by the run with the load


def open_workload(config: RunConfig, history: History, sut: SystemUnderTest) -> Workload:
    if SUT_KINDS[config.sut].user_app:
        return AppWorkload(config, history, sut)
    return LedgerWorkload(config, history, sut)
