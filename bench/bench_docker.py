"""Docker platform figures: image builds cold and warm, container start to RUNNING.

    .venv/bin/python bench/bench_docker.py [--cold] [--starts 3]

warm: the images as `make images` finds them (cache and tags in place: what every run
pays). --cold: the broker and worker images again without the engine's cache, under
throwaway tags (removed afterwards). Then --starts times: a pod container started to its
trace's RUNNING, and a broker container started to an admin call answering.
The fault recovery per kind, docker beside local: bench_faults.py --platforms local,docker.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import docker
from rich.console import Console
from rich.table import Table

from harness.platforms import docker_images as images
from harness.platforms.docker import DockerKafka, DockerPlatform, cleanup_run
from harness.platforms.docker_engine import require_engine
from harness.run.topics import create_topics
from harness.sut.base import PodSettings

console = Console()


def timed(action: Callable[[], object]) -> float:
    started = time.monotonic()
    action()
    return round(time.monotonic() - started, 1)


def cold_build(client: docker.DockerClient, which: str) -> float:
    """One image without the engine's cache, under a throwaway tag (removed after)."""
    tag = f"kchaos-bench-{which}:{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    try:
        if which == "worker":
            images.ensure_worker_image(client, tag=tag, nocache=True)
        else:
            images.ensure_kafka_image(client, tag=tag, nocache=True)
        return round(time.monotonic() - started, 1)
    finally:
        client.images.remove(tag, force=True)


def running(trace: Path) -> bool:
    if not trace.exists():
        return False
    return any(json.loads(line).get("to") == "RUNNING"
               for line in trace.read_text().splitlines() if line.strip())


def start_figures(starts: int) -> list[tuple[str, float]]:
    rows: list[tuple[str, float]] = []
    root = Path(tempfile.mkdtemp(prefix="kchaos-bench-docker-"))
    run_id = f"bench-{uuid.uuid4().hex[:8]}"
    kafka = DockerKafka(root, run_id, 1)
    try:
        rows.append(("broker container start -> admin call answers", timed(kafka.start)))
        create_topics(kafka.bootstrap, 4, replication=1)
        worker = PodSettings(bootstrap=kafka.internal_bootstrap, application_id="bench-app",
                              threads=1, standbys=0, guarantee="exactly_once_v2")
        platform = DockerPlatform(root / "run", worker, 1, run_id=run_id,
                                  client=kafka.client, network=kafka.network)
        try:
            for n in range(starts):
                name = f"pod-{n}"
                started = time.monotonic()
                platform.add_pod(name, "node-0")
                while not running(platform.trace_path(name)):
                    time.sleep(0.05)
                rows.append((f"pod container start -> RUNNING ({name})",
                             round(time.monotonic() - started, 1)))
                platform.kill_pod(name)
        finally:
            platform.teardown()
    finally:
        kafka.stop()
        cleanup_run(kafka.client, run_id)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--starts", type=int, default=3)
    args = parser.parse_args()
    require_engine()
    client = images.build_client()
    table = Table(title="docker platform (this machine, this engine)")
    table.add_column("what")
    table.add_column("seconds", justify="right")
    for what, ensure in (("base", images.ensure_base_image), ("kafka", images.ensure_kafka_image),
                         ("worker", images.ensure_worker_image)):
        table.add_row(f"image {what}, warm (as found)", str(timed(lambda e=ensure: e(client))))
    if args.cold:
        for which in ("kafka", "worker"):
            table.add_row(f"image {which}, cold (no cache)", str(cold_build(client, which)))
    for what, seconds in start_figures(args.starts):
        table.add_row(what, str(seconds))
    console.print(table)


if __name__ == "__main__":
    main()
