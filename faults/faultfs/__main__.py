"""`python -m faults.faultfs BACKING MOUNTPOINT`: mount the fault filesystem over BACKING at
MOUNTPOINT in the foreground until SIGTERM/SIGINT or a control request ends it; it always
unmounts before exiting. Removed entries wait in `BACKING.trash` until durable."""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from mfusepy import FUSE

from faults.faultfs.control import socket_name
from faults.faultfs.fs import FaultFs
from faults.faultfs.journal import Journal
from faults.faultfs.rules import Rule


def unmount(mountpoint: str) -> None:
    """fusermount3 -u, lazily if it is busy; quiet if it is not mounted."""
    for args in (["-u"], ["-u", "-z"]):
        done = subprocess.run(["fusermount3", *args, mountpoint], capture_output=True)
        if done.returncode == 0:
            return


class Controller:
    def __init__(self, fs: FaultFs, mountpoint: str) -> None:
        self.fs = fs
        self.mountpoint = mountpoint
        self.mode: str | None = None  # "power-loss" or "unmount" once asked to end
        self.ending = threading.Event()

    def serve(self, server: socket.socket) -> None:
        while True:
            conn, _ = server.accept()
            with conn:
                data = b""
                while chunk := conn.recv(65536):
                    data += chunk
                try:
                    reply = {"ok": True, **self.handle(json.loads(data))}
                except Exception as e:  # a bad request is answered, never fatal
                    reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
                conn.sendall(json.dumps(reply).encode())
                if self.ending.is_set():
                    # A lazy unmount leaves the loop serving until the last reference to
                    # the mount goes: do not wait for it (the pod is dead, nothing is lost).
                    exit_later = threading.Timer(5.0, os._exit, (0,))
                    exit_later.daemon = True  # a normal exit of main does not wait for it
                    exit_later.start()
                    return

    def handle(self, msg: dict[str, Any]) -> dict[str, Any]:
        cmd = msg.get("cmd")
        if cmd == "rules":
            self.fs.rules = tuple(Rule.from_json(r) for r in msg.get("rules", []))
            return {"rules": len(self.fs.rules)}
        if cmd == "status":
            return {"pending": self.fs.journal.pending(), "gated": dict(self.fs.counts),
                    "rules": [r.to_json() for r in self.fs.rules]}
        if cmd == "power-loss":
            self.fs.rules = ()
            self.mode = "power-loss"
            self.ending.set()
            unmount(self.mountpoint)  # no operation can run past this point
            return {"undone": self.fs.journal.power_loss()}
        if cmd == "unmount":
            self.mode = "unmount"
            self.ending.set()
            unmount(self.mountpoint)
            return {}
        raise ValueError(f"unknown command {cmd!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m faults.faultfs")
    parser.add_argument("backing", type=Path)
    parser.add_argument("mountpoint", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    backing, mountpoint = args.backing.resolve(), args.mountpoint.resolve()
    backing.mkdir(parents=True, exist_ok=True)
    mountpoint.mkdir(parents=True, exist_ok=True)
    journal = Journal(backing, backing.with_name(backing.name + ".trash"))
    fs = FaultFs(journal)
    controller = Controller(fs, str(mountpoint))
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(socket_name(str(mountpoint)))
    server.listen(8)
    serving = threading.Thread(target=controller.serve, args=(server,), daemon=True)
    serving.start()
    try:
        # hard_remove: unlink goes to the journal even while the file is open (no hiding).
        FUSE(fs, str(mountpoint), foreground=True, nothreads=False, hard_remove=True,
             fsname="kchaos-faultfs", default_permissions=True)
    finally:
        unmount(str(mountpoint))  # whatever ended the loop, nothing stays mounted
    if controller.mode is not None:
        serving.join(timeout=120)  # it applies the power loss (or not) and replies
    if controller.mode != "power-loss":
        journal.all_durable()  # a clean unmount writes everything
    return 0


if __name__ == "__main__":
    sys.exit(main())
