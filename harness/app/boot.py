"""A Spring Boot executable jar as `--app` (docs/your-app.md, "Spring Boot apps"): the jar
spring-boot-maven-plugin repackages (`BOOT-INF/classes/`, `BOOT-INF/lib/*.jar`, its
`JarLauncher` as Main-Class and the app's main as `Start-Class`) is run in its unpacked
layout, not through its launcher: the app's classes (made a plain jar) and its libraries
on one flat classpath after the launcher's, the main its `Start-Class`.

Why not the JarLauncher: it loads BOOT-INF/ in a class loader of its own below the
system one, where the launcher's jars (Kafka Streams, SLF4J) sit. SLF4J would then be the
launcher's, looking for its binding in the system class loader, blind to the app's Logback
in the child: Spring Boot stops ("LoggerFactory is not a Logback LoggerContext"). On one
flat classpath the launcher's Kafka Streams replaces the app's by artifact id as for every
other `--app`, the app's logging binding can take the launcher's place
(harness/app/build.py `launcher_for`), the Java agent sees one KafkaStreams class, and the
docker platform's folder of jars works unchanged. Spring Boot documents the unpacked
layout as a way to run the app (`java -cp BOOT-INF/classes:BOOT-INF/lib/* <Start-Class>`).

Unpacked once per jar content into the cache.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path, PurePosixPath

from harness.errors import UsageError

BOOT_CLASSES = "BOOT-INF/classes/"
BOOT_LIB = "BOOT-INF/lib/"
CLASSPATH_INDEX = "BOOT-INF/classpath.idx"
START_CLASS = "Start-Class"


def manifest_attributes(archive: zipfile.ZipFile) -> dict[str, str]:
    """A jar's manifest main attributes (continuation lines joined)."""
    try:
        text = archive.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    except KeyError:
        return {}
    text = text.replace("\r\n", "\n").replace("\n ", "")
    found = {}
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep:
            found[name.strip()] = value.strip()
    return found


def is_boot_jar(jar: Path) -> bool:
    """True for a Spring Boot executable jar: entries under BOOT-INF/."""
    try:
        with zipfile.ZipFile(jar) as archive:
            return any(name.startswith("BOOT-INF/") for name in archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def _fault(jar: Path, what: str) -> UsageError:
    return UsageError(f"--app {jar}: a Spring Boot jar (BOOT-INF/) {what}; rebuild it with "
                      f"spring-boot-maven-plugin's repackage (`mvn package`) or give its Maven "
                      f"project")


def _library_order(archive: zipfile.ZipFile, jar: Path) -> list[str]:
    """BOOT-INF/lib's jars in the classpath index's order (Boot's own), else by name."""
    libs = sorted(n for n in archive.namelist()
                  if n.startswith(BOOT_LIB) and n.endswith(".jar") and n.count("/") == 2)
    if CLASSPATH_INDEX not in archive.NameToInfo:
        return libs
    indexed = []
    for line in archive.read(CLASSPATH_INDEX).decode("utf-8", "replace").splitlines():
        name = line.strip().removeprefix("- ").strip('"')
        if not name:
            continue
        if name not in archive.NameToInfo:
            raise _fault(jar, f"names {name} in its classpath index but holds no such jar")
        indexed.append(name)
    return indexed + [n for n in libs if n not in indexed]


def _checked(archive: zipfile.ZipFile, jar: Path) -> tuple[str, list[str]]:
    """The Start-Class and the libraries in order of a Boot jar; UsageError, one line, for
    one that is broken."""
    start = manifest_attributes(archive).get(START_CLASS)
    if not start:
        raise _fault(jar, "names no Start-Class in its manifest (the app's main)")
    if not any(n.startswith(BOOT_CLASSES) for n in archive.namelist()):
        raise _fault(jar, "has no BOOT-INF/classes/ (the app's own classes)")
    return start, _library_order(archive, jar)


def check_boot_jar(jar: Path) -> None:
    """UsageError, one line, for a broken Boot jar: said before a run folder exists."""
    try:
        with zipfile.ZipFile(jar) as archive:
            _checked(archive, jar)
    except zipfile.BadZipFile as exc:
        raise _fault(jar, f"cannot be read ({exc})") from exc


def unpack_boot_jar(jar: Path, into: Path) -> None:
    """Writes the jar's classes as `<jar>-classes.jar` and its libraries under `lib/` (in
    order: `lib/order.txt`) and its Start-Class to `start-class.txt`; UsageError, one line,
    for a Boot jar that is broken (no Start-Class, a library that is no jar, ...)."""
    try:
        with zipfile.ZipFile(jar) as archive:
            start, order = _checked(archive, jar)
            classes = into / f"{jar.stem}-classes.jar"
            with zipfile.ZipFile(classes, "w", zipfile.ZIP_DEFLATED) as out:
                for info in archive.infolist():
                    name = info.filename
                    if name.startswith(BOOT_CLASSES) and name != BOOT_CLASSES:
                        out.writestr(name.removeprefix(BOOT_CLASSES), archive.read(info))
            (into / "lib").mkdir(exist_ok=True)
            for name in order:
                target = into / "lib" / PurePosixPath(name).name
                target.write_bytes(archive.read(name))
                if not zipfile.is_zipfile(target):
                    raise _fault(jar, f"holds {name}, which is not a jar")
    except zipfile.BadZipFile as exc:
        raise _fault(jar, f"cannot be read ({exc})") from exc
    (into / "lib" / "order.txt").write_text("".join(PurePosixPath(n).name + "\n" for n in order))
    (into / "start-class.txt").write_text(start + "\n")


def boot_jar_digest(jar: Path) -> str:
    digest = hashlib.sha256()
    with open(jar, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


def unpacked_layout(folder: Path) -> tuple[Path, tuple[Path, ...], str]:
    """What `unpack_boot_jar` wrote: the classes jar, the libraries in order, the main."""
    classes = next(iter(sorted(folder.glob("*-classes.jar"))))
    names = (folder / "lib" / "order.txt").read_text().split()
    start = (folder / "start-class.txt").read_text().strip()
    return classes, tuple(folder / "lib" / n for n in names), start
