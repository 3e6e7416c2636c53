"""The user's app on this machine: `--app` is a jar, a Maven project folder (built with
`mvn package`) or a Maven coordinate GROUP:ARTIFACT:VERSION (fetched with its runtime
dependencies); the result is the jars the pods and the reference put on their classpath
beside the launcher's. Kafka's own jars are left to the launcher's build, so the app runs
on the Kafka Streams release the run names.

Folders and coordinates are built once into the cache, keyed by what they are made from.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

from harness.errors import UsageError
from harness.kafka.jars import cache_root
from harness.maven import run_maven
from harness.sut.kstreams import sources_digest

COORDINATE = re.compile(r"^[\w.-]+:[\w.-]+:[\w.-]+$")
COMPLETE_MARKER = ".complete"
# The pom that fetches a coordinate with its runtime dependencies (not Kafka's own).
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
    """UsageError unless `--app` names a jar, a Maven project folder or a coordinate (said
    before a run folder exists; building it waits for the run's set-up)."""
    path = Path(app)
    if path.is_file() and path.suffix != ".jar":
        raise UsageError(f"--app {app}: not a jar; give a .jar, a Maven project folder or "
                         f"GROUP:ARTIFACT:VERSION")
    if path.is_dir() and not (path / "pom.xml").is_file():
        raise UsageError(f"--app {app}: a folder without pom.xml; give a Maven project, "
                         f"a .jar or GROUP:ARTIFACT:VERSION")
    if not path.exists() and not COORDINATE.match(app):
        raise UsageError(f"--app {app}: no such file or folder, and not GROUP:ARTIFACT:VERSION")


def app_jars(app: str) -> tuple[Path, ...]:
    """The jars of `--app`, building or fetching it the first time."""
    check_app(app)
    path = Path(app)
    if path.is_file():
        return (path.resolve(),)
    if path.is_dir():
        return _built(path.resolve())
    return _fetched(app)


def _maven(args: list[str], folder: Path, what: str) -> None:
    run_maven(args, folder / "build.log", what)


def _cached(name: str, make: Callable[[Path], None]) -> tuple[Path, ...]:
    folder = cache_root() / name
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel runs: one builds, the others wait
        if not (folder / COMPLETE_MARKER).exists():
            make(folder)
            (folder / COMPLETE_MARKER).write_text("\n")
    jars = tuple(sorted(folder.glob("*.jar")) + sorted((folder / "libs").glob("*.jar")))
    if not jars:
        raise UsageError(f"the app's build in {folder} has no jar: check its pom's packaging")
    return jars


def _built(project: Path) -> tuple[Path, ...]:
    digest = sources_digest(project)
    name = f"app-{project.name}-{digest}"

    def make(folder: Path) -> None:
        _maven(["-f", str(project / "pom.xml"), "package", f"-Dkchaos.build.dir={folder}",
                "-DskipTests"], folder, f"build the app in {project}")
        # A project that ignores kchaos.build.dir builds into its own target/.
        if not list(folder.glob("*.jar")):
            for jar in (project / "target").glob("*.jar"):
                (folder / jar.name).write_bytes(jar.read_bytes())
        _maven(["-f", str(project / "pom.xml"), "dependency:copy-dependencies",
                f"-DoutputDirectory={folder / 'libs'}", "-DincludeScope=runtime",
                "-DexcludeGroupIds=org.apache.kafka"], folder, f"copy {project}'s dependencies")

    return _cached(name, make)


def _fetched(coordinate: str) -> tuple[Path, ...]:
    group, artifact, version = coordinate.split(":")
    name = f"app-{hashlib.sha256(coordinate.encode()).hexdigest()[:12]}-{artifact}-{version}"

    def make(folder: Path) -> None:
        pom = folder / "fetch-pom.xml"
        pom.write_text(FETCH_POM.format(group=group, artifact=artifact, version=version))
        _maven(["-f", str(pom), "dependency:copy-dependencies",
                f"-DoutputDirectory={folder / 'libs'}", "-DincludeScope=runtime",
                "-DexcludeGroupIds=org.apache.kafka"], folder,
               f"fetch {coordinate} from Maven Central")
        (folder / "coordinate.json").write_text(json.dumps({"coordinate": coordinate}))

    return _cached(name, make)
