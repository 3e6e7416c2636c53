"""Files written so a reader never sees half of one, and JSONL read so a torn line costs
that line only."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def write_atomically(path: Path, text: str, durable: bool = False) -> Path:
    """Write a sibling temp file and rename it over `path`: a reader (a browser, CI, the
    worker re-reading its control file, another process) sees the old file or the new one.
    `durable` also fsyncs the file and its folder, so a machine crash keeps one of them."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
    if durable:
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return path


def write_json_atomically(path: Path, payload: Any) -> Path:
    """JSON the way run files are kept: indented, sorted keys, anything else as str."""
    return write_atomically(path, json.dumps(payload, indent=1, sort_keys=True, default=str))


def jsonl_objects(
    path: Path, keep: Callable[[str], bool] | None = None
) -> Iterator[tuple[int, str, dict[str, Any] | None]]:
    """(line number, line, the object or None) for each non-blank line that passes `keep`
    (a cheap text filter that spares json.loads on lines nobody needs). A line that is not
    a JSON object (a writer killed mid-line leaves a torn last one) comes with None, for
    the caller to count; it never stops the read. FileNotFoundError/OSError propagate."""
    with path.open("r", encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip() or (keep is not None and not keep(line)):
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                obj = None
            yield number, line, obj if isinstance(obj, dict) else None
