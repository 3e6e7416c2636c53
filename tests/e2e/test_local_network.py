"""End to end on `--platform local` with a run network, through the CLI: the fixed worker
stays valid across a partition and netem (delay, loss) on its pods' links; every fault is
applied and healed, shows on the report's timeline, and nothing of the run network (nor a
process) is left. Skipped, with the reason, where network namespaces cannot be made.

One run: profile `network`, seed 4, 25 s, draws netem on pod-0 (200 ms, jitter 20 ms,
10 % loss, for 7 s) and then a partition of pod-0 past its session timeout (9.7 s).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.platforms import netns as nl
from harness.procs import is_same_process, load_records

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow,
              pytest.mark.needs("ip", "tc", "iptables")]

PROBLEM = nl.netns_problem()


@pytest.mark.skipif(PROBLEM is not None, reason=f"needs network namespaces: {PROBLEM}")
def test_fixed_worker_is_valid_across_partitions_and_netem(tmp_path: Path,
                                                           spark_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness", "--results-dir", str(tmp_path), "run",
         "--profile", "network", "--seed", "4", "--time-limit", "25",
         "--spark-master", spark_url],
        capture_output=True, text=True, timeout=900,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("run folder: ")]
    assert lines, f"no run folder in output:\n{done.stdout}\n{done.stderr[-3000:]}"
    run_dir = Path(lines[-1].removeprefix("run folder: ").strip())
    try:
        result = json.loads((run_dir / "results.json").read_text())
        assert done.returncode == 0 and result["verdict"] is True, result["anomaly_counts"]
        steps = json.loads((run_dir / "plan.json").read_text())["steps"]
        assert {s["fault"] for s in steps} == {"partition", "netem"}
        assert all(s["status"] == "healed" for s in steps), steps
        # The brokers and pods lived in the run network, not on 127.0.0.1.
        network = json.loads((run_dir / "network.json").read_text())
        bootstrap = json.loads((run_dir / "run.json").read_text())["bootstrap"]
        assert bootstrap == f"{network['members']['broker-1']['address']}:9092"
        assert {"broker-1", "pod-0", "pod-1"} <= set(network["members"])
        ops = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
        for kind in ("partition", "netem"):
            phases = [o["value"]["phase"] for o in ops
                      if o["process"] == "nemesis" and o["f"] == kind]
            planned = sum(1 for s in steps if s["fault"] == kind)
            assert phases.count("start") == phases.count("end") == planned, (kind, phases)
        report = (run_dir / "report.html").read_text()
        assert "netem" in report and "partition" in report
        alive = [r for r in load_records(run_dir / "pids.json") if is_same_process(r)]
        assert not alive, f"processes left behind: {alive}"
    finally:
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        left += subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
        tag = nl.run_tag(run_dir)
        subprocess.run([sys.executable, "-m", "harness", "--results-dir", str(tmp_path),
                        "clean"], capture_output=True, timeout=120)
        assert tag not in left, f"run network left behind:\n{left}"
