"""An app entered by its own main (tests/app/toy, compiled here against the launcher's
Kafka Streams): the launcher's Java agent captures the Topology and settings the main
builds, describe reports them (secrets hidden), the guarantee is the app's, the reference
runs the captured topology (one driver per task, each with the whole global table, its
stream-time punctuators named); mains that build no KafkaStreams, or two, and topology methods
of shapes it cannot call are refused in one line. Slow: it builds the launcher (cached)."""

from __future__ import annotations

import base64
import json
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from checker.oracle.reference import write_sources
from checker.schema import TOPIC_RECORDS
from harness.app.entry import Entry
from harness.app.guarantee import ChosenGuarantee
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
    assert toy.guarantee() == ChosenGuarantee("exactly_once_v2", "app")
    assert toy.jvm_options()[0].startswith("-javaagent:")


def reference(toy: UserApp, tmp_path: Path, rows: list[tuple[str, int, str, str, int]],
              *flags: str) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    """The launcher's reference of `toy` fed (topic, partition, key, value, timestamp) rows,
    each partition's in the order given: its summary and (topic, key, value) outputs."""
    offsets: dict[tuple[str, int], int] = {}
    table = []
    for topic, partition, key, value, timestamp in rows:
        offset = offsets[topic, partition] = offsets.get((topic, partition), -1) + 1
        table.append({"topic": topic, "partition": partition, "offset": offset,
                      "timestamp_ms": timestamp, "key": key.encode(), "value": value.encode()})
    fed, produced = tmp_path / "fed", tmp_path / "out.jsonl"
    write_sources(pa.Table.from_pylist(table, TOPIC_RECORDS), fed)
    done = subprocess.run(
        [require_java(), *toy.jvm_options(), "-cp", ":".join(toy.classpath), LAUNCHER_CLASS,
         "reference", *toy.launcher_args(), "--input", str(fed), "--output", str(produced),
         *flags], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = [json.loads(line) for line in produced.read_text().splitlines()]
    text = lambda b64: base64.b64decode(b64).decode()  # noqa: E731
    return (json.loads(done.stdout.splitlines()[-1]),
            [(r["topic"], text(r["key"]), text(r["value"])) for r in out])


def test_the_reference_runs_the_captured_topology(toy_jar: Path, spec: Path,
                                                  tmp_path: Path) -> None:
    toy = app(toy_jar, spec, Entry(app_main="toy.Upper", app_args=("words",)))
    summary, out = reference(toy, tmp_path, [("words", 0, "k0", "kafka", 1000),
                                             ("words", 0, "k1", "streams", 1001)])
    assert out == [("toy-out", "k0", "KAFKA"), ("toy-out", "k1", "STREAMS")]
    assert summary["per_task"] is True and summary["stream_time_punctuators"] == []


def test_every_task_of_the_reference_sees_the_whole_global_table(toy_jar: Path, spec: Path,
                                                                 tmp_path: Path) -> None:
    """One driver per task, and each gets every global record: the orders of both
    partitions find the customers, whichever partition of the global topic holds them."""
    toy = app(toy_jar, spec, Entry(app_class="toy.GlobalJoin"))
    rows = [("toy-customers", 0, "c0", "ada", 1), ("toy-customers", 1, "c1", "linus", 2),
            ("toy-orders", 0, "o0", "c1", 10), ("toy-orders", 1, "o1", "c0", 11),
            ("toy-orders", 1, "o2", "c1", 12)]
    for order in ("tasks-in-turn", "interleaved"):
        summary, out = reference(toy, tmp_path / order, rows, "--order", order)
        assert summary["per_task"] is True and summary["drivers"] == 2, summary
        assert sorted(out) == [("toy-named", "o0", "linus"), ("toy-named", "o1", "ada"),
                               ("toy-named", "o2", "linus")], out


def test_each_sub_topology_has_its_own_tasks(toy_jar: Path, spec: Path, tmp_path: Path) -> None:
    """Two sub-topologies over two partitions: four tasks, four drivers (0_0 .. 1_1), as the
    cluster has them, each with its own stream time."""
    toy = app(toy_jar, spec, Entry(app_class="toy.TwoStreams"))
    rows = [(topic, p, f"{topic}-{p}", "v", 10 * p) for topic in ("left", "right") for p in (0, 1)]
    summary, out = reference(toy, tmp_path, rows)
    assert summary["per_task"] is True and summary["drivers"] == 4, summary
    assert sorted(out) == [("left-out", "left-0", "v"), ("left-out", "left-1", "v"),
                           ("right-out", "right-0", "v"), ("right-out", "right-1", "v")]


def test_a_stream_time_punctuator_is_named(toy_jar: Path, spec: Path, tmp_path: Path) -> None:
    """What it emits is the cluster's timing (it punctuates after batches of records, the
    driver after each): the summary names it, for the oracle to say it cannot judge."""
    toy = app(toy_jar, spec, Entry(app_class="toy.Punctuating"))
    rows = [("numbers", 0, "n", str(i), 1000 + 400 * i) for i in range(6)]
    summary, out = reference(toy, tmp_path, rows)
    assert summary["stream_time_punctuators"] == ["every-second"], summary
    assert [value for _, _, value in out] == ["0", "6", "15"]  # after 1000, 2200, 3000 ms


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
