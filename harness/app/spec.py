"""The input spec of an app run (docs/your-app.md, "The input spec"): the app's input
topics and how their records are made, seeded like the ledger's events.

A topic's records come from a value template with seeded fields, or from a JSONL file of
records sent in order. A topic with `first: true` (a table's contents) is sent in full
before the others start, so a join finds it loaded. Everything is checked when the file is
read: a misspelt key or a bad value is one line (UsageError, exit 254) naming the file.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from harness.errors import UsageError

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
BUILT_IN = ("key", "seq")  # the record's key, its number in the topic


@dataclass(frozen=True)
class IntField:
    low: int
    high: int


Field = tuple[str, ...] | IntField  # a choice of strings, or an integer in [low, high]


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int = 3
    keys: int = 100  # key space: `<key_prefix>0` .. `<key_prefix>{keys-1}`, drawn uniformly
    key_prefix: str = "key-"
    value: str | None = None  # template: `{field}` draws anew at each place
    fields: Mapping[str, Field] = field(default_factory=dict)
    records: Path | None = None  # JSONL of {"key": ..., "value": ...}, sent in file order
    count: int | None = None  # at most this many records (None: until the time limit)
    first: bool = False  # sent in full before the other topics
    weight: float = 1.0  # its share of the run's rate among the topics sent together


# How a growing output topic writes its numbers (compare.grows): as decimal text, or as
# Kafka's Serdes.Long / Serdes.Integer (big-endian two's complement).
NUMBER_FORMATS = ("text", "long", "integer")


@dataclass(frozen=True)
class Compare:
    ignore_json_fields: tuple[str, ...] = ()
    # What an output topic promises beyond its sequence, for the at-least-once judgments
    # (docs/your-app.md): topic -> number format, for a value per key that only grows with
    # each record processed (a count, a sum of non-negative numbers) ...
    grows: Mapping[str, str] = field(default_factory=dict)
    # ... and topics where every record processed emits on the key the reference gives it.
    every_key: tuple[str, ...] = ()

    @property
    def declared(self) -> tuple[str, ...]:
        """The output topics these name."""
        return tuple(dict.fromkeys([*self.grows, *self.every_key]))


@dataclass(frozen=True)
class InputSpec:
    path: Path
    topics: tuple[TopicSpec, ...]
    app_class: str | None = None
    app_main: str | None = None  # the app's main, when the spec names the entry that way
    app_args: str | None = None  # its arguments, shell-quoted
    output_partitions: int | None = None  # of the sink topics (None: the most of the inputs)
    compare: Compare = Compare()
    config: tuple[str, ...] = ()  # KEY=VALUE given to the topology (pods and reference)

    @property
    def sink_partitions(self) -> int:
        return self.output_partitions or max(t.partitions for t in self.topics)


def _refuse(path: Path, where: str, what: str) -> UsageError:
    return UsageError(f"{path}: {where}: {what} (see docs/your-app.md, the input spec)")


def _strict(path: Path, where: str, doc: Any, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(doc, Mapping):
        raise _refuse(path, where, f"expected a mapping, got {type(doc).__name__}")
    unknown = sorted(set(doc) - set(allowed))
    if unknown:
        raise _refuse(path, where, f"unknown key {unknown[0]!r}; known: {', '.join(allowed)}")
    return doc


def _typed(path: Path, where: str, value: Any, kind: type, minimum: float | None = None) -> Any:
    ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value, ok = float(value), True
    if not ok:
        raise _refuse(path, where, f"expected {kind.__name__}, got {value!r}")
    if minimum is not None and value < minimum:
        raise _refuse(path, where, f"must be at least {minimum}, got {value!r}")
    return value


def _field(path: Path, where: str, doc: Any) -> Field:
    if isinstance(doc, list) and doc and all(isinstance(v, str | int | float) for v in doc):
        return tuple(str(v) for v in doc)
    if isinstance(doc, Mapping) and set(doc) == {"int"}:
        bounds = doc["int"]
        if (isinstance(bounds, list) and len(bounds) == 2
                and all(isinstance(b, int) for b in bounds) and bounds[0] <= bounds[1]):
            return IntField(bounds[0], bounds[1])
    raise _refuse(path, where, "a field is a non-empty list of choices or {int: [low, high]}")


TOPIC_KEYS = tuple(f.name for f in fields(TopicSpec))


def _topic(path: Path, i: int, doc: Any) -> TopicSpec:
    where = f"topics[{i}]"
    doc = _strict(path, where, doc, TOPIC_KEYS)
    if "name" not in doc:
        raise _refuse(path, where, "every topic needs a name")
    given: dict[str, Any] = {"name": _typed(path, f"{where}.name", doc["name"], str)}
    for key, kind, minimum in (("partitions", int, 1), ("keys", int, 1), ("key_prefix", str, None),
                               ("value", str, None), ("count", int, 0), ("first", bool, None),
                               ("weight", float, 0.0)):
        if key in doc:
            given[key] = _typed(path, f"{where}.{key}", doc[key], kind, minimum)
    fields_doc = _strict(path, f"{where}.fields", doc.get("fields") or {},
                         tuple(str(k) for k in (doc.get("fields") or {})))
    given["fields"] = {str(k): _field(path, f"{where}.fields.{k}", v)
                       for k, v in fields_doc.items()}
    if "records" in doc:
        records = path.parent / _typed(path, f"{where}.records", doc["records"], str)
        if not records.is_file():
            raise _refuse(path, f"{where}.records", f"no file {records}")
        given["records"] = records
    topic = TopicSpec(**given)
    if (topic.value is None) == (topic.records is None):
        raise _refuse(path, where, "give a value template or a records file (one of them)")
    if topic.value is not None:
        for name in PLACEHOLDER.findall(topic.value):
            if name not in topic.fields and name not in BUILT_IN:
                raise _refuse(path, f"{where}.value", f"{{{name}}} is not a field; give it "
                              f"under fields, or use {{key}} or {{seq}}")
    if topic.first and topic.count is None and topic.records is None:
        raise _refuse(path, where, "a topic sent first needs a count (or a records file)")
    return topic


def _names(path: Path, where: str, doc: Any) -> tuple[str, ...]:
    if not isinstance(doc, list) or not all(isinstance(f, str) for f in doc):
        raise _refuse(path, where, "a list of names")
    return tuple(doc)


def _compare(path: Path, doc: Any) -> Compare:
    doc = _strict(path, "compare", doc, ("ignore_json_fields", "grows", "every_key"))
    grows = _strict(path, "compare.grows", doc.get("grows") or {},
                    tuple(str(k) for k in (doc.get("grows") or {})))
    for topic, number in grows.items():
        if number not in NUMBER_FORMATS:
            raise _refuse(path, f"compare.grows.{topic}",
                          f"how its numbers are written: one of {', '.join(NUMBER_FORMATS)}")
    return Compare(_names(path, "compare.ignore_json_fields", doc.get("ignore_json_fields") or []),
                   {str(k): str(v) for k, v in grows.items()},
                   _names(path, "compare.every_key", doc.get("every_key") or []))


def read_spec(path: Path) -> InputSpec:
    """The spec at `path`, checked; UsageError naming the first problem."""
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise UsageError(f"--input {path}: cannot read it ({exc.strerror}); give an input "
                         f"spec file (docs/your-app.md)") from exc
    except yaml.YAMLError as exc:
        raise UsageError(f"--input {path}: not YAML ({str(exc).splitlines()[0]})") from exc
    doc = _strict(path, "top level", doc,
                  ("app_class", "app_main", "app_args", "topics", "output_partitions",
                   "compare", "config"))
    entry = {key: _typed(path, key, doc[key], str) for key in ("app_class", "app_main", "app_args")
             if doc.get(key) is not None}
    if "app_class" in entry and "app_main" in entry:
        raise _refuse(path, "top level", "give app_class or app_main, not both")
    if "app_args" in entry and "app_main" not in entry:
        raise _refuse(path, "app_args", "the arguments of app_main: give app_main too")
    topics_doc = doc.get("topics")
    if not isinstance(topics_doc, list) or not topics_doc:
        raise _refuse(path, "topics", "give a list of at least one input topic")
    topics = tuple(_topic(path, i, t) for i, t in enumerate(topics_doc))
    names = [t.name for t in topics]
    if len(set(names)) != len(names):
        raise _refuse(path, "topics", "a topic is named twice")
    compare = _compare(path, doc.get("compare") or {})
    config = doc.get("config") or {}
    if not isinstance(config, Mapping):
        raise _refuse(path, "config", "a mapping of Kafka Streams / app settings")
    return InputSpec(
        path=path, topics=topics, app_class=entry.get("app_class"),
        app_main=entry.get("app_main"), app_args=entry.get("app_args"),
        output_partitions=(None if doc.get("output_partitions") is None else
                           _typed(path, "output_partitions", doc["output_partitions"], int, 1)),
        compare=compare,
        config=tuple(f"{k}={v}" for k, v in config.items()),
    )


@dataclass(frozen=True)
class Record:
    topic: str
    key: str | None
    value: str | None


def records(topic: TopicSpec, seed: int) -> Iterator[Record]:
    """The topic's records for a seed: the same seed, the same records."""
    if topic.records is not None:
        yield from _file_records(topic)
        return
    assert topic.value is not None
    rng = random.Random(f"{seed}:{topic.name}")
    seq = 0
    while topic.count is None or seq < topic.count:
        key = f"{topic.key_prefix}{rng.randrange(topic.keys)}"
        yield Record(topic.name, key, render(topic, rng, key, seq))
        seq += 1


def render(topic: TopicSpec, rng: random.Random, key: str, seq: int) -> str:
    assert topic.value is not None

    def draw(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in topic.fields:
            spec = topic.fields[name]
            if isinstance(spec, IntField):
                return str(rng.randint(spec.low, spec.high))
            return rng.choice(spec)
        return key if name == "key" else str(seq)

    return PLACEHOLDER.sub(draw, topic.value)


def _file_records(topic: TopicSpec) -> Iterator[Record]:
    assert topic.records is not None
    with topic.records.open() as lines:
        for n, line in enumerate(lines, 1):
            if topic.count is not None and n > topic.count:
                return
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
                key, value = doc.get("key"), doc.get("value")
            except (ValueError, AttributeError) as exc:
                raise UsageError(f"{topic.records}:{n}: not a JSON object with key and value "
                                 f"({exc})") from exc
            if value is not None and not isinstance(value, str):
                value = json.dumps(value, separators=(",", ":"))
            yield Record(topic.name, None if key is None else str(key), value)
