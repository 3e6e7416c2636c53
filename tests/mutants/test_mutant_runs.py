"""A catalogued mutant as a run setting (`--set mutant=KEY`): refused in one line where it
cannot run, and run from a tree where the worker's module has exactly its one edit."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from refused_run import refused_run

from harness.errors import UsageError
from harness.mutants import catalog
from harness.mutants.catalog import REPO, Mutant, mutant_tree, save_catalog, site_of
from harness.mutants.operators import sites
from harness.sut.base import PodPaths, PodSettings
from harness.sut.python import PythonWorker

FILE = "workloads/worker/checkpoint.py"


@pytest.fixture
def a_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Mutant:
    """A catalog of one real mutant (the checkpoint's fsync dropped), the cache in tmp."""
    site = next(s for s in sites((REPO / FILE).read_text())
                if s.operator == "drop-call" and "os.fsync(f.fileno())" in s.original)
    mutant = Mutant.of(FILE, site)
    monkeypatch.setattr(catalog, "CATALOG", tmp_path / "catalog.json")
    monkeypatch.setenv("KCHAOS_CACHE", str(tmp_path / "cache"))
    save_catalog([mutant], {"test": True})
    return mutant


@pytest.mark.parametrize(("args", "says"), [
    (["--set", "mutant=nosuchkey"], "is not in"),
    (["--sut", "kstreams", "--set", "mutant={key}"], "mutants are of the Python worker"),
    (["--platform", "docker", "--set", "mutant={key}"], "--platform local"),
])
def test_a_mutant_that_cannot_run_is_one_line_254(
    a_catalog: Mutant, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    args: list[str], says: str,
) -> None:
    err = refused_run(tmp_path / "results",
                      ["--time-limit", "10", *[a.format(key=a_catalog.key) for a in args]],
                      capsys)
    assert says in err, err


def test_the_worker_runs_from_a_tree_with_the_one_edit(a_catalog: Mutant) -> None:
    worker = PythonWorker(a_catalog.key)
    tree = Path(worker.env()["PYTHONPATH"].split(os.pathsep)[0])
    assert tree == mutant_tree(a_catalog)
    original = (REPO / FILE).read_text()
    mutated = (tree / FILE).read_text()
    assert "os.fsync(f.fileno())" in original
    assert mutated == original.replace("        os.fsync(f.fileno())\n", "        pass\n", 1)
    assert (tree / "workloads" / "worker" / "thread.py").read_text() == (
        REPO / "workloads" / "worker" / "thread.py").read_text()
    argv = worker.command(PodSettings("127.0.0.1:9092"), "pod-0", PodPaths("/s", "/t", "/c"))
    assert argv[1:4] == ["-P", "-m", "workloads.worker"]  # the working directory not first


def test_a_mutant_whose_site_is_gone_is_refused(a_catalog: Mutant) -> None:
    stale = Mutant("0000000000", FILE, "drop-call", "write_checkpoint", 1, "x()", "pass")
    with pytest.raises(UsageError, match="no longer in the source"):
        site_of(stale)
    assert json.loads(catalog.CATALOG.read_text())["mutants"][0]["key"] == a_catalog.key


def test_each_equivalent_mutant_is_catalogued_and_argued() -> None:
    # A judgment whose key left the catalog would silently shrink the power bench's
    # denominator; one without its argument could not be reviewed.
    judged = catalog.load_equivalent()
    assert judged and set(judged) <= set(catalog.load_catalog())
    assert all(len(why) > 20 for why in judged.values())


def test_an_unreadable_equivalence_file_is_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "equivalent.json"
    broken.write_text("{")
    with pytest.raises(UsageError, match="restore it from git"):
        catalog.load_equivalent(broken)
