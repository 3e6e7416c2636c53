"""No import cycles among kchaos's modules, including imports hidden inside functions
(the kind that hides a cycle until a caller happens to run that function first) and those
under `if TYPE_CHECKING:`: a cycle the type checker alone sees is still two modules that
each need the other, which a small shared module (a protocol, a type) untangles.

Inside harness/ the same holds of its folders (run, sut, platforms, shrink, report, ...,
each top-level module a folder of its own): a module of one importing a module of another
that imports back into the first ties the two folders into one, though no module cycle
shows; what both need goes below both (harness/config: the run's settings and registries)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "faults", "checker", "common", "workloads")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The kchaos modules `name` imports anywhere in its body, for the type checker too."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        else:
            continue
        for imported in names:
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            # A package importing its own submodules is how packages are made, not a cycle.
            if imported and imported != name and not imported.startswith(name + "."):
                targets.add(imported)
    return targets


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _folder(module: str) -> str | None:
    """The folder of harness/ that holds `module` (`harness.run.command`: `harness.run`);
    None for harness's own __init__ and for modules outside harness."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "harness" and len(parts) > 1 else None


def _folder_graph(graph: dict[str, set[str]]) -> dict[str, dict[str, set[str]]]:
    """For each folder of harness, the folders its modules import, with the imports that
    make each edge (`harness.sut.base -> harness.run.config`), to name a cycle's edges."""
    folders: dict[str, dict[str, set[str]]] = {}
    for module, targets in graph.items():
        source = _folder(module)
        if source is None:
            continue
        edges = folders.setdefault(source, {})
        for target in targets:
            folder = _folder(target)
            if folder is not None and folder != source:
                edges.setdefault(folder, set()).add(f"{module} -> {target}")
    return folders


def test_no_import_cycles() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert graph["harness.cli"], "the scan must see imports"
    assert _cycles(graph) == []


def test_no_folder_cycles_inside_harness() -> None:
    modules = _modules()
    folders = _folder_graph({name: _imports(name, path, modules) for name, path in modules.items()})
    assert {"harness.run", "harness.sut", "harness.platforms", "harness.config"} <= set(folders)
    cycles = _cycles({folder: set(edges) for folder, edges in folders.items()})
    back_up = sorted(edge for cycle in cycles for folder in cycle
                     for target, edges in folders[folder].items() if target in cycle
                     for edge in edges)
    assert cycles == [], f"folders in a loop: {cycles}; their imports: {back_up}"


def test_the_folder_graph_sees_a_loop_no_module_cycle_shows() -> None:
    graph = {"harness.a.x": {"harness.b.y"}, "harness.b.z": {"harness.a.w"},
             "harness.a.w": set(), "harness.b.y": set(), "harness.c": {"harness.a.x"}}
    assert _cycles(graph) == []
    folders = _folder_graph(graph)
    assert _cycles({f: set(edges) for f, edges in folders.items()}) == [["harness.a", "harness.b"]]
    assert folders["harness.a"] == {"harness.b": {"harness.a.x -> harness.b.y"}}


def test_the_cycle_finder_finds_a_hidden_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_imports_for_the_type_checker_count(tmp_path: Path) -> None:
    """A cycle that only `TYPE_CHECKING` hides is still a cycle (the two it hid were
    workloads/worker/thread.py <-> thread_listener.py, platforms/docker.py <->
    docker_network.py: each now reads a small protocol the other implements)."""
    source = tmp_path / "m.py"
    source.write_text("from typing import TYPE_CHECKING\n"
                      "if TYPE_CHECKING:\n    from harness.cli import main\n")
    assert _imports("m", source, _modules()) == {"harness.cli"}
