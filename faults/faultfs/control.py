"""The fault filesystem's control channel: one JSON request, one JSON reply, over an abstract
Unix socket (no file to clean up, no path-length limit), named after the mount.

Requests: `{"cmd": "rules", "rules": [Rule...]}` (replace the rules; [] clears them),
`{"cmd": "status"}`, `{"cmd": "power-loss"}` (unmount, drop everything not durable, exit)
and `{"cmd": "unmount"}` (a clean shutdown: everything becomes durable, exit).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from typing import Any


def socket_name(mountpoint: str) -> str:
    digest = hashlib.sha1(os.path.realpath(mountpoint).encode()).hexdigest()[:16]
    return f"\0kchaos-faultfs-{digest}"


def request(mountpoint: str, message: dict[str, Any], timeout_s: float = 60.0) -> dict[str, Any]:
    """Send one request to the filesystem mounted at `mountpoint`; its reply. OSError if it
    does not answer; RuntimeError if it answers with an error."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(socket_name(mountpoint))
        sock.sendall(json.dumps(message).encode() + b"\n")
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    reply: dict[str, Any] = json.loads(data or b"{}")
    if not reply.get("ok"):
        raise RuntimeError(f"fault filesystem at {mountpoint}: {reply.get('error', 'no reply')}")
    return reply
