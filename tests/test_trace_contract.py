"""The trace contract (workloads/ledger/trace_contract.py) against the code that writes and
reads traces: every event (and field) the Python worker, the two Kafka Streams apps and
the harness's state-directory watch write is declared there, with exactly those writers;
every event the readers name is declared and written by someone; results/README.md's
table names every event. The writers are scanned, not run: the worker's `emit` calls with
`ast`, the Java apps' `trace.emit`/`trace.emitAs` calls with a small tokenizer."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

from checker.coverage.knobs import CONFIG_EVENT
from workloads.ledger import trace_contract as contract
from workloads.ledger.trace_contract import EVENTS, Emitter

REPO = Path(__file__).resolve().parents[1]
CONTRACT_MODULE = "workloads.ledger.trace_contract"
CONSTANTS = {k: v for k, v in vars(contract).items()
             if k.isupper() and isinstance(v, str) and v in contract.NAMES}
GROUPS = {k: v for k, v in vars(contract).items()
          if k.isupper() and isinstance(v, tuple) and v and set(v) <= contract.NAMES}

# name -> {field}: what one writer writes, found by scanning its source.
Written = dict[str, set[str]]


def _constant(node: ast.expr) -> str | None:
    """An event name: a string literal, or a constant of the contract by name."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    return CONSTANTS.get(name) if name is not None else None


def _keywords(call: ast.Call) -> set[str]:
    fields = {k.arg for k in call.keywords if k.arg is not None}
    for k in call.keywords:  # **{"from": ..., "to": ...}
        if k.arg is None and isinstance(k.value, ast.Dict):
            fields |= {key.value for key in k.value.keys
                       if isinstance(key, ast.Constant) and isinstance(key.value, str)}
    return fields


def worker_events() -> Written:
    """`<x>.tracer.emit(thread, event, **fields)`, and a module's own `emit(event,
    **fields)` wrapper (state_manager: adds `task`). A call whose event is no literal
    fails the scan: it could write anything."""
    written: Written = defaultdict(set)
    for path in sorted((REPO / "workloads/worker").glob("*.py")):
        tree = ast.parse(path.read_text())
        wrapper = any(isinstance(f, ast.FunctionDef) and f.name == "emit"
                      and [a.arg for a in f.args.args][:2] == ["self", "event"]
                      for f in ast.walk(tree))
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "emit"):
                continue
            owner = ast.unparse(call.func.value)
            if owner == "self" and wrapper:
                index, extra = 0, {"task"}
            else:
                assert owner.endswith("tracer"), (
                    f"{path.name}:{call.lineno}: {owner}.emit: teach this scan that emitter")
                index, extra = 1, set()
            assert len(call.args) > index, f"{path.name}:{call.lineno}: emit without event"
            name = _constant(call.args[index])
            if name is None and wrapper and ast.unparse(call.args[index]) == "event":
                continue  # the wrapper's own body: tracer.emit(self.thread, event, ...)
            assert name is not None, (
                f"{path.name}:{call.lineno}: {ast.unparse(call)} names no literal event")
            written[name] |= _keywords(call) | extra
    return written


JAVA_CALL = re.compile(r"\btrace\.(emit|emitAs)\(")


def _java_args(text: str, start: int) -> list[str]:
    """The top-level arguments of the call whose `(` is just before `start`."""
    args, depth, current, i = [], 0, "", start
    while i < len(text):
        c = text[i]
        if c == '"':
            end = i + 1
            while text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            current += text[i:end + 1]
            i = end + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                args.append(current.strip())
                return args
            depth -= 1
        elif c == "," and depth == 0:
            args.append(current.strip())
            current = ""
            i += 1
            continue
        current += c
        i += 1
    raise AssertionError("unterminated call")


def _literal(arg: str) -> str | None:
    m = re.fullmatch(r'"([^"\\]*)"', arg)
    return m.group(1) if m else None


def java_events(tree: str) -> Written:
    """`trace.emit(event, key, value, ...)` and `trace.emitAs(thread, event, ...)`, in the
    tree and in the sources every tree compiles (workloads/kstreams-common)."""
    written: Written = defaultdict(set)
    sources = [*(REPO / tree / "src").rglob("*.java"),
               *(REPO / "workloads" / "kstreams-common" / "src").rglob("*.java")]
    for path in sorted(sources):
        text = path.read_text()
        if path.name != "Trace.java":  # every emit goes through the `trace` field
            assert len(re.findall(r"\.emit(?:As)?\(", text)) == len(JAVA_CALL.findall(text)), (
                f"{path.name}: an emit this scan does not see")
        for m in JAVA_CALL.finditer(text):
            args = _java_args(text, m.end())
            rest = args[1:] if m.group(1) == "emit" else args[2:]
            name = _literal(args[0] if m.group(1) == "emit" else args[1])
            assert name is not None, f"{path.name}: {m.group(0)} names no literal event"
            keys = rest[0::2]
            assert len(rest) % 2 == 0 and all(_literal(k) for k in keys), (
                f"{path.name}: {name}: fields are not key, value pairs: {rest}")
            written[name] |= {str(_literal(k)) for k in keys}
    return written


def statedir_events() -> Written:
    """harness/run/statedir.py's `line(ts_ns, event, task, **fields)`, with `task` and
    `source` on every line."""
    written: Written = defaultdict(set)
    tree = ast.parse((REPO / "harness/run/statedir.py").read_text())
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and ast.unparse(call.func) == "line":
            name = _constant(call.args[1])
            assert name is not None, f"statedir.py:{call.lineno}: no event constant"
            written[name] |= _keywords(call) | {"task", "source"}
    return written


WRITERS = {
    Emitter.WORKER: worker_events,
    Emitter.KSTREAMS: lambda: java_events("workloads/kstreams"),
    Emitter.KSTREAMS_LEGACY: lambda: java_events("workloads/kstreams-legacy"),
    Emitter.STATEDIR: statedir_events,
}
# A few events each scan must see: a scan that sees nothing cannot pass.
KNOWN = {
    Emitter.WORKER: {"task-running", "txn-commit", "checkpoint-write", "dedup-skip",
                     "task-init", "client-state"},
    Emitter.KSTREAMS: {"task-running", "task-first-record", "txn-commit", "restore-start",
                       "standby-update-start", "client-state"},
    Emitter.KSTREAMS_LEGACY: {"task-running", "task-first-record", "app-config",
                              "restore-suspended"},
    Emitter.STATEDIR: {"checkpoint-write", "checkpoint-delete", "sst-file"},
}


@pytest.mark.parametrize("emitter", list(WRITERS), ids=lambda e: e.name)
def test_writers_events_are_declared_with_their_writer(emitter: Emitter) -> None:
    written = WRITERS[emitter]()
    assert KNOWN[emitter] <= set(written), "the scan missed events it must see"
    undeclared = set(written) - contract.NAMES
    assert not undeclared, f"{emitter.name} writes events the contract lacks: {undeclared}"
    assert set(written) == contract.emitted_by(emitter), (
        f"{emitter.name}: written but not declared as its: "
        f"{set(written) - contract.emitted_by(emitter)}; declared but not written: "
        f"{contract.emitted_by(emitter) - set(written)}")
    for name, fields in written.items():
        extra = fields - set(EVENTS[name].fields)
        assert not extra, f"{emitter.name} writes {name} fields the contract lacks: {extra}"


def test_every_declared_field_is_written() -> None:
    written: Written = defaultdict(set)
    for scan in WRITERS.values():
        for name, fields in scan().items():
            written[name] |= fields
    stale = {n: set(e.fields) - written[n] for n, e in EVENTS.items()
             if set(e.fields) - written[n]}
    assert not stale, f"declared fields nobody writes: {stale}"


def test_every_event_has_a_writer_or_a_reason() -> None:
    for name, event in EVENTS.items():
        assert event.name == name
        assert bool(event.emitters) != bool(event.reserved), name
        assert event.doc, name


READERS = [*sorted((REPO / "checker").rglob("*.py")), REPO / "faults/observe.py",
           *sorted((REPO / "harness").rglob("*.py"))]
# Files whose event names are not yet the contract's constants (owned elsewhere); their
# literals are still checked against the contract below.
LITERAL_READERS = {"harness/run/lifecycle.py", "harness/sut/kstreams.py"}
# Evidence lines the checker makes up, not trace lines (a coverage class's settings).
NOT_TRACED = {CONFIG_EVENT}
# Strings equal to an event name that name something else.
NOT_EVENTS = {("checker/checks/__init__.py", "dedup-skip"),  # the check's name
              # methods a mutation operator drops (the worker's commit and wipe)
              ("harness/mutants/operators.py", "commit"),
              ("harness/mutants/operators.py", "wipe")}


EVENT_EXPR = re.compile(r".*(\.get\('event'\)|\['event'\]|F\.col\('event'\))")


def _event_expr(node: ast.expr) -> bool:
    """`e.get("event")`, `e["event"]`, `F.col("event")`."""
    return EVENT_EXPR.fullmatch(ast.unparse(node)) is not None


def read_events() -> dict[str, set[str]]:
    """Event -> the reader files that name it: the contract's constants and groups they
    import, and literals compared with an event (`e.get("event") == "x"`,
    `F.col("event").isin(...)`)."""
    read: dict[str, set[str]] = defaultdict(set)
    for path in READERS:
        rel = str(path.relative_to(REPO))
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module == CONTRACT_MODULE:
                for alias in node.names:
                    if alias.name in CONSTANTS:
                        names.append(CONSTANTS[alias.name])
                    names.extend(GROUPS.get(alias.name, ()))
            elif isinstance(node, ast.Compare) and any(
                    _event_expr(x) for x in [node.left, *node.comparators]):
                for x in node.comparators:
                    elts = x.elts if isinstance(x, (ast.Tuple, ast.List, ast.Set)) else [x]
                    names += [e.value for e in elts if isinstance(e, ast.Constant)
                              and isinstance(e.value, str)]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "isin" and _event_expr(node.func.value)):
                names += [a.value for a in node.args if isinstance(a, ast.Constant)
                          and isinstance(a.value, str)]
            for name in names:
                read[name].add(rel)
    return read


def test_readers_read_declared_events_that_someone_writes() -> None:
    read = read_events()
    assert {"task-running", "txn-commit", "client-state", "checkpoint-write",
            "task-closed"} <= set(read), "the reader scan missed events it must see"
    undeclared = {n: sorted(f) for n, f in read.items()
                  if n not in contract.NAMES and n not in NOT_TRACED}
    assert not undeclared, f"read but not in the contract: {undeclared}"
    unwritten = {n for n in read if n in contract.NAMES and not EVENTS[n].emitters}
    assert not unwritten, f"read but written by nobody: {unwritten}"


def test_readers_use_the_constants() -> None:
    """No event-name literal left in the readers that use the contract."""
    left = []
    for path in READERS:
        rel = str(path.relative_to(REPO))
        if rel in LITERAL_READERS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Constant) and node.value in contract.NAMES
                    and (rel, node.value) not in NOT_EVENTS):
                left.append(f"{rel}:{node.lineno}: {node.value!r}")
    assert not left, "use workloads.ledger.trace_contract's constants:\n" + "\n".join(left)


def test_readme_table_names_every_event() -> None:
    text = (REPO / "results/README.md").read_text()
    section = text.split("## Trace events", 1)[1].split("\n## ", 1)[0]
    assert "workloads/ledger/trace_contract.py" in section
    table = "\n".join(line for line in section.splitlines() if line.startswith("|"))
    missing = sorted(n for n in contract.NAMES if f"`{n}`" not in table)
    assert not missing, f"results/README.md's trace table lacks {missing}"
    for row in table.splitlines()[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        by = Emitter.NOBODY
        for code in cells[1].split():
            by |= README_BY[code]
        for name in re.findall(r"`([a-z-]+)`", cells[0]):
            assert EVENTS[name].emitters == by, f"README says {name} is written by {cells[1]}"


README_BY = {"W": Emitter.WORKER, "K": contract.KSTREAMS_APPS, "KL": Emitter.KSTREAMS_LEGACY,
             "K3.7": Emitter.KSTREAMS, "S": Emitter.STATEDIR}
