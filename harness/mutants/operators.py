"""Mutation operators over the worker's source: the mistakes a streams runtime makes in its
commit, restore, checkpoint, standby, fencing and global-store code, made mechanically.

The twelve bug switches are known to whoever tunes the fault profiles; a mutant made by an
operator is not. Each operator finds its sites in a module's AST and says how to rewrite
one as a text edit of the source (the rest of the file is left byte for byte):

- `flip-comparison`: `<` and `<=`, `>` and `>=`, `==` and `!=`, `in` and `not in`, `is`
  and `is not` (a boundary one off, a guard inverted);
- `drop-call`: a statement that only calls something durable or decisive (a flush, an
  fsync, a checkpoint, a commit, a wipe, a seek, an unlock ...) becomes `pass`;
- `off-by-one`: `x + 1` becomes `x`, `x - 1` becomes `x` (an offset off by one);
- `swap-statements`: two adjacent call statements trade places (a commit moved before a
  write, a checkpoint before a flush);
- `drop-condition`: one term of an `and` is dropped (a guard that forgot a case).

Sites in the bug switches' own code (`cfg.bug(...)`, `bugs.`) and in tracing or logging are
left alone: a mutant there re-creates a known bug or blinds the checker, it does not make a
new bug of the runtime.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, replace

OPERATORS = ("flip-comparison", "drop-call", "off-by-one", "swap-statements", "drop-condition")

FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
# Calls whose absence a crash-consistent runtime must not survive: persisting, committing,
# fencing, restoring, cleaning up. Matched on the called attribute's or function's name.
DECISIVE_CALLS = frozenset({
    "flush", "fsync", "_fsync_dir", "make_dirs_durable", "checkpoint", "write_checkpoint",
    "delete_checkpoint", "commit", "commit_transaction", "abort_transaction",
    "begin_transaction", "send_offsets_to_transaction", "wipe", "close", "unlock", "lock",
    "seek", "seek_to_beginning", "pause", "resume", "unregister", "register", "restart",
    "complete_restoration", "restart_restoration", "suspend", "committed", "put", "send",
    "difference_update", "discard", "clear", "replace", "unlink", "rmtree", "write",
})
# Sites whose text contains one of these are not mutated (see the module's docstring),
# nor what runs only under a branch whose test names a switch.
SWITCHES = ("bug(", "bugs.")
LEFT_ALONE = (*SWITCHES, "emit(", "log.", "logging.", "tracer", "print(")


@dataclass(frozen=True)
class Edit:
    """Replace source[start:end] (character offsets) with `text`."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Site:
    """One mutant of one module: where, what it was, what it becomes."""

    operator: str
    line: int
    function: str  # the enclosing def, for people
    original: str  # the source text the edit replaces
    edit: Edit
    occurrence: int = 0  # how many identical mutants of its function come before it

    @property
    def mutated(self) -> str:
        return self.edit.text

    def key(self, path: str) -> str:
        """A name that survives edits elsewhere in the file: the operator, the function and
        the texts, hashed (the line is not part of it)."""
        raw = (f"{path}|{self.operator}|{self.function}|{self.original}|{self.mutated}"
               f"|{self.occurrence}")
        return hashlib.sha256(raw.encode()).hexdigest()[:10]


def apply(source: str, edit: Edit) -> str:
    return source[:edit.start] + edit.text + source[edit.end:]


class _Offsets:
    """(line, column) of the AST -> character offset in the source (columns are UTF-8
    byte offsets in the AST)."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def at(self, line: int, col_bytes: int) -> int:
        text = self.lines[line - 1].encode()[:col_bytes].decode()
        return self.starts[line - 1] + len(text)

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.at(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end


def _called_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield f"{node.name}.{item.name}", item
    for item in tree.body:
        if isinstance(item, ast.FunctionDef):
            yield item.name, item


def sites(source: str) -> list[Site]:
    """Every mutant of one module, in source order."""
    finder = _Finder(source)
    for function, fn in _functions(ast.parse(source)):
        for node in finder.reachable(fn):
            finder.expression(function, node)
            for name in ("orelse",) if finder.switched(node) else ("body", "orelse", "finalbody"):
                body = getattr(node, name, None)
                if isinstance(body, list):
                    finder.statements(function, [s for s in body if not finder.switched(s)])
    found = sorted(finder.found, key=lambda s: (s.edit.start, s.operator, s.mutated))
    # Identical mutants of one function (the same call twice) are told apart by their order.
    seen: dict[tuple[str, str, str, str], int] = {}
    numbered = []
    for site in found:
        ident = (site.operator, site.function, site.original, site.mutated)
        numbered.append(replace(site, occurrence=seen.get(ident, 0)))
        seen[ident] = seen.get(ident, 0) + 1
    return numbered


class _Finder:
    def __init__(self, source: str) -> None:
        self.source = source
        self.offsets = _Offsets(source)
        self.found: list[Site] = []

    def switched(self, node: ast.AST) -> bool:
        """A branch taken only under a bug switch: `if cfg.bug(...)` and the like."""
        return isinstance(node, ast.If) and any(m in self.text(node.test) for m in SWITCHES)

    def reachable(self, fn: ast.FunctionDef) -> list[ast.AST]:
        """The nodes of `fn`, less those under a switch's branch (its else is kept)."""
        nodes: list[ast.AST] = []
        pending: list[ast.AST] = [fn]
        while pending:
            node = pending.pop()
            nodes.append(node)
            if self.switched(node):
                assert isinstance(node, ast.If)
                pending.extend([node.test, *node.orelse])
            else:
                pending.extend(ast.iter_child_nodes(node))
        return nodes

    def text(self, node: ast.AST) -> str:
        start, end = self.offsets.span(node)
        return self.source[start:end]

    def add(self, operator: str, function: str, node: ast.AST, replacement: str,
            span: tuple[int, int] | None = None) -> None:
        start, end = span or self.offsets.span(node)
        original = self.source[start:end]
        if any(mark in original for mark in LEFT_ALONE) or original == replacement:
            return
        line: int = getattr(node, "lineno", 0)
        self.found.append(Site(operator, line, function, original,
                               Edit(start, end, replacement)))

    def expression(self, function: str, node: ast.AST) -> None:
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            flipped = FLIPPED.get(type(node.ops[0]))
            if flipped is not None:
                mutant = ast.Compare(node.left, [flipped()], node.comparators)
                self.add("flip-comparison", function, node, ast.unparse(mutant))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) \
                and isinstance(node.right, ast.Constant) and node.right.value == 1:
            self.add("off-by-one", function, node, self.text(node.left))
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            for dropped in range(len(node.values)):
                kept = [v for i, v in enumerate(node.values) if i != dropped]
                replacement = (self.text(kept[0]) if len(kept) == 1
                               else " and ".join(f"({self.text(v)})" for v in kept))
                self.add("drop-condition", function, node, replacement)

    def statements(self, function: str, body: list[ast.stmt]) -> None:
        for stmt, nxt in zip(body, [*body[1:], None], strict=False):
            if _decisive(stmt):
                self.add("drop-call", function, stmt, "pass")
            if nxt is None or not (_is_call(stmt) and _is_call(nxt)) \
                    or stmt.end_lineno == nxt.lineno or not (_decisive(stmt) or _decisive(nxt)):
                continue  # two calls, on lines of their own, one of them decisive
            start, _ = self.offsets.span(stmt)
            _, end = self.offsets.span(nxt)
            indent = self.offsets.lines[nxt.lineno - 1][:nxt.col_offset]
            self.add("swap-statements", function, stmt,
                     f"{self.text(nxt)}\n{indent}{self.text(stmt)}", (start, end))


def _is_call(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)


def _decisive(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and _called_name(stmt.value) in DECISIVE_CALLS)
