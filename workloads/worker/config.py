"""Worker configuration: command-line flags -> one frozen dataclass."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from workloads.ledger import contract
from workloads.worker.bugs import BUG_NAMES, parse_bugs

EXACTLY_ONCE_V2 = "exactly_once_v2"
AT_LEAST_ONCE = "at_least_once"


@dataclass(frozen=True)
class WorkerConfig:
    bootstrap: str
    state_dir: Path
    application_id: str = contract.DEFAULT_APPLICATION_ID
    instance_id: str = "pod-0"
    threads: int = 1
    standbys: int = 0
    guarantee: str = EXACTLY_ONCE_V2
    bugs: frozenset[str] = field(default_factory=frozenset)
    trace_file: Path | None = None
    control_file: Path | None = None
    commit_interval_ms: int = 500
    write_buffer_bytes: int = 64 * 1024
    # Kafka Streams defaults: state.cleanup.delay.ms 10 min, cleaner runs at that period.
    cleaner_delay_ms: int = 600_000
    cleaner_interval_ms: int = 600_000
    session_timeout_ms: int = 10_000
    # Kafka Streams sets transaction.timeout.ms to 10 s under EOS so a zombie's open
    # transaction cannot hold the last stable offset (and restoration) for a minute.
    transaction_timeout_ms: int = 10_000
    input_topic: str = contract.INPUT_TOPIC
    output_topic: str = contract.OUTPUT_TOPIC
    accounts_topic: str = contract.ACCOUNTS_TOPIC

    @property
    def eos(self) -> bool:
        return self.guarantee == EXACTLY_ONCE_V2

    def bug(self, name: str) -> bool:
        return name in self.bugs

    @property
    def app_dir(self) -> Path:
        return self.state_dir / self.application_id

    def changelog(self, store: str) -> str:
        return contract.changelog_topic(self.application_id, store)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m workloads.worker", description=__doc__)
    p.add_argument("--bootstrap", required=True, help="host:port of a broker")
    p.add_argument("--application-id", default=contract.DEFAULT_APPLICATION_ID)
    p.add_argument("--instance-id", default="pod-0", help="pod name; static membership id")
    p.add_argument("--state-dir", required=True, type=Path)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--standbys", type=int, default=0)
    p.add_argument("--guarantee", choices=(EXACTLY_ONCE_V2, AT_LEAST_ONCE), default=EXACTLY_ONCE_V2)
    p.add_argument("--bugs", default="", help="comma list of: " + ", ".join(BUG_NAMES))
    p.add_argument("--trace", type=Path, default=None, help="JSONL trace file (appended)")
    p.add_argument("--control-file", type=Path, default=None, help="fault-injection hook")
    p.add_argument("--commit-interval-ms", type=int, default=500)
    p.add_argument("--write-buffer-bytes", type=int, default=64 * 1024)
    p.add_argument("--cleaner-delay-ms", type=int, default=600_000)
    p.add_argument("--cleaner-interval-ms", type=int, default=600_000)
    p.add_argument("--session-timeout-ms", type=int, default=10_000)
    p.add_argument("--input-topic", default=contract.INPUT_TOPIC)
    p.add_argument("--output-topic", default=contract.OUTPUT_TOPIC)
    p.add_argument("--accounts-topic", default=contract.ACCOUNTS_TOPIC)
    return p


def parse_args(argv: list[str] | None = None) -> WorkerConfig:
    """Parse flags; argparse exits 2 on bad flags, an unknown bug name raises ValueError."""
    a = build_parser().parse_args(argv)
    if a.threads < 1 or a.standbys < 0:
        raise ValueError("--threads must be >= 1 and --standbys >= 0")
    return WorkerConfig(
        bootstrap=a.bootstrap,
        state_dir=a.state_dir,
        application_id=a.application_id,
        instance_id=a.instance_id,
        threads=a.threads,
        standbys=a.standbys,
        guarantee=a.guarantee,
        bugs=parse_bugs(a.bugs),
        trace_file=a.trace,
        control_file=a.control_file,
        commit_interval_ms=a.commit_interval_ms,
        write_buffer_bytes=a.write_buffer_bytes,
        cleaner_delay_ms=a.cleaner_delay_ms,
        cleaner_interval_ms=a.cleaner_interval_ms,
        session_timeout_ms=a.session_timeout_ms,
        input_topic=a.input_topic,
        output_topic=a.output_topic,
        accounts_topic=a.accounts_topic,
    )
