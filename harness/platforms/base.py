"""What every platform shares: the worker's configuration and command line.

The platform interface itself (`Platform`, `Pod`) is `faults.platform`: it is what the
nemesis speaks, and harness depends on faults, not the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass

from faults.platform import Platform, Pod

__all__ = ["WORKER_MODULE", "Platform", "Pod", "WorkerConfig"]

# How the worker is configured; the platform turns it into a command line.
WORKER_MODULE = "workloads.worker"


@dataclass(frozen=True)
class WorkerConfig:
    """Worker settings shared by every pod of a run (the CLI flags of workloads.worker)."""

    bootstrap: str
    application_id: str
    threads: int
    standbys: int
    guarantee: str
    bugs: tuple[str, ...] = ()
    commit_interval_ms: int = 500
    write_buffer_bytes: int = 64 * 1024
    cleaner_delay_ms: int = 600_000
    cleaner_interval_ms: int = 60_000
    extra_args: tuple[str, ...] = ()

    def argv(self, pod: str, state_dir: str, trace: str, control: str) -> list[str]:
        args = [
            "--bootstrap", self.bootstrap,
            "--application-id", self.application_id,
            "--instance-id", pod,
            "--state-dir", state_dir,
            "--threads", str(self.threads),
            "--standbys", str(self.standbys),
            "--guarantee", self.guarantee,
            "--trace", trace,
            "--control-file", control,
            "--commit-interval-ms", str(self.commit_interval_ms),
            "--write-buffer-bytes", str(self.write_buffer_bytes),
            "--cleaner-delay-ms", str(self.cleaner_delay_ms),
            "--cleaner-interval-ms", str(self.cleaner_interval_ms),
        ]
        if self.bugs:
            args += ["--bugs", ",".join(self.bugs)]
        return [*args, *self.extra_args]
