"""The check phase of a run (docs/architecture.md, "A run", 7): the Spark it judges on,
started warm as the load begins, and the judgment of the run folder.

A run given `--spark-master` uses that; otherwise its own Spark Connect server starts with
the load at the lowest priority (the pods get the CPU) and warms up on an empty history,
so the check after the collection finds it up and its queries compiled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from checker.model import UNKNOWN, Verdict
from harness.procs import ProcessRegistry
from harness.shared_spark import WarmSpark

# The check's Spark starts during the load at the lowest priority: the pods get the CPU.
CHECK_SPARK_NICENESS = 19
CHECK_SPARK = "check-spark"  # its name in the process registry


class RunCheck:
    def __init__(self, run_dir: Path, registry: ProcessRegistry,
                 spark_master: str | None) -> None:
        self.run_dir, self.registry, self.spark_master = run_dir, registry, spark_master
        self.spark: WarmSpark | None = None

    def launch(self) -> None:
        """The run's own Spark, unless it was given one."""
        if self.spark_master is not None:
            return
        self.spark = WarmSpark(self.run_dir / "spark-connect.log", niceness=CHECK_SPARK_NICENESS)
        if self.spark.launch() and self.spark.server.proc is not None:
            self.registry.adopt(CHECK_SPARK, self.spark.server.proc)

    def hurry(self) -> None:
        """The load is over: the check comes soon (the server leaves its low priority)."""
        if self.spark is not None:
            self.spark.hurry()

    def judge(self) -> Verdict:
        """check_run on the run folder, on the warm Spark (local[*] if it failed)."""
        from checker.check import check_run

        master, fallback = self.spark_master, None
        if self.spark is not None:
            master = self.spark.url
            if master is None:
                fallback = (f"the run's Spark server failed ({self.spark.failed}); "
                            "checked on local[*]")
        verdict = check_run(self.run_dir, master, fallback=fallback).get("verdict")
        return verdict if verdict is True or verdict is False else UNKNOWN

    def stop(self) -> dict[str, Any] | None:
        """Stop the run's own Spark; what run.json keeps of it (None: it had none)."""
        if self.spark is None:
            return None
        proc = self.spark.server.proc
        self.spark.stop()
        if proc is not None:
            self.registry.forget(proc.pid)
        return self.spark.as_json()
