"""`kchaos serve`: the results folder on 127.0.0.1, the index fresh on each request, logs
as text, nothing outside the folder."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from synth_run import Spec, make_run

from harness.errors import UsageError
from harness.report import render_report
from harness.serve import HOST, make_server


@pytest.fixture
def server(valid_run: Path) -> Iterator[ThreadingHTTPServer]:
    render_report(valid_run)
    srv = make_server(valid_run.parent, 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=10)


def _get(srv: ThreadingHTTPServer, path: str) -> tuple[str, str]:
    host, port = srv.server_address[:2]
    with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=10) as resp:
        return resp.headers.get("Content-Type", ""), resp.read().decode()


def test_binds_loopback_only(server: ThreadingHTTPServer) -> None:
    assert server.server_address[0] == HOST == "127.0.0.1"


def test_index_is_fresh_on_each_request(server: ThreadingHTTPServer, valid_run: Path) -> None:
    _, page = _get(server, "/")
    assert valid_run.name in page
    make_run(valid_run.parent, "20251010T000000-late-1", Spec(profile="late"))
    _, page = _get(server, "/index.html")
    assert "20251010T000000-late-1" in page


def test_report_and_logs(server: ThreadingHTTPServer, valid_run: Path) -> None:
    kind, page = _get(server, f"/{valid_run.name}/report.html")
    assert kind.startswith("text/html") and 'id="timeline-chart"' in page
    kind, text = _get(server, f"/{valid_run.name}/pods/pod-0/worker.log")
    assert kind.startswith("text/plain") and "pod-0 started" in text


def test_nothing_outside_the_folder(server: ThreadingHTTPServer) -> None:
    with pytest.raises(urllib.error.HTTPError) as exc:
        _get(server, "/../../../etc/passwd")
    assert exc.value.code == 404


def test_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="nothing to serve"):
        make_server(tmp_path / "absent", 0)
