"""The mutation operators: each finds its sites, each mutant is valid Python that differs
from the source only where its edit says, keys survive edits elsewhere in the file, and
the switches' and tracing code is left alone."""

from __future__ import annotations

import ast

from hypothesis import given
from hypothesis import strategies as st

from harness.mutants.operators import OPERATORS, apply, sites

SOURCE = '''\
import os


class Task:
    def commit(self, offsets, f):
        if self.next_offset >= offsets[0] and self.open:
            f.write(offsets)
            f.flush()
            os.fsync(f.fileno())
        self.committed = self.next_offset - 1
        if self.cfg.bug(bugs.KAFKA_7672):
            f.flush()
        self.tracer.emit("t", "commit")
'''


def _by_operator() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for site in sites(SOURCE):
        found.setdefault(site.operator, []).append(apply(SOURCE, site.edit))
    return found


def test_every_operator_finds_its_site() -> None:
    found = _by_operator()
    assert set(found) == set(OPERATORS)
    assert any("self.next_offset > offsets[0]" in m for m in found["flip-comparison"])
    assert any("self.committed = self.next_offset\n" in m for m in found["off-by-one"])
    assert any("            pass\n            os.fsync" in m for m in found["drop-call"])
    assert any("f.flush()\n            f.write(offsets)" in m for m in found["swap-statements"])
    assert any("if self.open:" in m for m in found["drop-condition"])


def test_each_mutant_parses_and_changes_only_its_span() -> None:
    for site in sites(SOURCE):
        mutated = apply(SOURCE, site.edit)
        ast.parse(mutated)
        assert mutated != SOURCE
        assert mutated[:site.edit.start] == SOURCE[:site.edit.start]
        assert mutated.endswith(SOURCE[site.edit.end:])
        assert SOURCE[site.edit.start:site.edit.end] == site.original


def test_switches_and_tracing_are_left_alone() -> None:
    for site in sites(SOURCE):
        assert "bug(" not in site.original and "emit(" not in site.original
    # the flush under the switch (line 12) is no site, the one before it (line 8) is
    assert {s.line for s in sites(SOURCE) if s.operator == "drop-call"} == {7, 8, 9}


@given(st.integers(min_value=0, max_value=5))
def test_keys_survive_edits_elsewhere(blank_lines: int) -> None:
    moved = SOURCE.replace("import os\n", "import os\n" + "\n" * blank_lines + "X = 1\n")
    before = {s.key("m.py") for s in sites(SOURCE)}
    after = {s.key("m.py") for s in sites(moved)}
    assert before == after
    assert len(before) == len(sites(SOURCE))  # one key per mutant
