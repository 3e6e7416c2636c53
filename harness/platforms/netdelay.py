"""Packet delay without the netem qdisc: an NFQUEUE listener that holds each packet of a
member's link for `delay ± jitter` ms and then accepts it, in arrival order.

Run inside the member's network namespace (standard library only, started as a script):
    python netdelay.py --queue 0 --delay-ms 200 [--jitter-ms 20]
with iptables rules there sending eth0's packets to the queue (`--queue-bypass`: while no
listener is bound, packets pass undelayed). Prints `bound` once listening. SIGTERM
accepts everything still held, then exits, so healing loses no packet.

The protocol is nfnetlink_queue's (linux/netfilter/nfnetlink_queue.h): bind a queue, copy
metadata only, read packet ids, send NF_ACCEPT verdicts.
"""

from __future__ import annotations

import argparse
import random
import select
import signal
import socket
import struct
import sys
import time
from collections import deque

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN, NFQA_CFG_MASK, NFQA_CFG_FLAGS = (
    1, 2, 3, 4, 5)
NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_GSO = 1, 4
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
NF_ACCEPT = 1


def _attr(kind: int, payload: bytes) -> bytes:
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * (-length % 4)


def _message(kind: int, queue: int, attrs: bytes, flags: int = NLM_F_REQUEST, seq: int = 0
             ) -> bytes:
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(queue)) + attrs
    header = struct.pack("=IHHII", 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | kind, flags,
                         seq, 0)
    return header + body


def _messages(data: bytes) -> list[tuple[int, bytes]]:
    """(type, payload after nlmsghdr) of each netlink message in a datagram."""
    out, at = [], 0
    while at + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, at)
        if length < 16:
            break
        out.append((kind, data[at + 16:at + length]))
        at += (length + 3) & ~3
    return out


def _packet_id(payload: bytes) -> int | None:
    at = 4  # nfgenmsg
    while at + 4 <= len(payload):
        length, kind = struct.unpack_from("=HH", payload, at)
        if length < 4:
            return None
        if kind & 0x7FFF == NFQA_PACKET_HDR:
            return int(struct.unpack_from(">I", payload, at + 4)[0])
        at += (length + 3) & ~3
    return None


class Delayer:
    def __init__(self, queue: int, delay_s: float, jitter_s: float) -> None:
        self.queue, self.delay_s, self.jitter_s = queue, delay_s, jitter_s
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind((0, 0))
        self.held: deque[tuple[float, int]] = deque()
        self.stopping = False

    def bind(self) -> None:
        config = [
            _attr(NFQA_CFG_CMD, struct.pack("=BBH", NFQNL_CFG_CMD_BIND, 0, 0)),
            _attr(NFQA_CFG_PARAMS, struct.pack(">IB", 0xFFFF, NFQNL_COPY_META)),
            _attr(NFQA_CFG_QUEUE_MAXLEN, struct.pack(">I", 65536)),
            # A full queue lets packets through rather than dropping them (no loss added).
            _attr(NFQA_CFG_FLAGS, struct.pack(">I", NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO))
            + _attr(NFQA_CFG_MASK, struct.pack(">I", NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO)),
        ]
        for seq, attr in enumerate(config, 1):
            self.sock.send(_message(NFQNL_MSG_CONFIG, self.queue, attr,
                                    NLM_F_REQUEST | NLM_F_ACK, seq))
            for kind, payload in _messages(self.sock.recv(65536)):
                error = struct.unpack_from("=i", payload)[0] if kind == NLMSG_ERROR else 0
                if error:
                    raise OSError(-error, f"nfqueue config {seq} refused")

    def run(self) -> None:
        last_release = 0.0
        while True:
            now = time.monotonic()
            while self.held and (self.stopping or self.held[0][0] <= now):
                self._accept(self.held.popleft()[1])
            if self.stopping:
                return
            timeout = max(0.0, self.held[0][0] - now) if self.held else 0.5
            try:
                ready, _, _ = select.select([self.sock], [], [], timeout)
            except InterruptedError:
                continue
            if not ready:
                continue
            data = self.sock.recv(1 << 16)
            arrived = time.monotonic()
            for kind, payload in _messages(data):
                if kind != (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                    continue
                packet_id = _packet_id(payload)
                if packet_id is None:
                    continue
                jitter = random.uniform(-self.jitter_s, self.jitter_s) if self.jitter_s else 0
                # In arrival order (TCP would read reordering as loss): never before the last.
                last_release = max(last_release, arrived + max(0.0, self.delay_s + jitter))
                self.held.append((last_release, packet_id))

    def _accept(self, packet_id: int) -> None:
        verdict = _attr(NFQA_VERDICT_HDR, struct.pack(">II", NF_ACCEPT, packet_id))
        self.sock.send(_message(NFQNL_MSG_VERDICT, self.queue, verdict))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queue", type=int, default=0)
    parser.add_argument("--delay-ms", type=float, required=True)
    parser.add_argument("--jitter-ms", type=float, default=0.0)
    args = parser.parse_args()
    delayer = Delayer(args.queue, args.delay_ms / 1000, args.jitter_ms / 1000)

    def stop(*_: object) -> None:
        delayer.stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    delayer.bind()
    print("bound", flush=True)
    delayer.run()
    print("released everything held; exiting", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
