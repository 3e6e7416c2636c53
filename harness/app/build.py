"""The user's app on this machine: `--app` is a jar (a shadow jar too), a Maven project
folder (built with `mvn package`), a Gradle `installDist` folder or a folder of jars
(harness/app/gradle.py) or a Maven coordinate GROUP:ARTIFACT:VERSION (fetched with its
runtime dependencies); a Spring Boot executable jar, given or built by the project, is
unpacked (harness/app/boot.py); the result is the jars the pods and the reference put on their
classpath after the launcher's.

Every dependency is fetched (in Maven's repository layout, so each jar's group and artifact
are known); the classpath leaves out only the artifacts the launcher provides (Kafka
Streams, the clients and what they bring, at the run's release: `provided_artifacts`), so
the app runs on the release the run names and keeps the rest, Kafka's own artifacts
included (connect-json, kafka-streams-examples, kafka-streams-scala with its Scala
library). A jar that bundles Kafka Streams' classes itself (a fat jar) is run with the
launcher's jars first, which win, and said in one line (`bundled_kafka_streams`). An app
that brings its own SLF4J binding (Spring Boot's Logback) keeps it: the launcher's logging
jars step aside (`launcher_for`).

Folders and coordinates are built once into the cache, keyed by what they are made from.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from harness.app.boot import (
    boot_jar_digest,
    check_boot_jar,
    is_boot_jar,
    unpack_boot_jar,
    unpacked_layout,
)
from harness.app.gradle import (
    gradle_project_hint,
    is_gradle_project,
    is_install_folder,
    read_start_script,
    start_script,
)
from harness.errors import UsageError
from harness.kafka.jars import cache_root
from harness.maven import run_maven, sources_digest

COORDINATE = re.compile(r"^[\w.-]+:[\w.-]+:[\w.-]+$")
COMPLETE_MARKER = ".complete"
# A cached build's layout: bumped when it changes, so an old build is not read as a new one.
LAYOUT = "v2"
# A jar file's artifact id: what comes before "-<version>" (versions start with a digit).
ARTIFACT_OF_FILE = re.compile(r"^(?P<artifact>.+?)-\d[^/]*\.jar$")
KAFKA_STREAMS_CLASS = "org/apache/kafka/streams/KafkaStreams.class"
# The launcher's logging (SLF4J routed to Log4j 2, workloads/kstreams/pom.xml): left out of
# the classpath, and so not provided, when the app brings a binding of its own.
LAUNCHER_LOGGING = frozenset({"slf4j-api", "log4j-slf4j2-impl", "log4j-core", "log4j-api"})
# What marks a jar as an SLF4J binding: SLF4J 2's provider service, SLF4J 1's binder.
SLF4J_BINDING_FILES = ("META-INF/services/org.slf4j.spi.SLF4JServiceProvider",
                       "org/slf4j/impl/StaticLoggerBinder.class")
# The pom that fetches a coordinate with its runtime dependencies.
FETCH_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.kchaos</groupId><artifactId>kchaos-app-fetch</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies><dependency>
    <groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version>
  </dependency></dependencies>
</project>
"""


def check_app(app: str) -> None:
    """UsageError unless `--app` names a jar, an app folder or a coordinate (said before a
    run folder exists; building it waits for the run's set-up)."""
    path = Path(app)
    if path.is_file() and path.suffix != ".jar":
        raise UsageError(f"--app {app}: not a jar; give a .jar, a Maven project folder, a "
                         f"Gradle installDist folder or GROUP:ARTIFACT:VERSION")
    if path.is_file() and is_boot_jar(path):
        check_boot_jar(path)
    if path.is_dir():
        folder_kind(path)
    if not path.exists() and not COORDINATE.match(app):
        raise UsageError(f"--app {app}: no such file or folder, and not GROUP:ARTIFACT:VERSION")


def folder_kind(folder: Path) -> str:
    """What an `--app` folder is: `maven` (a pom.xml), `install` (Gradle's installDist:
    bin/ and lib/*.jar) or `jars` (jars in it or in its lib/, the main named by the run)."""
    if (folder / "pom.xml").is_file():
        return "maven"
    if is_install_folder(folder):
        return "install"
    if _folder_jars(folder):
        return "jars"
    if is_gradle_project(folder):
        raise UsageError(gradle_project_hint(folder))
    raise UsageError(f"--app {folder}: a folder with no pom.xml, no installDist layout (bin/, "
                     f"lib/*.jar) and no jars; give a Maven project, a Gradle installDist "
                     f"folder, a folder of jars (with --app-main CLASS), a .jar or "
                     f"GROUP:ARTIFACT:VERSION")


def _folder_jars(folder: Path) -> tuple[Path, ...]:
    return tuple(sorted(folder.glob("*.jar"))) or tuple(sorted(folder.glob("lib/*.jar")))


@dataclass(frozen=True)
class Artifact:
    """One jar of the app's: its file and, for a dependency, its group and artifact id."""

    path: Path
    group: str = ""
    artifact: str = ""

    @property
    def name(self) -> str:
        """GROUP:ARTIFACT, or the artifact alone where only a file name says it."""
        return f"{self.group}:{self.artifact}" if self.group else self.artifact

    @staticmethod
    def of_file(jar: Path) -> Artifact:
        """A jar known by its file name alone (`<artifact>-<version>.jar`, as Gradle's lib/
        names them)."""
        found = ARTIFACT_OF_FILE.match(jar.name)
        return Artifact(jar, "", found.group("artifact") if found else jar.stem)


@dataclass(frozen=True)
class AppJars:
    """The app's own jars (a jar given, a project's build, a coordinate's artifact) and its
    dependencies (a folder's jars are all dependencies, in its start script's order); the
    main and JVM options an installDist's start script names."""

    own: tuple[Path, ...]
    libs: tuple[Artifact, ...] = ()
    main: str | None = None
    jvm_options: tuple[str, ...] = ()

    def classpath(self, provided: frozenset[str]) -> tuple[Path, ...]:
        """The own jars, then every dependency whose artifact the launcher does not provide."""
        return (*self.own, *(a.path for a in self.libs if a.artifact not in provided))

    def dropped(self, provided: frozenset[str]) -> tuple[Artifact, ...]:
        return tuple(a for a in self.libs if a.artifact in provided)


def provided_artifacts(launcher_jars: Iterable[Path]) -> frozenset[str]:
    """The artifact ids of the launcher's jars (its file names are `<artifact>-<version>.jar`):
    Kafka Streams, the clients and what they bring at the run's release, and the launcher's
    own logging and JSON."""
    found = (ARTIFACT_OF_FILE.match(Path(j).name) for j in launcher_jars)
    return frozenset(m.group("artifact") for m in found if m)


def bundled_kafka_streams(jars: Iterable[Path]) -> tuple[Path, ...]:
    """The jars that hold Kafka Streams' own classes (a fat jar's copy)."""
    bundled = []
    for jar in jars:
        try:
            with zipfile.ZipFile(jar) as archive:
                if KAFKA_STREAMS_CLASS in archive.NameToInfo:
                    bundled.append(Path(jar))
        except (OSError, zipfile.BadZipFile):
            continue
    return tuple(bundled)


def slf4j_bindings(jars: Iterable[Artifact]) -> tuple[Artifact, ...]:
    """The jars that are SLF4J bindings (Logback, slf4j-simple, Log4j's own, ...)."""
    found = []
    for jar in jars:
        try:
            with zipfile.ZipFile(jar.path) as archive:
                if any(name in archive.NameToInfo for name in SLF4J_BINDING_FILES):
                    found.append(jar)
        except (OSError, zipfile.BadZipFile):
            continue
    return tuple(found)


def launcher_for(launcher: tuple[Path, ...], jars: AppJars) -> tuple[tuple[Path, ...],
                                                                      tuple[Artifact, ...]]:
    """The launcher's jars (its own first) to put before the app's, and the app's own SLF4J
    bindings other than the launcher's. Where the app brings one, the launcher's logging
    jars (`LAUNCHER_LOGGING`) leave the classpath, and so are not provided: two bindings stop
    a Spring Boot app ("LoggerFactory is not a Logback LoggerContext", and Log4j's
    "log4j-slf4j2-impl cannot be present with log4j-to-slf4j" beside Boot's bridge). The
    app's log is then its own, its configuration (logback.xml, logging.level.*) in force."""
    provided = provided_artifacts(launcher[1:])
    bindings = slf4j_bindings(a for a in jars.libs if a.artifact not in provided)
    if not bindings:
        return launcher, ()
    return (launcher[0], *(j for j in launcher[1:]
                           if Artifact.of_file(j).artifact not in LAUNCHER_LOGGING)), bindings


def app_jars(app: str) -> AppJars:
    """The jars of `--app`, building or fetching it the first time."""
    check_app(app)
    path = Path(app)
    if path.is_file():
        return _boot_layout(path.resolve()) if is_boot_jar(path) else AppJars((path.resolve(),))
    if path.is_dir():
        folder = path.resolve()
        kind = folder_kind(folder)
        if kind == "maven":
            return _built(folder)
        if kind == "install":
            command = read_start_script(start_script(folder))
            return AppJars((), tuple(map(Artifact.of_file, command.classpath)), command.main,
                           command.jvm_options)
        return AppJars((), tuple(map(Artifact.of_file, _folder_jars(folder))))
    return _fetched(app)


def _libs(libs: Path) -> tuple[Artifact, ...]:
    """The dependencies under `libs` in Maven's repository layout:
    <group as folders>/<artifact>/<version>/<file>.jar."""
    found = []
    for jar in sorted(libs.rglob("*.jar")):
        parts = jar.relative_to(libs).parts
        if len(parts) >= 4:
            found.append(Artifact(jar, ".".join(parts[:-3]), parts[-3]))
    return tuple(found)


def _maven(args: list[str], folder: Path, what: str) -> None:
    run_maven(args, folder / "build.log", what)


def _cached(name: str, make: Callable[[Path], None]) -> Path:
    folder = cache_root() / name
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel runs: one builds, the others wait
        if not (folder / COMPLETE_MARKER).exists():
            make(folder)
            (folder / COMPLETE_MARKER).write_text("\n")
    return folder


def _copy_dependencies(pom: Path, folder: Path, what: str) -> None:
    _maven(["-f", str(pom), "dependency:copy-dependencies",
            f"-DoutputDirectory={folder / 'libs'}", "-DincludeScope=runtime",
            "-Dmdep.useRepositoryLayout=true"], folder, what)


def _built(project: Path) -> AppJars:
    digest = sources_digest(project)
    name = f"app-{project.name}-{digest}-{LAYOUT}"

    def make(folder: Path) -> None:
        _maven(["-f", str(project / "pom.xml"), "package", f"-Dkchaos.build.dir={folder}",
                "-DskipTests"], folder, f"build the app in {project}")
        # A project that ignores kchaos.build.dir builds into its own target/.
        if not list(folder.glob("*.jar")):
            for jar in (project / "target").glob("*.jar"):
                (folder / jar.name).write_bytes(jar.read_bytes())
        _copy_dependencies(project / "pom.xml", folder, f"copy {project}'s dependencies")

    folder = _cached(name, make)
    own = tuple(sorted(folder.glob("*.jar")))
    if not own:
        raise UsageError(f"the app's build in {folder} has no jar: check its pom's packaging")
    boot = [jar for jar in own if is_boot_jar(jar)]
    if boot:  # spring-boot-maven-plugin's repackage: run as the jar it deploys
        return _boot_layout(boot[0])
    return AppJars(own, _libs(folder / "libs"))


def _boot_layout(jar: Path) -> AppJars:
    """A Spring Boot executable jar's unpacked layout (harness/app/boot.py): its classes,
    its BOOT-INF/lib in the classpath index's order, its Start-Class as the main."""
    folder = _cached(f"boot-{jar.stem}-{boot_jar_digest(jar)}-{LAYOUT}",
                     lambda into: unpack_boot_jar(jar, into))
    classes, libs, start = unpacked_layout(folder)
    return AppJars((classes,), tuple(map(Artifact.of_file, libs)), start)


def _fetched(coordinate: str) -> AppJars:
    group, artifact, version = coordinate.split(":")
    name = (f"app-{hashlib.sha256(coordinate.encode()).hexdigest()[:12]}-{artifact}-{version}"
            f"-{LAYOUT}")

    def make(folder: Path) -> None:
        pom = folder / "fetch-pom.xml"
        pom.write_text(FETCH_POM.format(group=group, artifact=artifact, version=version))
        _copy_dependencies(pom, folder, f"fetch {coordinate} from Maven Central")
        (folder / "coordinate.json").write_text(json.dumps({"coordinate": coordinate}))

    libs = _libs(_cached(name, make) / "libs")
    own = tuple(a.path for a in libs if (a.group, a.artifact) == (group, artifact))
    if not own:
        raise UsageError(f"fetching {coordinate} gave no jar of {group}:{artifact}: is its "
                         f"packaging a jar?")
    return AppJars(own, tuple(a for a in libs if a.path not in own))
