"""Where the test suite's time goes: a pytest JUnit XML file (`pytest --junitxml=FILE`)
summed per test file, slowest first, with each file's test count and its slowest test.
Reads the file only; runs nothing.

    .venv/bin/python bench/suite_durations.py /tmp/junit.xml [--top 30]

CI's `.ci/run` prints pytest's 30 slowest tests; this is the whole tier by file, which is
what a decision to share a run between tests, or to move one to the nightly, needs.
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table


def per_file(junit: Path) -> dict[str, list[tuple[str, float]]]:
    """Test file -> [(test name, seconds)], from every <testcase> of the report."""
    files: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for case in ET.parse(junit).getroot().iter("testcase"):
        # classname is the module's dotted path (a test class's name after it, if any)
        parts = case.get("classname", "").split(".")
        while parts and parts[-1][:1].isupper():
            parts.pop()
        path = "/".join(parts) + ".py"
        files[path].append((case.get("name", "?"), float(case.get("time", 0.0))))
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit", type=Path)
    parser.add_argument("--top", type=int, default=30, help="files shown (default 30)")
    args = parser.parse_args()
    files = per_file(args.junit)
    total = sum(t for cases in files.values() for _, t in cases)
    table = Table(title=f"{args.junit}: {sum(map(len, files.values()))} tests, "
                        f"{total:.0f} s in all")
    for column in ("test file", "tests", "seconds", "share", "slowest test", "its s"):
        table.add_column(column, justify="left" if column in ("test file", "slowest test")
                         else "right")
    ranked = sorted(files.items(), key=lambda kv: -sum(t for _, t in kv[1]))
    for path, cases in ranked[: args.top]:
        seconds = sum(t for _, t in cases)
        name, slowest = max(cases, key=lambda c: c[1])
        table.add_row(path, str(len(cases)), f"{seconds:.0f}", f"{seconds / total:.0%}",
                      name[:60], f"{slowest:.0f}")
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
