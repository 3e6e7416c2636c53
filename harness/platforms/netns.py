"""Linux network primitives for the local platform's run network: `ip netns`, veth pairs,
a bridge, link up/down and `tc` qdiscs, run as commands (iproute2), plus the checks that
this machine can do them. No state: `local_network.RunNetwork` keeps that.

Everything is named after the run: a 6-hex tag hashed from the run folder's path, so two
runs never share a name (Linux interface names are limited to 15 characters).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import ipaddress
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

from harness.errors import HarnessError, UsageError

# The pool each run takes a free /24 from; private space docker and most LANs leave alone.
DEFAULT_POOL = "10.213.0.0/16"
POOL_ENV = "KCHAOS_NETNS_POOL"
LOCK_FILE = Path("/run/lock/kchaos-netns.lock")


def run_tag(run_dir: Path) -> str:
    return hashlib.sha1(str(run_dir.resolve()).encode()).hexdigest()[:6]


def bridge_name(tag: str) -> str:
    return f"kc{tag}br"


def short_member(member: str) -> str:
    """`broker-2` -> `b2`, `pod-13` -> `p13`: the member's part of its interface name."""
    kind, _, number = member.partition("-")
    if kind not in ("pod", "broker") or not number.isdigit() or len(number) > 4:
        raise HarnessError(f"no network member named {member!r}")
    return f"{kind[0]}{number}"


def veth_name(tag: str, member: str) -> str:
    return f"kc{tag}{short_member(member)}"  # at most 2 + 6 + 5 = 13 characters


def netns_name(tag: str, member: str) -> str:
    return f"kchaos-{tag}-{member}"


def pool() -> ipaddress.IPv4Network:
    raw = os.environ.get(POOL_ENV, DEFAULT_POOL)
    try:
        network = ipaddress.IPv4Network(raw, strict=True)
    except ValueError as exc:
        raise UsageError(f"{POOL_ENV}={raw!r} is not an IPv4 network like "
                         f"{DEFAULT_POOL} ({exc})") from None
    if network.prefixlen > 24 or not network.is_private:
        raise UsageError(f"{POOL_ENV}={raw}: give a private network of /24 or larger, "
                         f"like {DEFAULT_POOL}")
    return network


def require_netns() -> None:
    """Root and iproute2, or one line saying what to do (254)."""
    if shutil.which("ip") is None or shutil.which("tc") is None:
        raise UsageError("network faults on --platform local need iproute2 (`ip`, `tc`): "
                         "apt-get install iproute2, or use --platform docker")
    if os.geteuid() != 0:
        raise UsageError("network faults on --platform local need root (network "
                         "namespaces, veth, a bridge): run as root, or use --platform docker")
    pool()


def netns_problem() -> str | None:
    """Why network namespaces cannot be used here (for tests to skip), or None."""
    try:
        require_netns()
    except UsageError as exc:
        return str(exc)
    probe = f"kchaos-probe-{os.getpid()}"
    done = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if done.returncode != 0:
        return f"`ip netns add` fails here: {done.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def has_netem() -> bool:
    """Whether the kernel has the netem qdisc (CONFIG_NET_SCH_NETEM): tried on a veth
    link inside a throw-away namespace, so nothing of the host's is touched."""
    probe = f"kchaos-netem-{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        return False
    try:
        ip("-n", probe, "link", "add", "d0", "type", "veth", "peer", "name", "d1")
        done = subprocess.run(["ip", "netns", "exec", probe, "tc", "qdisc", "add", "dev", "d0",
                               "root", "netem", "delay", "1ms"], capture_output=True)
        return done.returncode == 0
    except HarnessError:
        return False
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)


def ip(*args: str) -> str:
    return _command("ip", *args)


def in_netns(netns: str, *argv: str) -> str:
    return _command("ip", "netns", "exec", netns, *argv)


def _command(*argv: str) -> str:
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise HarnessError(f"`{' '.join(argv)}` failed: {done.stderr.strip() or done.returncode}")
    return done.stdout


def quiet(*argv: str) -> None:
    """A clean-up command whose failure (already gone) is fine."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(list(argv), capture_output=True, timeout=30)


def link_exists(name: str) -> bool:
    try:
        done = subprocess.run(["ip", "link", "show", "dev", name], capture_output=True)
    except OSError:  # no iproute2: nothing of ours can exist
        return False
    return done.returncode == 0


def netns_exists(name: str) -> bool:
    return (Path("/run/netns") / name).exists()


@contextlib.contextmanager
def allocation_lock() -> Iterator[None]:
    """Runs choosing subnets at the same moment take turns (the choice reads the host)."""
    LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK_FILE, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def free_subnet() -> ipaddress.IPv4Network:
    """The first /24 of the pool that no address or route on this host overlaps (call it
    under allocation_lock, and create the bridge before letting go)."""
    used: list[ipaddress.IPv4Network] = []
    for entry in json.loads(ip("-j", "-4", "addr", "show") or "[]"):
        for info in entry.get("addr_info", []):
            used.append(ipaddress.IPv4Network(f"{info['local']}/{info['prefixlen']}",
                                              strict=False))
    for route in json.loads(ip("-j", "-4", "route", "show", "table", "all") or "[]"):
        dst = route.get("dst", "")
        with contextlib.suppress(ValueError):
            if dst and dst != "default":
                used.append(ipaddress.IPv4Network(dst, strict=False))
    for candidate in pool().subnets(new_prefix=24):
        if not any(candidate.overlaps(u) for u in used if u.prefixlen > 0):
            return candidate
    raise HarnessError(f"no free /24 left in {pool()} ({POOL_ENV} sets another pool)")


def forward_is_dropped() -> bool:
    """Bridged traffic goes through the host's iptables FORWARD chain when br_netfilter
    says so; a DROP policy there (as a Docker engine may set) would cut our bridge."""
    calls = Path("/proc/sys/net/bridge/bridge-nf-call-iptables")
    if not calls.exists() or calls.read_text().strip() != "1" or not shutil.which("iptables"):
        return False
    done = subprocess.run(["iptables", "-S", "FORWARD"], capture_output=True, text=True)
    return done.returncode == 0 and "-P FORWARD DROP" in done.stdout


def kill_netns_processes(netns: str) -> None:
    """Processes still inside a run's namespace are the run's own (brokers, pods)."""
    try:
        done = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.SubprocessError):
        return
    for line in done.stdout.split():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(line), signal.SIGKILL)
