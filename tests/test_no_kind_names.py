"""The checker and the reports never spell a fault kind's name (nor the broad profile's,
where it stands for a set of kinds): they ask plan.json's traits what a fault does
(common/fault_traits.py), so a new kind is judged and explained with no change there."""

from __future__ import annotations

import ast
from pathlib import Path

from faults.kinds import FAULT_KINDS
from faults.mixes import ALL

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("checker", "harness/report")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants (prose may name a kind)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


# Kind names that are also a record's field (Kafka's `partition`): such a literal counts
# only where it stands for a kind, beside another kind's name or where faults are read.
ALSO_A_FIELD = {"partition"}
FAULT_READERS = ("span", "fault", "need", "planned", "applied", "kind")


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _names_a_kind(node: ast.Constant, parent: ast.AST | None, names: set[str]) -> bool:
    if node.value not in ALSO_A_FIELD:
        return True
    if isinstance(parent, ast.Tuple | ast.List | ast.Set):
        return any(isinstance(e, ast.Constant) and e is not node and e.value in names
                   for e in parent.elts)
    if isinstance(parent, ast.Call):
        return any(word in ast.unparse(parent.func).lower() for word in FAULT_READERS)
    if isinstance(parent, ast.Compare):
        return any("fault" in ast.unparse(side) for side in (parent.left, *parent.comparators))
    return False


def literals(path: Path, names: set[str]) -> list[str]:
    """`file:line name` for each string literal of `path` that is one of `names`."""
    tree = ast.parse(path.read_text())
    prose, parents = _docstrings(tree), _parents(tree)
    return [f"{path.relative_to(REPO)}:{node.lineno} {node.value}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value in names and id(node) not in prose
            and _names_a_kind(node, parents.get(id(node)), names)]


SAMPLE = '''"""kill is prose."""
CRASHES = ("kill", "power-loss")
x = "killer"
rows = F.col("partition"), {"partition": 1}["partition"]
CUTS = ("partition", "netem")
spans = f.spans("partition")
cut = op.fault == "partition"
'''


def test_literals_finds_a_kind_name_in_code_not_in_prose_nor_a_field() -> None:
    sample = REPO / "tests" / "_sample_kinds.py"  # under REPO, for relative_to
    sample.write_text(SAMPLE)
    try:
        found = literals(sample, {"kill", "power-loss", "partition", "netem"})
    finally:
        sample.unlink()
    assert sorted(found) == sorted(f"tests/_sample_kinds.py:{line} {name}" for line, name in (
        (2, "kill"), (2, "power-loss"), (5, "partition"), (5, "netem"), (6, "partition"),
        (7, "partition")))


def test_no_kind_name_in_the_checker_or_the_reports() -> None:
    names = set(FAULT_KINDS) | {ALL.name}
    found = [hit for folder in FOLDERS for path in sorted((REPO / folder).rglob("*.py"))
             for hit in literals(path, names)]
    assert found == [], "ask plan.json's traits (common/fault_traits.py) instead"
