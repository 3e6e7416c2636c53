"""A class-data sharing (AppCDS) archive of the broker's classes, written once, reused.

A broker JVM loads ~7,800 classes before Kafka is started; with a dynamic archive of
them (Java 13+: `-XX:ArchiveClassesAtExit` once, `-XX:SharedArchiveFile` after) it maps
~5,500 of them instead of parsing and verifying them, which halves the JVM's part of a
broker start. The archive lives beside the Kafka jars (KCHAOS_CACHE), named after what
the JVM checks it against (Kafka version, classpath, java), so another JDK or other jars
get an archive of their own.

Java 17 falls back to loading classes as usual when an archive does not match or fails
its checksum (`-Xshare:auto`, `-XX:+VerifySharedSpaces`), but it crashes (SIGBUS) on a
truncated one, so an archive is used only if it has the size recorded when it was
published; it is written under a temporary name and renamed, so concurrent starts never
see half a file, and one start trains it while the others start without it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.kafka.jars import classpath, kafka_cache, kafka_version

SIZE_SUFFIX = ".json"


def archive_key(java: Path, jars: list[Path], flags: list[str]) -> str:
    """What a dynamic archive is only valid for: this JDK (its java, libjvm and base
    archive: an upgraded JDK gets a new name rather than an archive it refuses), these
    jars, these flags."""
    jdk = [java, *(p for p in jdk_files(java) if p.exists())]
    parts = [str(java), *flags]
    for path in [*jdk, *jars]:
        stat = path.stat()
        parts.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def jdk_files(java: Path) -> list[Path]:
    """The files of the JDK of `java` (bin/java resolved) that a dynamic archive depends on."""
    server = java.parent.parent / "lib" / "server"
    return [server / "libjvm.so", server / "classes.jsa"]


def archive_name(version: str, tool: str, key: str) -> str:
    return f"kafka-{version}-{tool}-{key}.jsa"


def size_record(archive: Path) -> Path:
    return archive.with_name(archive.name + SIZE_SUFFIX)


def recorded_size(archive: Path) -> int | None:
    try:
        size = json.loads(size_record(archive).read_text())["bytes"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return size if isinstance(size, int) else None


def usable(size_on_disk: int | None, size_recorded: int | None) -> bool:
    """Use an archive only if it is all there: Java 17 crashes on a truncated one."""
    return size_on_disk is not None and size_on_disk > 0 and size_on_disk == size_recorded


def is_usable(archive: Path) -> bool:
    try:
        on_disk: int | None = archive.stat().st_size
    except OSError:
        on_disk = None
    return usable(on_disk, recorded_size(archive))


def use_flags(archive: Path) -> list[str]:
    # -Xshare:auto (the default, said explicitly): a mismatched archive is a warning in
    # the broker log, never a failed start; VerifySharedSpaces catches flipped bytes.
    return ["-Xshare:auto", "-XX:+VerifySharedSpaces", f"-XX:SharedArchiveFile={archive}"]


def dump_flags(temporary: Path) -> list[str]:
    # The dump's warnings (classes too old or unlinked to archive) are expected: keep
    # them out of the training broker's log.
    return [f"-XX:ArchiveClassesAtExit={temporary}", "-Xlog:cds=error,cds+dynamic=error"]


def temporary_name(archive: Path) -> Path:
    return archive.with_name(f"{archive.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def remove_stale_temporaries(archive: Path) -> None:
    """Half-written archives of a trainer that was killed (50 MB each)."""
    for stale in archive.parent.glob(f"{archive.name}.tmp-*"):
        stale.unlink(missing_ok=True)


def publish(temporary: Path, archive: Path, check: Callable[[Path], bool]) -> bool:
    """Rename a freshly dumped archive into place if `check` (a JVM that must map it)
    accepts it; its size record first, so a reader never pairs it with an old one."""
    try:
        size = temporary.stat().st_size
        if size == 0 or not check(temporary):
            return False
        record = size_record(archive)
        record_tmp = temporary.with_name(temporary.name + SIZE_SUFFIX)
        record_tmp.write_text(json.dumps({"bytes": size}))
        os.replace(record_tmp, record)
        os.replace(temporary, archive)
        return True
    finally:
        for leftover in (temporary, temporary.with_name(temporary.name + SIZE_SUFFIX)):
            leftover.unlink(missing_ok=True)


def maps_archive(java: str, classpath: str, flags: list[str]) -> Callable[[Path], bool]:
    """A check for `publish`: a JVM with `-Xshare:on` (fail rather than fall back) maps it."""

    def check(archive: Path) -> bool:
        # A damaged archive may crash this JVM: no hs_err file in the harness's folder.
        argv = [java, *flags, "-Xshare:on", "-XX:+VerifySharedSpaces", "-XX:ErrorFile=/dev/null",
                f"-XX:SharedArchiveFile={archive}", "-cp", classpath, "-version"]
        try:
            return subprocess.run(argv, capture_output=True, timeout=60).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False

    return check


@contextlib.contextmanager
def training_turn(archive: Path) -> Iterator[bool]:
    """True if this process may train the archive now; False while another one does
    (then start without it rather than wait)."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    with open(archive.with_name(archive.name + ".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield not is_usable(archive)  # another process may have published it meanwhile
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@dataclass(frozen=True)
class BrokerArchive:
    """The archive for one (java, jars, flags); `train(temporary)` runs a broker that
    dumps its classes to `temporary` when it exits."""

    path: Path
    java: str
    classpath: str
    flags: tuple[str, ...]

    def flags_to_use(self) -> list[str]:
        return use_flags(self.path) if is_usable(self.path) else []

    def ensure(self, train: Callable[[Path], None]) -> str:
        """Train and publish the archive if it is missing. Says what happened: "present",
        "trained", "busy" (another process trains it) or "failed: <why>"; a failure
        leaves starts as they were without an archive, it never fails one."""
        if is_usable(self.path):
            return "present"
        try:
            with training_turn(self.path) as mine:
                if not mine:
                    return "busy" if not is_usable(self.path) else "present"
                remove_stale_temporaries(self.path)  # ours to remove: we hold the turn
                return self._train(train)
        except OSError as exc:  # e.g. a cache folder that cannot be written
            return f"failed: {exc}"

    def _train(self, train: Callable[[Path], None]) -> str:
        temporary = temporary_name(self.path)
        try:
            train(temporary)
        except Exception as exc:  # e.g. the training broker did not start: start as before
            temporary.unlink(missing_ok=True)
            return f"failed: {exc}"
        checker = maps_archive(self.java, self.classpath, list(self.flags))
        if publish(temporary, self.path, checker):
            return "trained"
        return "failed: the dumped archive did not map (see the training broker's log)"


def broker_archive(java: str, libs: Path, flags: list[str],
                   version: str | None = None) -> BrokerArchive:
    """The broker archive for this java, the jars in `libs` (of Kafka `version`, pom.xml's
    pin by default) and the broker's JVM flags."""
    version = version or kafka_version()
    jars = sorted(libs.glob("*.jar"))
    key = archive_key(Path(java).resolve(), jars, flags)
    folder = kafka_cache(version) / "cds"
    return BrokerArchive(folder / archive_name(version, "broker", key), java,
                         classpath(libs), tuple(flags))
