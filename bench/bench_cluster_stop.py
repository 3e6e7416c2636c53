"""How long a 3-node local cluster takes to stop: all brokers at once (`KafkaCluster.stop`,
what a run's teardown does) against one by one (`ProcessRegistry.stop_all`, what it did
before): one by one, the last broker waits for a quorum that is gone until its grace ends.

Run: `.venv/bin/python bench/bench_cluster_stop.py [--runs N]`; everything binds
127.0.0.1 and every process it starts is stopped before it exits.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from harness.kafka.cluster import KafkaCluster
from harness.procs import ProcessRegistry


def stop_seconds(together: bool) -> tuple[float, int]:
    """Seconds to stop a fresh 3-node cluster, and how many brokers logged a completed
    controlled shutdown."""
    with tempfile.TemporaryDirectory(prefix="kchaos-stop-bench-") as tmp:
        registry = ProcessRegistry(Path(tmp))
        cluster = KafkaCluster(Path(tmp), registry, size=3)
        try:
            cluster.start()
            started = time.monotonic()
            if together:
                cluster.stop()
            else:
                registry.stop_all()
            seconds = time.monotonic() - started
        finally:
            registry.stop_all()
        clean = sum(
            f"[KafkaApi-{n.node_id}] Shutdown complete"
            in (Path(tmp) / "kafka" / f"broker-{n.node_id}.log").read_text()
            for n in cluster.nodes
        )
        return seconds, clean


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    console = Console()
    table = Table(title="3-node cluster stop")
    for column in ("how", "seconds (median)", "brokers shut down cleanly"):
        table.add_column(column)
    for together, how in ((True, "all at once (KafkaCluster.stop)"),
                          (False, "one by one (registry.stop_all)")):
        results = []
        for n in range(args.runs):
            console.print(f"{how}: run {n + 1}/{args.runs}")
            results.append(stop_seconds(together))
        table.add_row(how, f"{statistics.median(s for s, _ in results):.1f}",
                      f"{min(c for _, c in results)} of 3")
    console.print(table)


if __name__ == "__main__":
    main()
