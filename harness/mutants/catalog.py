"""The catalog of the worker's mutants (harness/mutants/catalog.json), and the source tree
a run of one of them executes.

A catalogued mutant is named by its key (operator, function and texts hashed: it survives
edits elsewhere in its file). `kchaos run --set mutant=KEY` runs the Python worker from a
copy of `workloads/` with that one edit, built once into the cache folder; the run's
config records the key, so repro, shrink and the nightly replay it. A catalog whose site is
no longer in the source (the file was edited there) is refused in one line: generate it
again (`python -m harness.mutants generate`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from common.files import write_atomically
from harness.errors import UsageError
from harness.kafka.jars import cache_root
from harness.mutants.operators import Site, apply, sites

REPO = Path(__file__).resolve().parents[2]
WORKLOADS = REPO / "workloads"
CATALOG = Path(__file__).with_name("catalog.json")
EQUIVALENT = Path(__file__).with_name("equivalent.json")
COMPLETE_MARKER = ".complete"


@dataclass(frozen=True)
class Mutant:
    key: str
    file: str  # relative to the repository
    operator: str
    function: str
    line: int  # where it was when catalogued (for people; the key finds it)
    original: str
    mutated: str

    @staticmethod
    def of(file: str, site: Site) -> Mutant:
        return Mutant(site.key(file), file, site.operator, site.function, site.line,
                      site.original, site.mutated)

    def label(self) -> str:
        first = self.original.splitlines()[0].strip()
        return f"{self.file}:{self.line} {self.function} {self.operator}: {first}"


def load_catalog(path: Path | None = None) -> dict[str, Mutant]:
    path = path or CATALOG
    try:
        raw = json.loads(path.read_text())
        return {m["key"]: Mutant(**m) for m in raw["mutants"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"cannot read the mutant catalog {path} ({exc}): restore it from "
                         "git or run `python -m harness.mutants generate`") from exc


def load_equivalent(path: Path | None = None) -> dict[str, str]:
    """Keys judged equivalent (nothing kchaos checks can tell them from the worker), each
    with its argument; kept apart from the generated catalog, so a new catalog keeps them."""
    try:
        raw = json.loads((path or EQUIVALENT).read_text())
        return {str(k): str(v) for k, v in raw["mutants"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"cannot read {path or EQUIVALENT} ({exc}): restore it from git") from exc


def save_catalog(mutants: list[Mutant], provenance: dict[str, object],
                 path: Path | None = None) -> None:
    doc = {"provenance": provenance, "mutants": [asdict(m) for m in mutants]}
    write_atomically(path or CATALOG, json.dumps(doc, indent=1) + "\n")


def find_mutant(key: str, path: Path | None = None) -> Mutant:
    catalog = load_catalog(path)
    if key not in catalog:
        raise UsageError(f"mutant {key!r} is not in {path or CATALOG}: choose one of its keys "
                         f"(`python -m harness.mutants list`)")
    return catalog[key]


def site_of(mutant: Mutant) -> Site:
    """The mutant's site in today's source; UsageError if the file changed there."""
    source = (REPO / mutant.file).read_text()
    for site in sites(source):
        if site.key(mutant.file) == mutant.key:
            return site
    raise UsageError(f"mutant {mutant.key} ({mutant.label()}) is no longer in the source: "
                     "generate the catalog again (`python -m harness.mutants generate`)")


def mutant_tree(mutant: Mutant) -> Path:
    """A folder holding `workloads/` with the mutant's one edit; put it first on the
    worker's PYTHONPATH. Built once per mutant and source."""
    site = site_of(mutant)
    source = (REPO / mutant.file).read_text()
    folder = cache_root() / "mutants" / f"{mutant.key}-{_digest(source)}"
    if (folder / COMPLETE_MARKER).exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    # The Python packages only: the Java apps beside them are not the worker's.
    shutil.copytree(WORKLOADS, folder / "workloads",
                    ignore=shutil.ignore_patterns("__pycache__", "kstreams*", "app-examples"))
    (folder / mutant.file).write_text(apply(source, site.edit))
    (folder / COMPLETE_MARKER).write_text(mutant.label() + "\n")
    return folder


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]
