"""What the docker platform asks the engine for, as plain data (no engine needed).

Each function returns the kwargs of one docker SDK call (`containers.run`,
`volumes.create`), so tests check them without an engine. Choices, and why:
- pods run in the host PID namespace: every incarnation of a pod gets its own PID, which
  the trace contract uses to tell incarnations apart (in a PID namespace of its own every
  worker would be PID 1, and the checker would merge a killed process with its successor);
- pods run as the harness's uid: the trace and logs they write into the run folder belong
  to the user, who can delete them;
- a pod's state.dir is a named volume per (pod, generation); `pod_volume_spec` with a
  host_dir makes it a `local` bind volume whose data lives in the run folder;
- brokers use broker_properties (the local cluster's settings) with two listeners:
  INTERNAL (container name : 19092) for pods and other brokers, EXTERNAL published on
  127.0.0.1 for the harness on the host.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from harness.kafka.cluster import BrokerNode, broker_properties
from harness.kafka.jars import kafka_version
from harness.platforms.base import CONTROL_FILE, TRACE_FILE
from harness.sut.base import PodPaths, PodSettings

POD_MOUNT = "/kchaos/pod"  # <run>/pods/<pod>/ : trace.jsonl, control.json
STATE_MOUNT = "/kchaos/state"  # the pod's named volume: its state.dir
WORKER_IMAGE_REPO = "kchaos-worker"
KAFKA_IMAGE_REPO = "kchaos-kafka"
KAFKA_INTERNAL_PORT = 19092
KAFKA_EXTERNAL_PORT = 9092
KAFKA_CONTROLLER_PORT = 9093
KAFKA_DATA_DIR = "/var/lib/kafka/data"  # a VOLUME of the broker image: survives restarts
LABEL_RUN = "kchaos.run"
LABEL_POD = "kchaos.pod"
LABEL_NODE = "kchaos.node"
LABEL_ROLE = "kchaos.role"
REPO_ROOT = Path(__file__).resolve().parents[2]
IMAGE_INPUTS = ("Dockerfile", ".dockerignore", "pyproject.toml", "dockerfiles/pins.py")
SOURCE_DIRS = ("workloads",)  # the worker imports nothing else of the repo


def safe_name(*parts: str) -> str:
    """A container/volume/DNS name from parts: [a-z0-9-], at most 63 characters (one DNS
    label, since broker container names are their addresses on the network)."""
    name = re.sub(r"[^a-z0-9-]+", "-", "-".join(parts).lower()).strip("-")
    if len(name) <= 63:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:54].rstrip('-')}-{digest}"


def kafka_container_name(run_id: str, node_id: int) -> str:
    return safe_name("kchaos", run_id, "kafka", str(node_id))


def pod_container_name(run_id: str, pod: str, incarnation: int) -> str:
    return safe_name("kchaos", run_id, pod, str(incarnation))


def pod_volume_name(run_id: str, pod: str, generation: int) -> str:
    return safe_name("kchaos", run_id, pod, f"g{generation}")


def default_network(run_id: str) -> str:
    return safe_name("kchaos", run_id)


def property_env(key: str) -> str:
    """The broker image's env name for a broker property (apache/kafka's documented rule,
    which dockerfiles/kafka-run.sh reverses: `_` -> `__`, `-` -> `___`, `.` -> `_`, upper
    case, prefix KAFKA_)."""
    return "KAFKA_" + key.replace("_", "__").replace("-", "___").replace(".", "_").upper()


def kafka_image(version: str | None = None) -> str:
    """The broker image of Kafka `version` (default: the release harness/kafka/pom.xml
    pins), built here from that release's jars: harness/platforms/docker_images.py."""
    return f"{KAFKA_IMAGE_REPO}:{version or kafka_version()}"


def kafka_properties(run_id: str, node_id: int, size: int, host_port: int) -> dict[str, str]:
    """broker_properties for a container: same settings, container listeners and paths."""
    name = kafka_container_name(run_id, node_id)
    voters = ",".join(
        f"{n}@{kafka_container_name(run_id, n)}:{KAFKA_CONTROLLER_PORT}"
        for n in range(1, size + 1)
    )
    node = BrokerNode(node_id, KAFKA_INTERNAL_PORT, KAFKA_CONTROLLER_PORT,
                      Path(KAFKA_DATA_DIR).parent)  # its data_dir is KAFKA_DATA_DIR
    text = broker_properties(node, voters, size)
    props = dict(line.split("=", 1) for line in text.splitlines() if line)
    props.update({
        "listeners": f"INTERNAL://0.0.0.0:{KAFKA_INTERNAL_PORT},"
                     f"EXTERNAL://0.0.0.0:{KAFKA_EXTERNAL_PORT},"
                     f"CONTROLLER://0.0.0.0:{KAFKA_CONTROLLER_PORT}",
        "advertised.listeners": f"INTERNAL://{name}:{KAFKA_INTERNAL_PORT},"
                                f"EXTERNAL://127.0.0.1:{host_port}",
        "inter.broker.listener.name": "INTERNAL",
        "listener.security.protocol.map":
            "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
    })
    return props


def kafka_container_spec(
    run_id: str, node_id: int, size: int, cluster_id: str, network: str, host_port: int,
    image: str | None = None, heap: str = "384m",
) -> dict[str, Any]:
    """One broker (combined broker+controller, static quorum of `size`)."""
    env = {
        property_env(k): v for k, v in kafka_properties(run_id, node_id, size, host_port).items()
    }
    env.update({"CLUSTER_ID": cluster_id, "KAFKA_HEAP_OPTS": f"-Xms{heap} -Xmx{heap}"})
    return {
        "image": image or kafka_image(),
        "name": kafka_container_name(run_id, node_id),
        "labels": {LABEL_RUN: run_id, LABEL_ROLE: "kafka", "kchaos.broker": str(node_id)},
        "network": network,
        "environment": env,
        "ports": {f"{KAFKA_EXTERNAL_PORT}/tcp": ("127.0.0.1", host_port)},
        "detach": True,
    }


CONTAINER_PATHS = PodPaths(STATE_MOUNT, f"{POD_MOUNT}/{TRACE_FILE}", f"{POD_MOUNT}/{CONTROL_FILE}")


def pod_container_spec(
    run_id: str, pod: str, node: str, worker_config: PodSettings, image: str, network: str,
    volume_name: str, pod_dir: Path, incarnation: int = 1, user: str | None = None,
    command: list[str] | None = None, environment: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One start of a pod. `command` is what the image's entrypoint is given (the SUT's
    container_command with CONTAINER_PATHS); None: the worker image's, PodSettings.argv."""
    spec: dict[str, Any] = {
        "image": image,
        "command": command if command is not None else worker_config.argv(pod, CONTAINER_PATHS),
        "name": pod_container_name(run_id, pod, incarnation),
        "hostname": safe_name(pod),
        "labels": {
            LABEL_RUN: run_id, LABEL_POD: pod, LABEL_NODE: node, LABEL_ROLE: "pod",
            "kchaos.incarnation": str(incarnation), "kchaos.volume": volume_name,
        },
        "network": network,
        "volumes": {
            volume_name: {"bind": STATE_MOUNT, "mode": "rw"},
            # The engine takes a relative path for a volume's name: bind mounts are absolute
            # (`--results-dir results` is relative).
            str(pod_dir.absolute()): {"bind": POD_MOUNT, "mode": "rw"},
        },
        "environment": environment if environment is not None else {"PYTHONUNBUFFERED": "1"},
        "pid_mode": "host",
        "stop_signal": "SIGTERM",  # the pod's handler closes cleanly (checkpoints)
        "detach": True,
    }
    if user is not None:
        spec["user"] = user
    return spec


def pod_volume_spec(
    run_id: str, pod: str, volume_name: str, host_dir: Path | None
) -> dict[str, Any]:
    """A named volume; with host_dir, a `local` bind volume whose data lives there."""
    spec: dict[str, Any] = {
        "name": volume_name,
        "driver": "local",
        "labels": {LABEL_RUN: run_id, LABEL_POD: pod, LABEL_ROLE: "pod-volume"},
    }
    if host_dir is not None:
        spec["driver_opts"] = {"type": "none", "o": "bind", "device": str(host_dir.absolute())}
    return spec


def worker_image_tag(root: Path = REPO_ROOT, base: str = "") -> str:
    """`kchaos-worker:<hash of what the image is built from>` (files and base image name):
    an edited worker gets a new image, never a stale one under the same tag."""
    digest = hashlib.sha256(base.encode())
    files = [root / name for name in IMAGE_INPUTS]
    for top in SOURCE_DIRS:
        files += [
            p for p in (root / top).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
        ]
    for path in sorted(files):
        if path.exists():
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return f"{WORKER_IMAGE_REPO}:{digest.hexdigest()[:12]}"
