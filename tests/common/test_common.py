"""The shared helpers: atomic writes leave one whole file and no temp file; the JSONL
reader hands back every object and flags, not raises on, a torn line; the poll loop
answers at once when the condition holds and gives up at its deadline."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from common.files import jsonl_objects, write_atomically, write_json_atomically
from common.waiting import wait_until


@given(st.text(), st.text(), st.booleans())
@settings(max_examples=50, deadline=None)
def test_atomic_write_replaces_whole_and_leaves_no_temp(
    first: str, second: str, durable: bool,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.json"
        write_atomically(path, first, durable=durable)
        write_atomically(path, second, durable=durable)
        assert path.read_bytes() == second.encode("utf-8")  # exact: no newline translation
        assert [p.name for p in Path(tmp).iterdir()] == ["f.json"]


def test_json_is_written_sorted_and_readable(tmp_path: Path) -> None:
    path = write_json_atomically(tmp_path / "run.json", {"b": 1, "a": tmp_path})
    assert json.loads(path.read_text()) == {"a": str(tmp_path), "b": 1}
    assert path.read_text().index('"a"') < path.read_text().index('"b"')


def test_jsonl_objects_flags_torn_and_non_object_lines(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text('{"event": "a"}\n\n[1, 2]\n{"event": "b"}\n{"event": "c", "tr')
    rows = [(n, obj) for n, _, obj in jsonl_objects(path)]
    assert rows == [(1, {"event": "a"}), (3, None), (4, {"event": "b"}), (5, None)]
    kept = [obj for _, _, obj in jsonl_objects(path, keep=lambda line: '"b"' in line)]
    assert kept == [{"event": "b"}]


def test_wait_until_answers_when_the_condition_holds() -> None:
    calls: list[int] = []

    def third_time() -> bool:
        calls.append(1)
        return len(calls) == 3

    naps: list[float] = []
    assert wait_until(third_time, timeout_s=60, interval_s=0.5, sleep=naps.append)
    assert len(calls) == 3 and naps == [0.5, 0.5]


def test_wait_until_gives_up_after_a_last_look() -> None:
    looks: list[int] = []
    assert not wait_until(lambda: bool(looks.append(1)), timeout_s=0.05, interval_s=0.01)
    assert len(looks) >= 2  # at least the first look and the one at the deadline
