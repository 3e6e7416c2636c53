"""The local platform's own network, made only when a run's plan has a network fault.

A bridge `kc<tag>br` holds a free /24 of the pool (`KCHAOS_NETNS_POOL`, default
10.213.0.0/16) with the host at .1; each broker and each pod ("member") lives in its own
network namespace `kchaos-<tag>-<member>`, joined to the bridge by a veth pair whose host
end is `kc<tag><b1|p0..>`. Brokers listen and advertise on their namespace's address and
the harness reaches them through the bridge; the namespaces have no route anywhere else.

Faults (faults.context.Network and Links):
- partition: the member's host end is set down: it reaches nobody, nobody reaches it
  (unsent segments wait in TCP, as behind a pulled cable); heal sets it up. A pod's
  namespace outlives its processes: a pod restarted while cut off stays cut off.
- netem: `tc qdisc netem` (delay, jitter, loss) on both ends of the member's link, so
  each direction gets it; heal deletes both qdiscs. On a kernel without netem
  (CONFIG_NET_SCH_NETEM unset), the same inside the member's namespace with iptables:
  loss by the `statistic` match, delay by NFQUEUE and netdelay.py, a listener holding
  each packet for the delay (its process is the run's, in pids.json); heal flushes the
  rules and stops it (it lets go of what it holds first). The step's details name the
  mechanism.

`network.json` in the run folder lists what exists (written before each creation), so
`close()` and `kchaos clean` remove all of it on every exit path.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from common.files import write_atomically
from common.waiting import wait_until
from harness.errors import HarnessError, UsageError
from harness.platforms import netns as nl
from harness.procs import ProcessRegistry

STATE_FILE = "network.json"
INNER_LINK = "eth0"
FIRST_MEMBER_HOST = 11  # .1 is the host (bridge); members from .11 on


class RunNetwork:
    def __init__(self, run_dir: Path, registry: ProcessRegistry | None = None) -> None:
        self.run_dir = run_dir
        self.registry = registry or ProcessRegistry(run_dir)
        self._delayers: dict[str, int] = {}
        self.tag = nl.run_tag(run_dir)
        self.bridge = nl.bridge_name(self.tag)
        self._lock = threading.RLock()
        self._state: dict[str, Any] = {"tag": self.tag, "bridge": self.bridge,
                                       "subnet": None, "forward_rule": False, "members": {}}
        self._netem: bool | None = None

    # -- lifecycle ----------------------------------------------------------------------

    def create(self) -> None:
        with nl.allocation_lock():
            subnet = nl.free_subnet()
            self._state["subnet"] = str(subnet)
            self._save()
            nl.ip("link", "add", self.bridge, "type", "bridge", "forward_delay", "0")
            nl.ip("addr", "add", f"{self._host(1)}/{subnet.prefixlen}", "dev", self.bridge)
            nl.ip("link", "set", self.bridge, "up")
        if nl.forward_is_dropped():
            self._state["forward_rule"] = True
            self._save()
            _iptables("-I", *forward_rule(self.bridge))  # our bridge's own traffic only

    def join(self, member: str) -> str:
        """The member's namespace and link (made once); returns its address."""
        with self._lock:
            known = self._state["members"].get(member)
            if known is not None:
                return str(known["address"])
            netns = nl.netns_name(self.tag, member)
            veth = nl.veth_name(self.tag, member)
            address = self._host(FIRST_MEMBER_HOST + len(self._state["members"]))
            self._state["members"][member] = {"netns": netns, "veth": veth, "address": address}
            self._save()
            prefix = ipaddress.IPv4Network(self._state["subnet"]).prefixlen
            nl.ip("netns", "add", netns)
            nl.ip("link", "add", veth, "type", "veth", "peer", "name", f"{veth}i",
                  "netns", netns)
            nl.ip("-n", netns, "link", "set", f"{veth}i", "name", INNER_LINK)
            nl.ip("-n", netns, "addr", "add", f"{address}/{prefix}", "dev", INNER_LINK)
            nl.ip("-n", netns, "link", "set", "lo", "up")
            nl.ip("-n", netns, "link", "set", INNER_LINK, "up")
            nl.ip("link", "set", veth, "master", self.bridge, "up")
            return address

    def wrap(self, member: str, argv: list[str]) -> list[str]:
        """The command line that runs `argv` inside the member's namespace (same PID:
        `ip netns exec` execs it)."""
        self.join(member)
        return ["ip", "netns", "exec", self._member(member)["netns"], *argv]

    def close(self) -> None:
        """Remove everything (processes still inside are killed first); never raises."""
        with self._lock:
            for pid in self._delayers.values():
                with contextlib.suppress(Exception):
                    self.registry.kill(pid)
            self._delayers.clear()
            remove(self._state)

    # -- faults (faults.context.Network, faults.context.Links) ------------------------------

    def disconnect(self, target: str) -> None:
        nl.ip("link", "set", self._member(target)["veth"], "down")

    def reconnect(self, target: str) -> None:
        nl.ip("link", "set", self._member(target)["veth"], "up")

    def degrade(self, target: str, delay_ms: int, jitter_ms: int, loss_pct: float
                ) -> dict[str, Any]:
        member = self._member(target)
        if self._netem is None:
            self._netem = nl.has_netem()
        details: dict[str, Any] = {"delay_ms": delay_ms, "jitter_ms": jitter_ms,
                                   "loss_pct": loss_pct}
        if self._netem:
            args = netem_args(delay_ms, jitter_ms, loss_pct)
            nl.ip("link", "show", member["veth"])  # a clear error for a member that is gone
            nl._command("tc", "qdisc", "replace", "dev", member["veth"], "root", *args)
            nl.in_netns(member["netns"], "tc", "qdisc", "replace", "dev", INNER_LINK,
                        "root", *args)
            details["mechanism"] = "tc netem"
            return details
        details["mechanism"] = "iptables statistic + NFQUEUE (no netem qdisc in this kernel)"
        self._restore_iptables(target)  # a second netem on the target replaces the first
        netns = member["netns"]
        directions = (("INPUT", "-i"), ("OUTPUT", "-o"))  # eth0 only: not its own loopback
        if loss_pct > 0:
            for chain, side in directions:
                nl.in_netns(netns, "iptables", "-A", chain, side, INNER_LINK, "-m",
                            "statistic", "--mode", "random", "--probability",
                            f"{loss_pct / 100:.4f}", "-j", "DROP")
        if delay_ms > 0 or jitter_ms > 0:
            self._start_delayer(target, delay_ms, jitter_ms)
            for chain, side in directions:
                nl.in_netns(netns, "iptables", "-A", chain, side, INNER_LINK, "-j", "NFQUEUE",
                            "--queue-num", "0", "--queue-bypass")
        return details

    def restore(self, target: str) -> None:
        member = self._member(target)
        nl.quiet("tc", "qdisc", "del", "dev", member["veth"], "root")
        nl.quiet("ip", "netns", "exec", member["netns"], "tc", "qdisc", "del", "dev",
                 INNER_LINK, "root")
        if not self._netem:
            self._restore_iptables(target)

    def _restore_iptables(self, target: str) -> None:
        """Rules first (nothing new is queued), then the delayer lets go of what it holds."""
        nl.quiet("ip", "netns", "exec", self._member(target)["netns"], "iptables", "-F")
        pid = self._delayers.pop(target, None)
        if pid is not None:
            self.registry.stop(pid, grace_s=5.0)

    def _start_delayer(self, target: str, delay_ms: int, jitter_ms: int) -> None:
        log = self.run_dir / "network" / f"netdelay-{target}.log"
        argv = [sys.executable, str(Path(__file__).with_name("netdelay.py")),
                "--queue", "0", "--delay-ms", str(delay_ms), "--jitter-ms", str(jitter_ms)]
        offset = log.stat().st_size if log.exists() else 0
        popen = self.registry.spawn(f"netdelay-{target}", self.wrap(target, argv), log)
        self._delayers[target] = popen.pid

        def bound() -> bool:
            if popen.poll() is not None:
                raise HarnessError(f"the packet delayer of {target} exited: see {log}")
            return b"bound" in log.read_bytes()[offset:]

        if not wait_until(bound, 10.0, interval_s=0.05):
            raise HarnessError(f"the packet delayer of {target} did not bind: see {log}")

    # -- internals ----------------------------------------------------------------------

    def _member(self, member: str) -> dict[str, str]:
        with self._lock:
            known = self._state["members"].get(member)
        if known is None:
            raise UsageError(f"network fault: no pod or broker named {member!r} in this run")
        return dict(known)

    def _host(self, n: int) -> str:
        subnet = ipaddress.IPv4Network(self._state["subnet"])
        if n >= subnet.num_addresses - 1:
            raise HarnessError(f"the run network {subnet} has no address left")
        return str(subnet.network_address + n)

    def _save(self) -> None:
        write_atomically(self.run_dir / STATE_FILE, json.dumps(self._state, indent=1))


def netem_args(delay_ms: int, jitter_ms: int, loss_pct: float) -> list[str]:
    args = ["netem"]
    if delay_ms or jitter_ms:
        args += ["delay", f"{delay_ms}ms"] + ([f"{jitter_ms}ms"] if jitter_ms else [])
    if loss_pct:
        args += ["loss", f"{loss_pct:g}%"]
    return args


def forward_rule(bridge: str) -> list[str]:
    return ["FORWARD", "-i", bridge, "-o", bridge, "-j", "ACCEPT"]


def _iptables(*args: str) -> None:
    nl._command("iptables", *args)


def remove(state: dict[str, Any]) -> list[str]:
    """Delete what a run network's state lists (what is gone already is skipped);
    returns the names removed. Never raises: it runs on every exit path."""
    removed: list[str] = []
    for member in dict(state.get("members", {})).values():
        netns, veth = str(member.get("netns", "")), str(member.get("veth", ""))
        if netns.startswith("kchaos-") and nl.netns_exists(netns):
            with contextlib.suppress(Exception):
                nl.kill_netns_processes(netns)
            nl.quiet("ip", "netns", "del", netns)  # takes the veth pair with it
            removed.append(netns)
        if veth.startswith("kc") and nl.link_exists(veth):
            nl.quiet("ip", "link", "del", veth)
            removed.append(veth)
    bridge = str(state.get("bridge", ""))
    if state.get("forward_rule") and bridge:
        nl.quiet("iptables", "-D", *forward_rule(bridge))
    if bridge.startswith("kc") and nl.link_exists(bridge):
        nl.quiet("ip", "link", "del", bridge)
        removed.append(bridge)
    return removed


def clean_networks(folders: Iterable[Path]) -> list[str]:
    """`kchaos clean`: the run networks these run folders left behind."""
    removed: list[str] = []
    for state_file in (f / STATE_FILE for f in folders):
        try:
            state = json.loads(state_file.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(state, dict):
            removed += remove(state)
    return removed
