"""No source file of kchaos's own over 400 lines (tests and benches aside): a file that
grows past it holds more than one concept, and the next reader pays for it. Split by
concept (harness/config/drawn.py left run.py when the guarantee grew it), never by
cutting lines that explain."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "faults", "checker", "common", "workloads", "scripts")
MAX_LINES = 400


def test_no_source_file_is_over_400_lines() -> None:
    sizes = {path.relative_to(REPO): len(path.read_text().splitlines())
             for package in PACKAGES for path in (REPO / package).rglob("*.py")}
    assert sizes, "no source files found"
    over = {str(path): n for path, n in sorted(sizes.items()) if n > MAX_LINES}
    assert not over, f"over {MAX_LINES} lines: {over}"
