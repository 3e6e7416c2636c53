"""SUT `app`: the user's own Kafka Streams application (docs/your-app.md).

The app hands over its topology by one convention: a public class with
`public static Topology topology(Properties config)`. Our launcher (`AppLauncher` in
workloads/kstreams, built for the run's Kafka Streams release) runs it as pods with the
run's settings, our listeners and trace, its state directory on the pod's volume; the same
launcher describes the topology (which topics it reads and writes) and runs it as the
reference in TopologyTestDriver for the oracle (checker/oracle).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.app.build import app_jars, check_app
from harness.app.spec import InputSpec, read_spec
from harness.errors import UsageError
from harness.kafka.jars import require_java
from harness.run.config import RunConfig
from harness.sut import kstreams
from harness.sut.base import CONTAINER_APP_DIR, PodImage, PodPaths, PodSettings, refused_for

LAUNCHER_CLASS = "dev.kchaos.kstreams.AppLauncher"
# The release an app runs on unless --kstreams-version says: the newest kchaos has run
# clean. Not the ledger app's pin (4.1.2, for KAFKA-20685): that release keeps a restore-time
# checkpoint through RUNNING, which every app run on it would show as stale-checkpoint.
DEFAULT_VERSION = "4.2.2"
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

    @staticmethod
    def from_json(doc: Mapping[str, object]) -> TopologyDescription:
        def names(key: str) -> tuple[str, ...]:
            value = doc.get(key) or []
            return tuple(str(v) for v in value) if isinstance(value, list) else ()

        return TopologyDescription(names("sources"), names("global_sources"), names("sinks"),
                                   bool(doc.get("dynamic_sinks")), names("source_patterns"),
                                   names("stores"), names("internal"))

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
        app_class = config.app_class or spec.app_class
        if app_class is None:
            raise UsageError(f"--sut app needs --app-class, or app_class in {spec.path}")
        app = cls(config.app, app_class, config.kstreams_version or DEFAULT_VERSION, spec,
                  (*spec.config, *config.streams_config))
        kstreams.require_served(app.version)
        return app

    def __init__(self, app: str, app_class: str, version: str, spec: InputSpec,
                 streams_config: tuple[str, ...] = ()) -> None:
        tree = kstreams.generation(version)  # bad input: before a run folder exists
        if tree is not kstreams.GENERATIONS[0]:
            first = ".".join(map(str, kstreams.GENERATIONS[0].first))
            raise UsageError(f"--sut app runs on Kafka Streams {first} or later (the launcher "
                             f"uses its current API); give --kstreams-version {first}.0 or newer")
        check_app(app)
        self.app, self.app_class, self.version = app, app_class, version
        self.spec = spec  # read once: the run's workload sends and judges by it
        self.streams_config = streams_config
        self._classpath: tuple[str, ...] | None = None
        self._description: TopologyDescription | None = None

    def prepare(self) -> None:
        require_java()
        launcher = kstreams.build(self.version)
        jars = [str(j) for j in app_jars(self.app)]
        self._classpath = (*launcher.classpath.split(":"), *jars)
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

    def _describe(self) -> TopologyDescription:
        result = subprocess.run(
            [require_java(), "-cp", ":".join(self.classpath), LAUNCHER_CLASS, "describe",
             "--app-class", self.app_class,
             *[arg for c in self.streams_config for arg in ("--config", c)]],
            capture_output=True, text=True, timeout=120,
        )
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["no output"])[-1]
            raise UsageError(f"--app-class {self.app_class}: {last.removeprefix('kchaos-app: ')}")
        try:
            return TopologyDescription.from_json(json.loads(result.stdout.strip().splitlines()[-1]))
        except (ValueError, IndexError) as exc:
            raise UsageError(f"the launcher's description of {self.app_class} is not JSON "
                             f"({exc}): rebuild with `make setup`") from exc

    def command(self, settings: PodSettings, pod: str, paths: PodPaths) -> list[str]:
        return self._java(require_java(), ":".join(self.classpath), settings, pod, paths)

    def pod_image(self) -> PodImage:
        return PodImage("jvm", tuple(Path(j) for j in self.classpath))

    def container_command(self, settings: PodSettings, pod: str, paths: PodPaths) -> list[str]:
        return self._java("java", f"{CONTAINER_APP_DIR}/*", settings, pod, paths)

    def _java(self, java: str, classpath: str, settings: PodSettings, pod: str,
              paths: PodPaths) -> list[str]:
        extra = [arg for setting in self.streams_config for arg in ("--streams-config", setting)]
        return [java, "-Xms64m", "-Xmx384m", "-cp", classpath, LAUNCHER_CLASS, "pod",
                "--app-class", self.app_class, *settings.argv(pod, paths), *extra]

    def env(self) -> dict[str, str]:
        return {}

