"""`kchaos serve`: the results folder over HTTP on 127.0.0.1 only (reports link to logs
with relative paths, which browsers will not always follow from file:// pages).

The index is regenerated on each request for it, so a page reload shows runs that finished
since the server started. Logs and JSONL are served as text so they open in the browser.
"""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from harness.console import err, out
from harness.errors import UsageError
from harness.report.index import INDEX_FILE, render_index

HOST = "127.0.0.1"  # never 0.0.0.0: run folders hold logs and configuration
TEXT_TYPES = {
    ".log": "text/plain; charset=utf-8",
    ".jsonl": "text/plain; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".xml": "application/xml; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
}


class ResultsHandler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **TEXT_TYPES}

    def __init__(self, *args: Any, results_dir: Path, **kwargs: Any) -> None:
        self.results_dir = results_dir
        super().__init__(*args, directory=str(results_dir), **kwargs)

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] in ("/", f"/{INDEX_FILE}"):
            try:
                render_index(self.results_dir)
            except OSError as exc:  # serve the last index rather than nothing
                self.log_message("index not regenerated: %s", exc)
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        err.print(f"serve: {format % args}", highlight=False, markup=False)


def make_server(results_dir: Path, port: int) -> ThreadingHTTPServer:
    """Bind (port 0 picks a free one); the caller runs serve_forever and closes it."""
    results_dir = Path(results_dir)
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: give a port from 0 to 65535 (0 picks a free one)")
    if not results_dir.is_dir():
        raise UsageError(f"{results_dir} is not a folder: nothing to serve (run `kchaos run`)")
    handler = functools.partial(ResultsHandler, results_dir=results_dir.resolve())
    try:
        return ThreadingHTTPServer((HOST, port), handler)
    except OSError as exc:
        raise UsageError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from exc


def serve(results_dir: Path, port: int) -> None:
    """Serve until Ctrl-C (the CLI turns KeyboardInterrupt into its usual exit)."""
    server = make_server(results_dir, port)
    render_index(Path(results_dir))
    out.print(f"serving {results_dir} at http://{HOST}:{server.server_port}/ (Ctrl-C to stop)",
              highlight=False)
    try:
        server.serve_forever()
    finally:
        server.server_close()
