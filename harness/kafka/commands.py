"""`kchaos kafka up|status|fetch`."""

from __future__ import annotations

import shutil
import signal
import tempfile
import time
from pathlib import Path

from kafka.errors import KafkaError

from harness.console import err, out
from harness.kafka.cluster import CLUSTER_FILE, KafkaCluster, describe_brokers
from harness.kafka.jars import kafka_libs, kafka_version
from harness.procs import ProcessRegistry, is_same_process, load_records
from harness.results import new_run_dir, read_json


def fetch(version: str | None = None) -> int:
    """The jars of Kafka `version` (default: the pinned one) and its broker warm start."""
    version = version or kafka_version()
    with err.status(f"fetching Kafka {version} jars from Maven Central"):
        libs = kafka_libs(version)
    out.print(f"Kafka {version} jars in {libs}")
    if shutil.which("java") is None:
        out.print("no java on PATH: the broker warm start is made on the first start")
        return 0
    with tempfile.TemporaryDirectory(prefix="kchaos-warm-start-") as tmp:
        registry = ProcessRegistry(Path(tmp))
        try:
            with err.status("preparing broker warm starts (class archive, storage templates)"):
                used = [KafkaCluster(Path(tmp) / f"size-{n}", registry, size=n,
                                     version=version).prepare()
                        for n in (1, 3)]
        finally:
            registry.stop_all()
    out.print(f"broker class archive ({used[0].get('jvm_archive', '')}): "
              f"{used[0].get('jvm_archive_path') or 'none'}", soft_wrap=True)
    return 0


def up(results_dir: Path, brokers: int, version: str | None = None) -> int:
    """Start a cluster of Kafka `version` (default: the pinned one) and keep it until
    Ctrl-C (or SIGTERM)."""
    version = version or kafka_version()
    kafka_libs(version)  # a release Maven Central does not serve: said before the folder
    run_dir = new_run_dir(results_dir, f"kafka-{brokers}")
    registry = ProcessRegistry(run_dir)
    cluster = KafkaCluster(run_dir, registry, size=brokers, version=version)
    # SIGTERM stops it as Ctrl-C does: a handler that set a threading.Event could wait
    # forever for the event's lock, held by this very thread inside the event's wait().
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        started = time.monotonic()
        with err.status(f"starting {brokers} Kafka node(s) in {run_dir}"):
            cluster.start()
        out.print(
            f"[green]Kafka {version} ready[/] in {time.monotonic() - started:.1f}s: "
            f"bootstrap [bold]{cluster.bootstrap}[/]  (Ctrl-C stops it)"
        )
        out.print(cluster.bootstrap, highlight=False, soft_wrap=True, markup=False)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        with err.status("stopping Kafka"):
            registry.stop_all()
    return 0


def status(results_dir: Path) -> int:
    """Every cluster under the results folder that still has a live broker."""
    found = False
    for cluster_file in sorted(results_dir.glob(f"*/{CLUSTER_FILE}")):
        records = [r for r in load_records(cluster_file.parent / "pids.json") if is_same_process(r)]
        brokers = [r for r in records if r.name.startswith("kafka-")]
        if not brokers:
            continue
        found = True
        info = read_json(cluster_file)
        try:
            registered = sorted(describe_brokers(info["bootstrap"]))
            state = f"[green]up[/], brokers {registered}"
        except KafkaError as exc:
            state = f"[red]not answering[/] ({type(exc).__name__})"
        pids = ", ".join(str(r.pid) for r in brokers)
        version = f"Kafka {info['version']} " if info.get("version") else ""
        out.print(f"{cluster_file.parent.name}: {version}{info['bootstrap']} {state} "
                  f"(pids {pids})")
    if not found:
        out.print("no running kchaos Kafka cluster")
    return 0

