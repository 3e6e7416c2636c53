"""An app entered by its own main (tests/app/toy, compiled here against the launcher's
Kafka Streams): the launcher's Java agent captures the Topology and settings the main
builds, describe reports them (secrets hidden), the guarantee is the app's, the reference
runs the captured topology; mains that build no KafkaStreams, or two, and topology methods
of shapes it cannot call are refused in one line. Slow: it builds the launcher (cached)."""

from __future__ import annotations

import base64
import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from harness.app.entry import Entry
from harness.app.spec import read_spec
from harness.errors import UsageError
from harness.kafka.jars import require_java
from harness.sut import kstreams
from harness.sut.app import DEFAULT_VERSION, LAUNCHER_CLASS, UserApp

pytestmark = [pytest.mark.slow, pytest.mark.needs("javac")]

TOY = Path(__file__).resolve().parent / "toy"


@pytest.fixture(scope="module")
def toy_jar(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("toy")
    classes = out / "classes"
    launcher = kstreams.build(DEFAULT_VERSION)
    subprocess.run(["javac", "-d", str(classes), "-cp", launcher.classpath,
                    *map(str, sorted(TOY.glob("toy/*.java")))], check=True)
    jar = out / "toy.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nMain-Class: toy.Upper\n")
        for path in classes.rglob("*.class"):
            archive.write(path, str(path.relative_to(classes)))
    return jar


@pytest.fixture()
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text("topics: [{name: words, value: '{w}', fields: {w: [a, b]}}]\n")
    return path


def app(jar: Path, spec: Path, entry: Entry) -> UserApp:
    return UserApp(str(jar), entry, DEFAULT_VERSION, read_spec(spec))


def test_the_main_is_captured_at_its_kafka_streams(toy_jar: Path, spec: Path) -> None:
    toy = app(toy_jar, spec, Entry(app_main="toy.Upper", app_args=("words",)))
    assert toy.description.sources == ("words",) and toy.description.sinks == ("toy-out",)
    config = toy.app_config
    assert config["processing.guarantee"] == "exactly_once_v2"
    assert config["default.value.serde"].endswith("Serdes$StringSerde")
    assert config["sasl.jaas.config"] == "(hidden)"
    assert toy.guarantee() == ("exactly_once_v2", "the app's")
    assert toy.jvm_options()[0].startswith("-javaagent:")


def test_the_reference_runs_the_captured_topology(toy_jar: Path, spec: Path,
                                                  tmp_path: Path) -> None:
    toy = app(toy_jar, spec, Entry(app_main="toy.Upper", app_args=("words",)))
    fed, produced = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    b64 = lambda text: base64.b64encode(text.encode()).decode()  # noqa: E731
    fed.write_text("".join(json.dumps({"topic": "words", "partition": 0, "offset": i,
                                       "timestamp": 1000 + i, "key": b64(f"k{i}"),
                                       "value": b64(word)}) + "\n"
                           for i, word in enumerate(["kafka", "streams"])))
    done = subprocess.run(
        [require_java(), *toy.jvm_options(), "-cp", ":".join(toy.classpath), LAUNCHER_CLASS,
         "reference", *toy.launcher_args(), "--input", str(fed), "--output", str(produced)],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = [json.loads(line) for line in produced.read_text().splitlines()]
    assert [(r["topic"], base64.b64decode(r["value"]).decode()) for r in out] == [
        ("toy-out", "KAFKA"), ("toy-out", "STREAMS")]


@pytest.mark.parametrize(("entry", "says"), [
    (Entry(app_main="toy.Twice"), "toy.Twice.main built 2 KafkaStreams"),
    (Entry(app_main="toy.Idle"), "returned without building a KafkaStreams"),
    (Entry(app_main="toy.Nope"), "no class toy.Nope on the classpath"),
    (Entry(app_class="toy.Shapes#notATopology"), "returns java.lang.String"),
    (Entry(app_class="toy.Shapes#takesAnInt"), "takes other arguments"),
    (Entry(app_class="toy.Shapes#missing"), "has no public method missing(Properties)"),
    (Entry(app_class="toy.Shapes$NeedsArgs#build"), "no public no-argument constructor"),
])
def test_an_entry_the_app_cannot_serve_is_one_line(toy_jar: Path, spec: Path, entry: Entry,
                                                    says: str) -> None:
    with pytest.raises(UsageError) as refused:
        _ = app(toy_jar, spec, entry).description
    text = str(refused.value)
    assert "\n" not in text and says in text, text


@pytest.mark.parametrize("method", ["toy.Shapes#build", "toy.Shapes#buildTopology"])
def test_a_topology_method_of_either_shape_is_called(toy_jar: Path, spec: Path,
                                                    method: str) -> None:
    described = app(toy_jar, spec, Entry(app_class=method)).description
    assert described.sources == ("shapes-in",) and described.sinks == ("shapes-out",)


def test_a_main_that_builds_nothing_in_time_is_refused(toy_jar: Path, spec: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness.sut.app.CAPTURE_TIMEOUT_S", 2.0)
    with pytest.raises(UsageError, match="built no KafkaStreams within 2 s"):
        _ = app(toy_jar, spec, Entry(app_main="toy.Idle", app_args=("wait",))).description
