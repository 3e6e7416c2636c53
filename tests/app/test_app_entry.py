"""Where kchaos enters an app and what goes on its classpath, without Java: the entry shapes
refused in one line (exit 254, no run folder), the Main-Class default, and the classpath
filter that drops only what the launcher provides."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from refused_run import refused_run

from harness.app.build import (
    AppJars,
    Artifact,
    _libs,
    bundled_kafka_streams,
    provided_artifacts,
)
from harness.app.entry import Entry, main_class, resolve_entry
from harness.app.spec import InputSpec

EXAMPLES = Path(__file__).resolve().parents[2] / "workloads" / "app-examples"
SPEC = str(EXAMPLES / "wordcount.yaml")


def jar(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


@pytest.mark.parametrize(("args", "says"), [
    (["--app-class", "a.B", "--app-main", "a.C"], "not both"),
    (["--app-class", "a.B", "--app-args", "x"], "--app-args are the arguments of the app's main"),
    (["--app-class", "a.B#"], "give CLASS or CLASS#METHOD"),
    (["--app-class", "a b"], "give CLASS or CLASS#METHOD"),
    (["--app-class", "a.B#c#d"], "give CLASS or CLASS#METHOD"),
    (["--app-main", "a.B#main"], "--app-main a.B#main: give a class's full name"),
    (["--app-main", "a.B", "--app-args", "'unclosed"], "not shell-quoted words"),
])
def test_an_entry_that_cannot_be_right_is_one_line_254_and_no_run_folder(
    tmp_path: Path, args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused_run(tmp_path, ["--sut", "app", "--app", str(EXAMPLES), "--input", SPEC, *args],
                      capsys)
    assert says in err, err


def test_an_app_jar_without_main_class_needs_an_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("topics: [{name: sentences, value: a b c}]\n")
    app = jar(tmp_path / "app.jar", {"META-INF/MANIFEST.MF": "Manifest-Version: 1.0\n"})
    err = refused_run(tmp_path / "results", ["--sut", "app", "--app", str(app),
                                             "--input", str(spec)], capsys)
    assert "names no Main-Class" in err and "--app-main" in err and "--app-class" in err


def test_the_entry_is_the_options_then_the_specs_then_the_jars_main_class(tmp_path: Path) -> None:
    # Manifest lines wrap at 72 bytes; the continuation starts with a space.
    long_name = "com.example." + "x" * 70 + ".Main"
    app = jar(tmp_path / "app.jar", {"META-INF/MANIFEST.MF":
                                     f"Manifest-Version: 1.0\r\nMain-Class: {long_name[:60]}\r\n"
                                     f" {long_name[60:]}\r\n\r\n"})
    assert main_class(app) == long_name
    bare = InputSpec(tmp_path, ())
    spec_class = InputSpec(tmp_path, (), app_class="a.Spec")
    spec_main = InputSpec(tmp_path, (), app_main="a.SpecMain", app_args="x 'y z'")
    assert resolve_entry(None, None, "--in words", bare, (app,)) == Entry(
        app_main=long_name, app_args=("--in", "words"))
    assert resolve_entry(None, None, None, spec_class, (app,)) == Entry(app_class="a.Spec")
    assert resolve_entry("a.B#m", None, None, spec_class, (app,)) == Entry(app_class="a.B#m")
    assert resolve_entry(None, "a.M", "'one arg' two", spec_class, ()) == Entry(
        app_main="a.M", app_args=("one arg", "two"))
    assert resolve_entry(None, None, None, spec_main, ()) == Entry(
        app_main="a.SpecMain", app_args=("x", "y z"))
    assert resolve_entry("a.B", None, None, spec_main, ()) == Entry(app_class="a.B")
    assert Entry(app_main="a.M", app_args=("x",)).launcher_args() == [
        "--app-main", "a.M", "--app-arg", "x"]


LAUNCHER_LIBS = ("kafka-streams-4.2.2.jar", "kafka-clients-4.2.2.jar", "rocksdbjni-9.7.3.jar",
                 "kafka-streams-test-utils-4.2.2.jar", "jackson-databind-2.19.4.jar",
                 "zstd-jni-1.5.6-10.jar", "slf4j-api-2.0.16.jar")


def test_the_classpath_drops_only_what_the_launcher_provides(tmp_path: Path) -> None:
    """Kafka's own artifacts the launcher does not provide stay: the examples, connect-json,
    kafka-streams-scala and its Scala library."""
    libs = tmp_path / "libs"
    kept = ["org.apache.kafka:kafka-streams-examples:3.7.0", "org.apache.kafka:connect-json:3.7.0",
            "org.apache.kafka:connect-api:3.7.0", "org.apache.kafka:kafka-streams-scala_2.13:3.7.0",
            "org.scala-lang:scala-library:2.13.12"]
    dropped = ["org.apache.kafka:kafka-streams:3.7.0", "org.apache.kafka:kafka-clients:3.7.0",
               "org.rocksdb:rocksdbjni:7.9.2", "com.fasterxml.jackson.core:jackson-databind:2.16.0"]
    for coordinate in kept + dropped:
        group, artifact, version = coordinate.split(":")
        folder = libs.joinpath(*group.split("."), artifact, version)
        folder.mkdir(parents=True)
        (folder / f"{artifact}-{version}.jar").write_bytes(b"")
    own = tmp_path / "app.jar"
    own.write_bytes(b"")
    jars = AppJars((own,), _libs(libs))
    provided = provided_artifacts(Path("/launcher/libs") / name for name in LAUNCHER_LIBS)
    classpath = jars.classpath(provided)
    names = {p.name for p in classpath}
    assert classpath[0] == own
    assert names == {"app.jar", *(f"{c.split(':')[1]}-{c.split(':')[2]}.jar" for c in kept)}
    assert {f"{a.group}:{a.artifact}" for a in jars.dropped(provided)} == {
        c.rsplit(":", 1)[0] for c in dropped}
    assert Artifact(libs / "x.jar") not in jars.libs  # only the repository layout is read


def test_a_jar_bundling_kafka_streams_is_found(tmp_path: Path) -> None:
    fat = jar(tmp_path / "fat.jar", {"org/apache/kafka/streams/KafkaStreams.class": "",
                                     "com/example/App.class": ""})
    thin = jar(tmp_path / "thin.jar", {"com/example/App.class": ""})
    assert bundled_kafka_streams([fat, thin]) == (fat,)
