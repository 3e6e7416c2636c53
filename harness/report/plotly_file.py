"""plotly.js once per results folder, beside index.html, instead of inlined in every page.

Inlined, the library was 4.7 MB of each report.html; as one file in the results folder a
report is a few hundred KB and still opens offline (file://, or `kchaos serve`): each page
loads it by a relative path. A run folder moved away from its results folder gets the file
again from `kchaos report <run>`.
"""

from __future__ import annotations

import os
from pathlib import Path

from plotly.offline import get_plotlyjs_version

from harness.report.charts import plotly_js

NO_PLOTLY = {"plotly_src": "", "plotly_js": ""}  # a page without charts


def plotly_file_name() -> str:
    # Versioned: pages written by another plotly keep the library they were drawn with.
    return f"plotly-{get_plotlyjs_version()}.min.js"


def ensure_plotly_file(results_dir: Path) -> Path:
    """Write `results_dir/plotly-<version>.min.js` unless a whole copy is already there."""
    path = Path(results_dir) / plotly_file_name()
    text = plotly_js()
    if not path.exists() or path.stat().st_size != len(text.encode("utf-8")):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # concurrent runs
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return path


def plotly_src(page_dir: Path, results_dir: Path) -> str:
    """The `<script src>` a page in `page_dir` uses for the results folder's copy."""
    path = ensure_plotly_file(results_dir)
    return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(page_dir))).as_posix()


def plotly_vars(page_dir: Path, results_dir: Path) -> dict[str, str]:
    """The page's template variables: the shared file's path, or the library inlined when
    the results folder cannot be written (a page must always render)."""
    try:
        return {"plotly_src": plotly_src(page_dir, results_dir), "plotly_js": ""}
    except OSError:
        return {"plotly_src": "", "plotly_js": plotly_js()}
