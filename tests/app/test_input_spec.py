"""The input spec of an app run: the shipped examples read; a misspelt key or a bad value is
one line naming the file; records are the same for a seed and follow the template."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from harness.app.spec import IntField, read_spec, records
from harness.errors import UsageError

EXAMPLES = Path(__file__).resolve().parents[2] / "workloads" / "app-examples"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("**/*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_spec_reads(path: Path) -> None:
    spec = read_spec(path)
    entry = spec.app_class or spec.app_main
    assert entry and entry.startswith(("dev.kchaos.examples.",
                                       "org.apache.kafka.streams.examples."))
    for topic in spec.topics:
        first = list(itertools.islice(records(topic, seed=1), 5))
        assert len(first) == 5 and all(r.topic == topic.name for r in first)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "says"), [
    ("topics: [{name: t, value: x, partiton: 3}]", "unknown key 'partiton'"),
    ("topic: [{name: t, value: x}]", "unknown key 'topic'"),
    ("topics: [{name: t, value: x, partitions: zero}]", "expected int"),
    ("topics: [{name: t, value: x, partitions: 0}]", "at least 1"),
    ("topics: [{name: t}]", "a value template or a records file"),
    ("topics: [{name: t, value: '{word}'}]", "{word} is not a field"),
    ("topics: [{name: t, value: x, first: true}]", "needs a count"),
    ("topics: [{name: t, value: x}, {name: t, value: y}]", "named twice"),
    ("topics: [{name: t, value: '{n}', fields: {n: {int: [5, 1]}}}]", "{int: [low, high]}"),
    ("topics: [{name: t, records: nowhere.jsonl}]", "no file"),
    ("topics: []", "at least one input topic"),
    ("compare: {ignore: [a]}\ntopics: [{name: t, value: x}]", "unknown key 'ignore'"),
    ("compare: {grows: {out: float}}\ntopics: [{name: t, value: x}]", "one of text, long"),
    ("compare: {every_key: out}\ntopics: [{name: t, value: x}]", "a list of names"),
])
def test_a_bad_spec_is_one_line_naming_the_file(tmp_path: Path, text: str, says: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(UsageError) as refused:
        read_spec(path)
    message = str(refused.value)
    assert says in message and str(path) in message and "\n" not in message


def test_a_missing_spec_says_what_to_give(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="give an input spec file"):
        read_spec(tmp_path / "none.yaml")


def test_template_fields_draw_anew_at_each_place_and_the_seed_fixes_them(tmp_path: Path) -> None:
    spec = read_spec(write(tmp_path, """
topics:
  - name: t
    keys: 3
    value: "{w}-{w}-{n}-{seq}-{key}"
    fields: {w: [a, b, c, d, e, f, g, h], n: {int: [1, 2]}}
    count: 200
"""))
    topic = spec.topics[0]
    assert topic.fields["n"] == IntField(1, 2)
    drawn = list(records(topic, seed=7))
    assert drawn == list(records(topic, seed=7)) != list(records(topic, seed=8))
    assert len(drawn) == 200
    parts = [r.value.split("-") for r in drawn if r.value]
    assert {p[3] for p in parts} == {str(i) for i in range(200)}  # seq counts
    assert any(p[0] != p[1] for p in parts)  # each {w} is its own draw
    assert {p[2] for p in parts} == {"1", "2"}
    assert {r.key for r in drawn} == {"key-0", "key-1", "key-2"}
    assert all(p[4] == "key" and f"key-{p[5]}" == r.key for p, r in zip(parts, drawn, strict=True))


def test_a_records_file_is_sent_in_order_with_objects_as_json(tmp_path: Path) -> None:
    lines = [{"key": "a", "value": "one"}, {"key": None, "value": {"x": 1}}, {"key": 3}]
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    spec = read_spec(write(tmp_path, "topics: [{name: t, records: r.jsonl}]"))
    got = [(r.key, r.value) for r in records(spec.topics[0], seed=1)]
    assert got == [("a", "one"), (None, '{"x":1}'), ("3", None)]


def test_compare_says_what_output_topics_promise(tmp_path: Path) -> None:
    spec = read_spec(write(tmp_path, """
compare: {grows: {counts: long}, every_key: [joined, counts]}
topics: [{name: t, value: x}]
"""))
    assert dict(spec.compare.grows) == {"counts": "long"}
    assert spec.compare.declared == ("counts", "joined")
