"""SUT `app`: the user's own Kafka Streams application (docs/your-app.md).

The app hands over its topology through a method returning it (`--app-class
CLASS[#METHOD]`) or through its own main (`--app-main`, default the jar's Main-Class), taken
over at the KafkaStreams constructor by the launcher's Java agent (harness/app/entry.py).
Our launcher (`AppLauncher` in workloads/kstreams, built for the run's Kafka Streams
release) runs it as pods with the run's settings, our listeners and trace, its state
directory on the pod's volume; the same launcher describes the topology (which topics it
reads and writes, and the settings a main built) and runs it as the reference in
TopologyTestDriver for the oracle (checker/oracle).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from harness.app.build import (
    AppJars,
    app_jars,
    bundled_kafka_streams,
    check_app,
    launcher_for,
    provided_artifacts,
)
from harness.app.entry import Entry, resolve_entry
from harness.app.guarantee import GUARANTEE, ChosenGuarantee, choose_guarantee
from harness.app.spec import InputSpec, read_spec
from harness.config.run import RunConfig
from harness.console import err
from harness.errors import UsageError
from harness.kafka.jars import require_java
from harness.sut import kstreams
from harness.sut.base import CONTAINER_APP_DIR, PodImage, PodPaths, PodSettings, refused_for

LAUNCHER_CLASS = "dev.kchaos.kstreams.AppLauncher"
# The release an app runs on unless --kstreams-version says: the newest kchaos has run
# clean. Not the ledger app's pin (4.1.2, for KAFKA-20685): that release keeps a restore-time
# checkpoint through RUNNING, which every app run on it would show as stale-checkpoint.
DEFAULT_VERSION = "4.2.2"
# The record cache's settings, the current one first (it wins where both are set), and its
# size where an app sets neither (Kafka Streams' default, 10 MB).
RECORD_CACHE = ("statestore.cache.max.bytes", "cache.max.bytes.buffering")
KAFKA_STREAMS_CACHE_BYTES = 10 * 1024 * 1024
# How long the app's main may take to build its KafkaStreams (describe, pods, reference).
CAPTURE_TIMEOUT_S = 60.0
REFUSED = refused_for({"worker-hook": kstreams.KAFKA_STREAMS_HAS_NO_HOOK,
                       "ledger": "an app run has no ledger"})


@dataclass(frozen=True)
class TopologyDescription:
    """What the launcher's `describe` says of the app's topology."""

    sources: tuple[str, ...]
    global_sources: tuple[str, ...]
    sinks: tuple[str, ...]
    dynamic_sinks: bool
    source_patterns: tuple[str, ...]
    stores: tuple[str, ...]
    internal: tuple[str, ...] = ()  # repartition topics, without the application id prefix
    global_stores: tuple[str, ...] = ()

    @staticmethod
    def from_json(doc: Mapping[str, object]) -> TopologyDescription:
        def names(key: str) -> tuple[str, ...]:
            value = doc.get(key) or []
            return tuple(str(v) for v in value) if isinstance(value, list) else ()

        return TopologyDescription(names("sources"), names("global_sources"), names("sinks"),
                                   bool(doc.get("dynamic_sinks")), names("source_patterns"),
                                   names("stores"), names("internal"), names("global_stores"))

    @property
    def not_applicable(self) -> str | None:
        """Why the oracle cannot judge this topology from its description, if it cannot."""
        if self.dynamic_sinks:
            return "the topology chooses its output topics per record (TopicNameExtractor)"
        if self.source_patterns:
            return f"the topology reads topics by pattern ({', '.join(self.source_patterns)})"
        if not self.sinks:
            return "the topology writes to no output topic"
        return None


class UserApp:
    name = "app"
    refused_faults: Mapping[str, str] = REFUSED
    not_applicable: Mapping[str, str] = {}
    watches_state_dirs = True

    @classmethod
    def from_config(cls, config: RunConfig) -> UserApp:
        assert config.app is not None and config.input_spec is not None  # validate() says so
        spec = read_spec(Path(config.input_spec))
        check_app(config.app)
        own: tuple[Path, ...] = ()
        named: str | None = None
        if not (config.app_class or config.app_main or spec.app_class or spec.app_main):
            # the main is in the app's own jar's Main-Class, or its start script
            jars = app_jars(config.app)
            own, named = jars.own, jars.main
        entry = resolve_entry(config.app_class, config.app_main, config.app_args, spec, own,
                              named)
        app = cls(config.app, entry, config.kstreams_version or DEFAULT_VERSION, spec,
                  (*config.streams_config, *kstreams.store_settings(config)),
                  config.guarantee)
        kstreams.require_served(app.version)
        kstreams.require_store_settings(config, app.version)
        # --guarantee against --streams-config: said before the run folder exists
        choose_guarantee(config.guarantee, app.run_config, spec.config, {})
        return app

    def __init__(self, app: str, entry: Entry | str, version: str, spec: InputSpec,
                 run_config: tuple[str, ...] = (),
                 given_guarantee: str | None = None) -> None:
        """`run_config`: the run's own Kafka Streams settings (--streams-config and what its
        store settings stand for), given after the spec's; `given_guarantee`: the run's
        --guarantee, None when not given (the app's own then, harness/app/guarantee.py)."""
        tree = kstreams.generation(version)  # bad input: before a run folder exists
        if tree is not kstreams.GENERATIONS[0]:
            first = ".".join(map(str, kstreams.GENERATIONS[0].first))
            raise UsageError(f"--sut app runs on Kafka Streams {first} or later (the launcher "
                             f"uses its current API); give --kstreams-version {first}.0 or newer")
        check_app(app)
        self.app, self.version = app, version
        self.entry = entry if isinstance(entry, Entry) else Entry(app_class=entry)
        self.spec = spec  # read once: the run's workload sends and judges by it
        self.run_config = run_config
        self.streams_config = (*spec.config, *run_config)  # the spec's first, the run's win
        self.given_guarantee = given_guarantee
        self._classpath: tuple[str, ...] | None = None
        self._description: TopologyDescription | None = None
        self._app_config: dict[str, str] = {}
        self._agent: str | None = None
        self.dropped: tuple[str, ...] = ()  # the app's dependencies the launcher provides
        self.bundled: tuple[str, ...] = ()  # the app's jars with Kafka Streams in them
        self.logging: tuple[str, ...] = ()  # the app's SLF4J bindings, used in place of ours

    @property
    def app_class(self) -> str:
        """The entry's name (the oracle's and the report's)."""
        return self.entry.name

    def prepare(self) -> None:
        require_java()
        launcher = kstreams.build(self.version)
        jars: AppJars = app_jars(self.app)
        launcher_jars, bindings = launcher_for(launcher.jars, jars)
        self.logging = tuple(a.name for a in bindings)  # the app's binding, not a second
        provided = provided_artifacts(launcher_jars[1:])
        kept = jars.classpath(provided)
        self.dropped = tuple(a.name for a in jars.dropped(provided))
        self.bundled = tuple(j.name for j in bundled_kafka_streams(kept))
        if self.bundled:
            err.print(f"[yellow]warning[/]: {', '.join(self.bundled)} bundles Kafka Streams' own "
                      f"classes; the run uses Kafka Streams {self.version}'s (the launcher's "
                      f"jars come first on the classpath)", highlight=False, soft_wrap=True)
        if jars.jvm_options:
            err.print(f"[yellow]warning[/]: the start script's JVM options "
                      f"({' '.join(jars.jvm_options)}) are not used: the pods run with the "
                      f"run's", highlight=False, soft_wrap=True)
        self._agent = str(launcher.jars[0])
        self._classpath = (*(str(j) for j in launcher_jars), *(str(j) for j in kept))
        self._description = self._describe()

    @property
    def classpath(self) -> tuple[str, ...]:
        if self._classpath is None:
            self.prepare()
        assert self._classpath is not None
        return self._classpath

    @property
    def description(self) -> TopologyDescription:
        if self._description is None:
            self.prepare()
        assert self._description is not None
        return self._description

    @property
    def app_config(self) -> dict[str, str]:
        """The settings the app's main built (secrets hidden); empty for a method."""
        _ = self.description
        return self._app_config

    def jvm_options(self, agent: str | None = None) -> list[str]:
        """The launcher's Java agent, for a main (it takes over the KafkaStreams)."""
        if not self.entry.is_main:
            return []
        _ = self.classpath
        return [f"-javaagent:{agent or self._agent}"]

    def launcher_args(self) -> list[str]:
        return [*self.entry.launcher_args(),
                "--capture-timeout-ms", str(int(CAPTURE_TIMEOUT_S * 1000))]

    def guarantee(self) -> ChosenGuarantee:
        """The guarantee the pods run with and whose choice it is (harness/app/guarantee.py):
        the app's own as its main built it when described, else Kafka Streams' default,
        unless the run or the spec says otherwise."""
        return choose_guarantee(self.given_guarantee, self.run_config, self.spec.config,
                                self.app_config)

    def record_cache(self) -> tuple[int, str]:
        """The record cache's size in bytes the pods run with, and whose choice it is: the
        run's --streams-config (or the spec's config), else the app's main, else Kafka
        Streams' default. Never the run's own: an app runs with the cache it is deployed with
        (the oracle compares what a cached app promises)."""
        said = {k.strip(): v.strip() for k, _, v in (s.partition("=") for s in self.streams_config)}
        for settings, whose in ((said, "the run's --streams-config"),
                                (self.app_config, "the app's")):
            for key in RECORD_CACHE:
                if key in settings:
                    try:
                        return int(str(settings[key]).strip()), whose
                    except ValueError:
                        raise UsageError(f"{key}={settings[key]}: the record cache's size is a "
                                         f"number of bytes") from None
        return KAFKA_STREAMS_CACHE_BYTES, "Kafka Streams' default"

    def ran_with(self) -> dict[str, object]:
        """How the pods were configured where kchaos leaves it to the app, and whose choice
        each was: run.json's, meta.json's and results.json's `ran_with`."""
        cache, cache_chosen_by = self.record_cache()
        return {**self.guarantee().to_json(),
                "record_cache_bytes": cache, "record_cache_chosen_by": cache_chosen_by}

    def summary(self) -> dict[str, object]:
        """What the run's meta.json (and so the report) says of the app."""
        return {"app": self.app, "entry": self.entry.to_json(), "kstreams_version": self.version,
                "app_config": self.app_config, **self.ran_with(),
                "sources": list(self.description.sources), "sinks": list(self.description.sinks),
                "dropped_dependencies": list(self.dropped),
                "bundles_kafka_streams": list(self.bundled),
                "logging_binding": list(self.logging)}

    def _describe(self) -> TopologyDescription:
        result = subprocess.run(
            [require_java(), *self.jvm_options(), "-cp", ":".join(self.classpath),
             LAUNCHER_CLASS, "describe", *self.launcher_args(),
             *[arg for c in self.streams_config for arg in ("--config", c)]],
            capture_output=True, text=True, timeout=CAPTURE_TIMEOUT_S + 60,
        )
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["no output"])[-1]
            if not last.startswith("kchaos-app: ") and self.entry.is_main:
                last = (f"{self.entry.name} ended (exit {result.returncode}) before building a "
                        f"KafkaStreams; its last line: {last}")
            raise UsageError(f"{self._flag()}: {last.removeprefix('kchaos-app: ')}")
        try:
            doc = json.loads(result.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError) as exc:
            raise UsageError(f"the launcher's description of {self.app_class} is not JSON "
                             f"({exc}): rebuild with `make setup`") from exc
        config = doc.get("app_config") or {}
        self._app_config = {str(k): str(v) for k, v in config.items()}
        return TopologyDescription.from_json(doc)

    def _flag(self) -> str:
        if self.entry.is_main:
            return f"--app-main {self.entry.app_main}"
        return f"--app-class {self.entry.app_class}"

    def command(self, settings: PodSettings, pod: str, paths: PodPaths) -> list[str]:
        return self._java(require_java(), ":".join(self.classpath), self.jvm_options(),
                          settings, pod, paths)

    def pod_image(self) -> PodImage:
        return PodImage("jvm", tuple(Path(j) for j in self.classpath))

    def container_command(self, settings: PodSettings, pod: str, paths: PodPaths) -> list[str]:
        agent = f"{CONTAINER_APP_DIR}/{Path(self.classpath[0]).name}"
        return self._java("java", f"{CONTAINER_APP_DIR}/*", self.jvm_options(agent), settings,
                          pod, paths)

    def _java(self, java: str, classpath: str, options: list[str], settings: PodSettings,
              pod: str, paths: PodPaths) -> list[str]:
        """The pod's command: the chosen guarantee as its --guarantee (what an app that sets
        none runs with; an app's own goes over it); the run's --guarantee also as the last
        --streams-config, over the app's and the spec's."""
        chosen = self.guarantee()
        settings = replace(settings, guarantee=chosen.guarantee)
        config = (*self.streams_config,
                  *((f"{GUARANTEE}={chosen.guarantee}",) if chosen.overrides_app else ()))
        extra = [arg for setting in config for arg in ("--streams-config", setting)]
        return [java, "-Xms64m", "-Xmx384m", *options, "-cp", classpath, LAUNCHER_CLASS, "pod",
                *self.launcher_args(), *settings.argv(pod, paths), *extra]

    def env(self) -> dict[str, str]:
        return {}
