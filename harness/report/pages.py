"""What the HTML pages share: the template environment, atomic writes, the guard that
turns a failing section into a visible message, and small table helpers."""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from harness.errors import UsageError
from harness.report.examples import cell

TEMPLATES = Path(__file__).parent / "templates"
T = TypeVar("T")


def environment() -> Environment:
    # StrictUndefined: a template typo fails the tests instead of rendering blanks.
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html", "j2"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def require_dir(run_dir: Path) -> Path:
    """A run folder given on the command line must exist (bad input, exit 254)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir} is not a folder: give a run folder under results/")
    return run_dir


def short_error(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()[:1000]


def guarded(
    errors: dict[str, str], section: str, build: Callable[[], T], fallback: T
) -> T:
    """Build one section; a failure (a file of a shape nobody foresaw) costs that section
    only, and the page says so, as Jepsen turns a crashing checker into `unknown`."""
    try:
        return build()
    except Exception as exc:
        errors[section] = short_error(exc)
        return fallback


def flat_rows(data: Any, prefix: str = "") -> list[tuple[str, str]]:
    """A mapping as (key, value) rows, nested mappings as dotted keys."""
    if not isinstance(data, Mapping):
        return [] if data is None else [(prefix.rstrip(".") or "value", cell(data))]
    rows: list[tuple[str, str]] = []
    for key, value in data.items():
        if isinstance(value, Mapping) and value:
            rows.extend(flat_rows(value, f"{prefix}{key}."))
        else:
            rows.append((f"{prefix}{key}", cell(value)))
    return rows


def href(relative: Path | str) -> str:
    """A relative link that survives spaces and odd characters in run or pod names."""
    return quote(str(relative).replace(os.sep, "/"))


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"
