"""The local platform's run network (harness/platforms/local_network.py): names, the
platform checks, and, as root, real namespaces: reachability through the bridge, a
partition that cuts and heals, netem delay and loss that heal, nothing left behind (also
when a test fails: the fixture removes what its run made, then checks the host)."""

from __future__ import annotations

import ipaddress
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from faults.context import FaultContext
from faults.kinds import FAULT_KINDS
from faults.model import Step, Trigger
from faults.plan import plan
from harness.config.platforms import PLATFORMS
from harness.errors import UsageError
from harness.platforms import netns as nl
from harness.platforms import require_platform
from harness.platforms.local_network import RunNetwork, clean_networks, netem_args
from harness.procs import ProcessRegistry

PROBLEM = nl.netns_problem()
_namespaces = pytest.mark.skipif(PROBLEM is not None, reason=f"needs network namespaces: "
                                                            f"{PROBLEM}")


def needs_netns(test: object) -> object:
    """iproute2 from set-up (missing where it could be installed: a failure), then
    namespaces that work here (a kernel's or a container's limit: a skip)."""
    return pytest.mark.needs("ip", "tc")(_namespaces(test))


def leftovers(tag: str) -> list[str]:
    """Anything of the run's tag on the host: namespaces, links (qdiscs go with links)."""
    found = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    found += subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    return [line for line in found.splitlines() if tag in line]


@pytest.fixture
def network(tmp_path: Path) -> Iterator[RunNetwork]:
    net = RunNetwork(tmp_path / "run", ProcessRegistry(_mkdir(tmp_path / "run")))
    try:
        net.create()
        yield net
    finally:
        net.registry.stop_all()
        net.close()
        assert leftovers(net.tag) == []


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def serve(net: RunNetwork, member: str) -> tuple[str, subprocess.Popen[bytes]]:
    """A TCP server in the member's namespace answering `hi` to each connection."""
    address = net.join(member)
    code = (f"import socket\ns=socket.socket(); s.bind(('{address}', 9092)); s.listen()\n"
            "print('up', flush=True)\n"
            "while True:\n    c, _ = s.accept(); c.sendall(b'hi'); c.close()\n")
    server = net.registry.spawn(f"server-{member}", net.wrap(member, [sys.executable, "-c", code]),
                                net.run_dir / f"{member}.log")
    log = net.run_dir / f"{member}.log"
    deadline = time.monotonic() + 10
    while b"up" not in (log.read_bytes() if log.exists() else b""):
        assert time.monotonic() < deadline, "the server never came up"
        time.sleep(0.05)
    return address, server


def ask(address: str, timeout_s: float = 3.0) -> tuple[bytes, float]:
    started = time.monotonic()
    with socket.create_connection((address, 9092), timeout=timeout_s) as conn:
        return conn.recv(2), time.monotonic() - started


def ask_from(net: RunNetwork, member: str, address: str) -> str:
    code = (f"import socket; c = socket.create_connection(('{address}', 9092), timeout=3); "
            "print(c.recv(2).decode())")
    done = subprocess.run(net.wrap(member, [sys.executable, "-c", code]), capture_output=True,
                          text=True, timeout=20)
    return done.stdout.strip()


# -- without root ---------------------------------------------------------------------------


def test_names_fit_linux_limits_and_differ_per_run(tmp_path: Path) -> None:
    a, b = nl.run_tag(tmp_path / "a"), nl.run_tag(tmp_path / "b")
    assert a != b
    for member in ("pod-0", "pod-9999", "broker-3"):
        assert len(nl.veth_name(a, member)) <= 15 and nl.veth_name(a, member).startswith("kc")
        assert nl.netns_name(a, member) == f"kchaos-{a}-{member}"
    assert len(nl.bridge_name(a)) <= 15
    with pytest.raises(Exception, match="no network member"):
        nl.veth_name(a, "zookeeper-1")


def test_netem_arguments() -> None:
    assert netem_args(200, 20, 10) == ["netem", "delay", "200ms", "20ms", "loss", "10%"]
    assert netem_args(50, 0, 0) == ["netem", "delay", "50ms"]
    assert netem_args(0, 0, 2.5) == ["netem", "loss", "2.5%"]


@pytest.mark.parametrize("pool", ["10.213.0.0/25", "8.8.0.0/16", "not-a-net", "10.0.0.1/16"])
def test_a_bad_pool_is_one_line_of_bad_input(pool: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(nl.POOL_ENV, pool)
    with pytest.raises(UsageError, match=nl.POOL_ENV):
        nl.pool()


def test_platforms_refuse_network_faults_they_cannot_apply() -> None:
    assert "partition" not in PLATFORMS["local"].unsupported_faults
    with pytest.raises(UsageError, match="--platform docker cannot apply netem"):
        require_platform("docker", faults=["partition", "netem"])
    with pytest.raises(UsageError, match="drop --bootstrap"):
        require_platform("local", faults=["netem"], bootstrap="127.0.0.1:9092")
    require_platform("local", faults=["kill", "pause"], bootstrap="127.0.0.1:9092")


def test_netem_kind_degrades_and_restores_through_the_links() -> None:
    calls: list[tuple[object, ...]] = []

    class Links:
        def degrade(self, target: str, delay_ms: int, jitter_ms: int, loss_pct: float
                    ) -> dict[str, object]:
            calls.append(("degrade", target, delay_ms, jitter_ms, loss_pct))
            return {"delay_ms": delay_ms}

        def restore(self, target: str) -> None:
            calls.append(("restore", target))

    ctx = FaultContext(platform=None, application_id="app", links=Links())  # type: ignore[arg-type]
    step = Step(0, "netem", "broker-2", Trigger(6.0), {"delay_ms": 200, "loss_pct": 2},
                heal_after_s=5.0)
    assert FAULT_KINDS["netem"].apply(ctx, step) == {"delay_ms": 200}
    FAULT_KINDS["netem"].heal(ctx, step)
    assert calls == [("degrade", "broker-2", 200, 0, 2.0), ("restore", "broker-2")]
    with pytest.raises(RuntimeError, match="run network"):
        FAULT_KINDS["netem"].apply(FaultContext(platform=None, application_id="app"), step)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(10))
def test_network_profile_cuts_and_slows_pods_and_brokers_only_out_of_three(seed: int) -> None:
    one = plan(seed, "network", 2, 1, 60)
    assert one.steps and {s.fault for s in one.steps} <= {"partition", "netem"}
    assert all(s.target.startswith("pod-") and s.heal_after_s for s in one.steps)
    for s in one.steps:
        if s.fault == "netem":
            assert set(s.params) == {"delay_ms", "jitter_ms", "loss_pct"}
    three = plan(seed, "network", 2, 3, 300)
    assert {s.fault for s in three.steps} == {"partition", "netem"}
    assert any(s.target.startswith("broker-") for s in three.steps)


# -- as root, real namespaces ---------------------------------------------------------------


@needs_netns
def test_members_reach_each_other_and_the_host_through_the_bridge(network: RunNetwork) -> None:
    address, _ = serve(network, "broker-1")
    assert ask(address)[0] == b"hi"  # host -> broker, over the bridge
    assert ask_from(network, "pod-0", address) == "hi"  # pod -> broker
    assert network.join("broker-1") == address  # joined once
    assert ipaddress.ip_address(address) in ipaddress.ip_network(network._state["subnet"])


@needs_netns
def test_partition_cuts_a_member_off_and_heals(network: RunNetwork) -> None:
    address, _ = serve(network, "broker-1")
    network.join("pod-0")
    network.disconnect("broker-1")
    with pytest.raises(OSError):
        ask(address, timeout_s=1.5)
    assert ask_from(network, "pod-0", address) == ""  # the other side cannot reach it
    network.reconnect("broker-1")
    assert ask(address)[0] == b"hi"
    # The pod's neighbour entry for the broker failed during the cut: it is resolved again
    # within a few seconds of the heal (seen once taking longer than one 3 s attempt).
    deadline = time.monotonic() + 15
    while (reply := ask_from(network, "pod-0", address)) != "hi" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert reply == "hi"
    with pytest.raises(UsageError, match="no pod or broker named 'pod-7'"):
        network.disconnect("pod-7")


@needs_netns
@pytest.mark.needs("iptables")
def test_netem_delays_each_direction_and_heals(network: RunNetwork) -> None:
    address, _ = serve(network, "broker-1")
    baseline = min(ask(address)[1] for _ in range(3))
    details = network.degrade("broker-1", 150, 0, 0.0)
    assert details["delay_ms"] == 150 and "mechanism" in details
    # connect (SYN in, SYN-ACK out) and the reply: at least two delayed crossings
    assert ask(address, timeout_s=10)[1] >= 0.3
    network.restore("broker-1")
    assert min(ask(address)[1] for _ in range(3)) < 0.15 + baseline
    assert not list(network._delayers)  # the delayer (if one) is gone, its packets let go


@needs_netns
@pytest.mark.needs("iptables")
def test_netem_loss_drops_packets_and_heals(network: RunNetwork) -> None:
    address, _ = serve(network, "broker-1")
    network.degrade("broker-1", 0, 0, 100.0)
    with pytest.raises(OSError):
        ask(address, timeout_s=1.5)
    network.restore("broker-1")
    assert ask(address)[0] == b"hi"


@needs_netns
def test_kchaos_clean_removes_a_network_a_crashed_run_left(tmp_path: Path) -> None:
    run_dir = _mkdir(tmp_path / "results" / "20261123T000000-network-s1")
    net = RunNetwork(run_dir)
    try:
        net.create()
        net.join("pod-0")
        net.join("broker-1")
        sleeper = net.registry.spawn("sleeper", net.wrap("pod-0", ["sleep", "600"]),
                                     run_dir / "sleeper.log")
        assert leftovers(net.tag)
        # The harness is gone: only network.json (and pids.json) say what it made.
        removed = clean_networks([run_dir])
        assert f"kchaos-{net.tag}-pod-0" in removed and nl.bridge_name(net.tag) in removed
        assert sleeper.wait(timeout=10) is not None  # killed: it lived in the namespace
        assert leftovers(net.tag) == []
        assert clean_networks([run_dir]) == []  # twice is fine
    finally:
        net.close()


@needs_netns
def test_runs_at_once_get_different_subnets(tmp_path: Path) -> None:
    nets = [RunNetwork(_mkdir(tmp_path / f"run{i}")) for i in range(3)]
    errors: list[BaseException] = []

    def create(net: RunNetwork) -> None:
        try:
            net.create()
        except BaseException as exc:  # reported below
            errors.append(exc)

    try:
        threads = [threading.Thread(target=create, args=(n,)) for n in nets]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert len({n._state["subnet"] for n in nets}) == 3
    finally:
        for n in nets:
            n.close()
            assert leftovers(n.tag) == []



def test_docker_refuses_netem_and_the_storage_kinds() -> None:
    from faults.kinds import STORAGE_FAULTS

    assert PLATFORMS["docker"].unsupported_faults == {"netem"} | STORAGE_FAULTS
    assert {"power-loss", "io-delay", "io-error"} == STORAGE_FAULTS
    assert not PLATFORMS["local"].unsupported_faults
