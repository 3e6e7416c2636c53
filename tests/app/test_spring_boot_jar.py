"""A Spring Boot executable jar as `--app` (harness/app/boot.py): found by its BOOT-INF/,
unpacked to its classes (a plain jar) and BOOT-INF/lib in the classpath index's order, its
Start-Class the main (not the JarLauncher of its Main-Class); a broken one refused in one
line, exit 254, before a run folder exists. The app's own SLF4J binding takes the place of
the launcher's logging jars (harness/app/build.py `launcher_for`)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from refused_run import refused_run

from harness.app.boot import is_boot_jar
from harness.app.build import AppJars, Artifact, app_jars, launcher_for
from harness.app.entry import resolve_entry
from harness.app.spec import read_spec

START = "com.example.WordService"
JAR_LAUNCHER = "org.springframework.boot.loader.launch.JarLauncher"
SLF4J_PROVIDER = "META-INF/services/org.slf4j.spi.SLF4JServiceProvider"


def library(*entries: str) -> bytes:
    """A small jar's bytes, with `entries` (empty files) in it."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        for entry in entries:
            archive.writestr(entry, "")
    return data.getvalue()


def boot_jar(path: Path, start: str | None = START, index: list[str] | None = None,
             libs: dict[str, bytes] | None = None, classes: bool = True) -> Path:
    """A Boot executable jar as spring-boot-maven-plugin lays it out."""
    libs = libs if libs is not None else {
        "spring-core-7.0.8.jar": library("org/springframework/core/X.class"),
        "kafka-streams-4.1.2.jar": library("org/apache/kafka/streams/KafkaStreams.class"),
        "logback-classic-1.5.34.jar": library(SLF4J_PROVIDER),
    }
    index = index if index is not None else ["logback-classic-1.5.34.jar",
                                             "spring-core-7.0.8.jar", "kafka-streams-4.1.2.jar"]
    with zipfile.ZipFile(path, "w") as archive:
        manifest = f"Manifest-Version: 1.0\nMain-Class: {JAR_LAUNCHER}\n"
        if start:
            manifest += f"Start-Class: {start}\nSpring-Boot-Classes: BOOT-INF/classes/\n"
        archive.writestr("META-INF/MANIFEST.MF", manifest)
        archive.writestr("org/springframework/boot/loader/launch/JarLauncher.class", "")
        if classes:
            archive.writestr("BOOT-INF/classes/com/example/WordService.class", "compiled")
            archive.writestr("BOOT-INF/classes/application.properties",
                             "spring.kafka.streams.application-id=words\n")
        for name, data in libs.items():
            archive.writestr(f"BOOT-INF/lib/{name}", data)
        archive.writestr("BOOT-INF/classpath.idx",
                         "".join(f'- "BOOT-INF/lib/{n}"\n' for n in index))
    return path


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KCHAOS_CACHE", str(tmp_path / "cache"))


def test_a_boot_jar_runs_as_its_unpacked_layout_with_its_start_class(tmp_path: Path) -> None:
    jar = boot_jar(tmp_path / "word-service-1.0.jar")
    assert is_boot_jar(jar)
    jars = app_jars(str(jar))
    assert jars.main == START
    [classes] = jars.own
    with zipfile.ZipFile(classes) as archive:  # BOOT-INF/classes/ made the root of a jar
        assert sorted(archive.namelist()) == ["application.properties",
                                              "com/example/WordService.class"]
    assert [a.path.name for a in jars.libs] == ["logback-classic-1.5.34.jar",
                                                "spring-core-7.0.8.jar",
                                                "kafka-streams-4.1.2.jar"]
    assert [a.artifact for a in jars.libs] == ["logback-classic", "spring-core", "kafka-streams"]
    assert all(zipfile.is_zipfile(a.path) for a in jars.libs)
    spec = tmp_path / "spec.yaml"
    spec.write_text("topics: [{name: sentences, value: '{w}', fields: {w: [a]}}]\n")
    entry = resolve_entry(None, None, None, read_spec(spec), jars.own, jars.main)
    assert entry.app_main == START  # not the JarLauncher its Main-Class names


def test_a_plain_jar_is_no_boot_jar(tmp_path: Path) -> None:
    plain = tmp_path / "plain.jar"
    plain.write_bytes(library("com/example/App.class"))
    assert not is_boot_jar(plain)
    assert app_jars(str(plain)).own == (plain.resolve(),)


def test_libraries_the_index_leaves_out_follow_it_by_name(tmp_path: Path) -> None:
    jar = boot_jar(tmp_path / "svc.jar", index=["spring-core-7.0.8.jar"])
    assert [a.artifact for a in app_jars(str(jar)).libs] == ["spring-core", "kafka-streams",
                                                             "logback-classic"]


@pytest.mark.parametrize(("broken", "says"), [
    ({"start": None}, "names no Start-Class in its manifest"),
    ({"classes": False}, "has no BOOT-INF/classes/"),
    ({"index": ["spring-core-7.0.8.jar", "gone-1.0.jar"]},
     "names BOOT-INF/lib/gone-1.0.jar in its classpath index but holds no such jar"),
    ({"libs": {"spring-core-7.0.8.jar": b"not a zip"}, "index": ["spring-core-7.0.8.jar"]},
     "holds BOOT-INF/lib/spring-core-7.0.8.jar, which is not a jar"),
])
def test_a_broken_boot_jar_is_one_line_and_254(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               broken: dict[str, object], says: str) -> None:
    jar = boot_jar(tmp_path / "svc.jar", **broken)  # type: ignore[arg-type]
    spec = tmp_path / "spec.yaml"
    spec.write_text("topics: [{name: sentences, value: '{w}', fields: {w: [a]}}]\n")
    line = refused_run(tmp_path / "results", ["--sut", "app", "--app", str(jar), "--input",
                                              str(spec)], capsys)
    assert says in line and "a Spring Boot jar (BOOT-INF/)" in line, line


LAUNCHER = tuple(Path(f"/launcher/{n}") for n in (
    "kchaos-kstreams-ledger-1.jar", "kafka-streams-4.2.2.jar", "slf4j-api-2.0.16.jar",
    "log4j-slf4j2-impl-2.24.3.jar", "log4j-core-2.24.3.jar", "log4j-api-2.24.3.jar"))


def app_with(tmp_path: Path, *libs: tuple[str, tuple[str, ...]]) -> AppJars:
    found = []
    for name, entries in libs:
        (tmp_path / name).write_bytes(library(*entries))
        found.append(Artifact.of_file(tmp_path / name))
    return AppJars((), tuple(found))


def test_the_apps_logback_takes_the_place_of_the_launchers_logging(tmp_path: Path) -> None:
    jars = app_with(tmp_path, ("logback-classic-1.5.34.jar", (SLF4J_PROVIDER,)),
                    ("log4j-to-slf4j-2.25.4.jar", ()), ("slf4j-api-2.0.18.jar", ()))
    launcher, bindings = launcher_for(LAUNCHER, jars)
    assert [b.artifact for b in bindings] == ["logback-classic"]
    assert [j.name for j in launcher] == ["kchaos-kstreams-ledger-1.jar", "kafka-streams-4.2.2.jar"]


def test_an_slf4j_1_binder_counts_as_a_binding(tmp_path: Path) -> None:
    binder = "org/slf4j/impl/StaticLoggerBinder.class"
    jars = app_with(tmp_path, ("slf4j-simple-1.7.36.jar", (binder,)))
    assert [b.artifact for b in launcher_for(LAUNCHER, jars)[1]] == ["slf4j-simple"]


def test_an_app_without_a_binding_or_with_the_launchers_keeps_the_launchers_logging(
        tmp_path: Path) -> None:
    none = app_with(tmp_path, ("guava-33.0.0-jre.jar", ()))
    same = app_with(tmp_path, ("log4j-slf4j2-impl-2.24.3.jar", (SLF4J_PROVIDER,)))
    assert launcher_for(LAUNCHER, none) == (LAUNCHER, ())
    assert launcher_for(LAUNCHER, same) == (LAUNCHER, ())
