"""The nightly matrix schema (harness/nightly/matrix.py): every mistake a person makes in
the YAML is one line and exit 254 before any run starts; any matrix the schema accepts
expands to the cells it describes (Hypothesis)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from faults.plan import PROFILES
from harness.config.run import known_bugs
from harness.errors import UsageError
from harness.nightly import Cell, load_matrix, parse_matrix
from harness.nightly.matrix import MatrixDoc

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("doc", "says"), [
    ({"profiles": ["all"], "bugs": "KAFKA-7672"}, "`bugs`"),  # was: one bug per letter
    ({"profiles": ["all"], "bugs": ["KAFKA-7672"]}, "`bugs.0`"),  # a set, not a name
    ({"profile": ["all"]}, "`profile`"),  # misspelt key
    ({"profiles": ["all"], "seed": [1]}, "`seed`"),
    ({"include": [{"profile": "kill", "bug": ["KIP-406"]}]}, "`include.0.bug`"),
    ({"profiles": ["al"]}, "unknown profile 'al'"),
    ({"profiles": ["all"], "bugs": [["KAFKA-7762"]]}, "unknown bug switch 'KAFKA-7762'"),
    ({"include": [{"profile": "kill", "bugs": ["nosuch"]}]}, "unknown bug switch"),
    ({"profiles": ["all"], "time_limit_s": "10x"}, "not a duration"),
    ({"profiles": ["all"], "time_limit_s": -1}, "`time_limit_s`"),
    ({"profiles": ["all"], "time_limit_s": True}, "`time_limit_s`"),
    ({"profiles": ["all"], "run_timeout_s": "soon"}, "`run_timeout_s`"),
    ({"profiles": ["all"], "seeds": ["1"]}, "`seeds.0`"),
    ({"profiles": ["all"], "seeds": [-1]}, "`seeds.0`"),
    ({"profiles": ["all"], "extra_args": "--rate 5"}, "`extra_args`"),
    ({"profiles": ["all"], "extra_args": ["--rte", "5"]}, "extra_args"),
    ({"include": [{"profile": "kill", "args": ["--guarantee"]}]}, "include.0.args"),
    ({"include": [{"bugs": []}]}, "`include.0.profile`"),
    ({"include": [{"profile": "kill", "settings": {"partition": 4}}]},
     "`include.0.settings`: partition=4: give KEY=VALUE with a run setting as KEY (did you "
     "mean 'partitions'?)"),
    ({"include": [{"profile": "kill", "settings": {"partitions": "four"}}]},
     "partitions takes a whole number, not 'four'"),
    ({"include": [{"profile": "kill", "settings": {"bugs": "KAFKA-7672"}}]},
     "bugs is not a single value"),
    ({"include": [{"profile": "kill", "settings": {"sut": ["kstreams"]}}]},
     "`include.0.settings.sut"),
    ({"seeds": [1]}, "no runs"),
    ([], "expected a mapping"),
    ("profiles: all", "expected a mapping"),
])
def test_bad_matrix_is_one_line(doc: Any, says: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_matrix(doc, "m.yaml")
    message = str(caught.value)
    assert says in message and "\n" not in message and message.startswith("m.yaml")


def test_durations_may_be_written_with_units() -> None:
    m = parse_matrix({"profiles": ["all"], "time_limit_s": "90s", "run_timeout_s": "15m"})
    assert (m.time_limit_s, m.run_timeout_s) == (90.0, 900.0)


def test_matrix_file_mistakes_stop_the_nightly_before_any_run(tmp_path: Path) -> None:
    matrix = tmp_path / "m.yaml"
    matrix.write_text("profiles: [all]\nbugs: KAFKA-7672\n")
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, "-m", "harness", "--results-dir", str(results), "nightly",
         "--matrix", str(matrix)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert done.returncode == 254
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "`bugs`" in lines[0], done.stderr
    assert not results.exists()  # no nightly folder, no run


def test_binary_or_broken_yaml(tmp_path: Path) -> None:
    binary = tmp_path / "m.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(UsageError) as caught:
        load_matrix(binary)
    assert "\n" not in str(caught.value)
    binary.write_text("profiles: [all\n  seeds: [1\n")
    with pytest.raises(UsageError, match="not valid YAML") as caught:
        load_matrix(binary)
    assert "\n" not in str(caught.value)


# -- properties -----------------------------------------------------------------------------

names = st.sampled_from(PROFILES)
bug_sets = st.lists(st.sampled_from(known_bugs()), max_size=2, unique=True)
seed_lists = st.lists(st.integers(0, 50), max_size=4)
includes = st.fixed_dictionaries(
    {"profile": names},
    optional={"bugs": bug_sets, "seeds": seed_lists,
              "args": st.sampled_from([[], ["--rate", "5"], ["--guarantee", "at_least_once"]])},
)
matrices = st.fixed_dictionaries(
    {},
    optional={
        "profiles": st.lists(names, max_size=3),
        "seeds": seed_lists,
        "bugs": st.lists(bug_sets, max_size=3),
        "include": st.lists(includes, max_size=3),
        "time_limit_s": st.one_of(st.integers(1, 600), st.sampled_from(["90s", "2m", "1h"])),
    },
)


def _expected_cells(doc: dict[str, Any]) -> set[Cell]:
    seeds = doc.get("seeds") or [1]
    cells = {Cell(p, s, tuple(b)) for p in doc.get("profiles", [])
             for b in doc.get("bugs") or [[]] for s in seeds}
    for inc in doc.get("include", []):
        cells |= {Cell(inc["profile"], s, tuple(inc.get("bugs", [])), tuple(inc.get("args", [])))
                  for s in inc.get("seeds") or seeds}
    return cells


@settings(max_examples=150, deadline=None)
@given(matrices)
@example({"profiles": ["all"], "bugs": [[], ["KIP-406"]], "seeds": [2, 1]})
@example({"include": [{"profile": "kill", "seeds": [3]}], "seeds": [1]})
def test_an_accepted_matrix_expands_to_the_cells_it_describes(doc: dict[str, Any]) -> None:
    expected = _expected_cells(doc)
    if not expected:
        with pytest.raises(UsageError, match="no runs"):
            parse_matrix(doc)
        return
    m = parse_matrix(doc)
    assert set(m.cells) == expected and len(m.cells) == len(expected)  # each cell once
    assert [c.seed for c in m.cells] == sorted(c.seed for c in m.cells)  # seed-major
    assert m.time_limit_s > 0 and m.run_timeout_s > m.time_limit_s
    # The same matrix written as YAML and read back is the same matrix.
    assert parse_matrix(yaml.safe_load(yaml.safe_dump(doc))) == m


_keys = st.sampled_from(sorted(MatrixDoc.model_fields))
junk = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.one_of(_keys, st.text(max_size=6)), inner,
                                            max_size=3)),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(junk)
@example({"\n": None})  # a key with a newline in it
@example({"profiles": ["all"], "time_limit_s": float("nan")})
def test_any_document_is_a_matrix_or_one_usage_error(doc: Any) -> None:
    try:
        m = parse_matrix(doc, "m.yaml")
    except UsageError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("m.yaml")
    else:
        assert m.cells and all(c.profile in PROFILES for c in m.cells)
        assert all(b in known_bugs() for c in m.cells for b in c.bugs)


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "harness").glob("matrix_*.yaml")))
def test_the_shipped_matrices_pass_the_schema(name: str) -> None:
    doc = yaml.safe_load((REPO / "harness" / name).read_text())
    MatrixDoc.model_validate(doc)
    m = load_matrix(REPO / "harness" / name)
    assert all(c.profile in PROFILES for c in m.cells)
    assert all(b in known_bugs() for c in m.cells for b in c.bugs)


def test_a_cell_names_its_settings_and_the_run_gets_them_typed() -> None:
    m = parse_matrix({"include": [{"profile": "KAFKA-20685", "seeds": [2], "settings": {
        "sut": "kstreams", "kstreams_version": "4.1.2", "partitions": 6,
        "time_limit_s": "90"}}]})
    (cell,) = m.cells
    assert cell.settings == (("sut", "kstreams"), ("kstreams_version", "4.1.2"),
                             ("partitions", "6"), ("time_limit_s", "90.0"))
    assert cell.setting("sut") == "kstreams" and cell.setting("partitions") == 6
    assert "sut=kstreams" in cell.name
    argv = cell.run_args(m.time_limit_s, m.extra_args)
    assert argv[-4:] == ["--set=sut=kstreams", "--set=kstreams_version=4.1.2",
                         "--set=partitions=6", "--set=time_limit_s=90.0"]
    from harness.nightly.matrix import time_limits

    assert time_limits(m) == [90.0]  # a setting's time limit is the run's, as an option's
