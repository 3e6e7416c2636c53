"""Worker configuration: one frozen dataclass, and the command-line flags derived from it.

Each field is one flag (`x_y` -> `--x-y` unless its metadata names another), with the
field's default: a setting and its default are said once, here. The harness's side of
the same contract is `harness.sut.base.PodSettings.argv`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path
from typing import Any

from workloads.ledger import contract
from workloads.worker.bugs import BUG_NAMES, parse_bugs

EXACTLY_ONCE_V2 = "exactly_once_v2"
AT_LEAST_ONCE = "at_least_once"


def _flag_meta(help: str = "", *, flag: str | None = None,
               parse: Callable[[str], Any] | None = None,
               choices: tuple[str, ...] = ()) -> dict[str, Any]:
    """How a field is a flag; `parse` turns the flag's text into the field's value."""
    return {"help": help, "flag": flag, "parse": parse, "choices": choices}


_INT = _flag_meta(parse=int)


def _path_or_none(text: str) -> Path | None:
    return Path(text) if text else None


@dataclass(frozen=True)
class WorkerConfig:
    bootstrap: str = field(metadata=_flag_meta("host:port of a broker"))
    state_dir: Path = field(metadata=_flag_meta("the pod's volume", parse=Path))
    application_id: str = contract.DEFAULT_APPLICATION_ID
    instance_id: str = field(default="pod-0", metadata=_flag_meta("pod name; static membership"))
    threads: int = field(default=1, metadata=_INT)
    standbys: int = field(default=0, metadata=_INT)
    guarantee: str = field(default=EXACTLY_ONCE_V2,
                           metadata=_flag_meta(choices=(EXACTLY_ONCE_V2, AT_LEAST_ONCE)))
    bugs: frozenset[str] = field(default_factory=frozenset, metadata=_flag_meta(
        "comma list of: " + ", ".join(BUG_NAMES), parse=parse_bugs))
    trace_file: Path | None = field(default=None, metadata=_flag_meta(
        "JSONL trace file (appended)", flag="--trace", parse=_path_or_none))
    control_file: Path | None = field(default=None, metadata=_flag_meta(
        "fault-injection hook", parse=_path_or_none))
    commit_interval_ms: int = field(default=500, metadata=_INT)
    write_buffer_bytes: int = field(default=64 * 1024, metadata=_INT)
    # Kafka Streams defaults: state.cleanup.delay.ms 10 min, cleaner runs at that period.
    cleaner_delay_ms: int = field(default=600_000, metadata=_INT)
    cleaner_interval_ms: int = field(default=600_000, metadata=_INT)
    session_timeout_ms: int = field(default=10_000, metadata=_INT)
    # Kafka Streams sets transaction.timeout.ms to 10 s under EOS so a zombie's open
    # transaction cannot hold the last stable offset (and restoration) for a minute.
    transaction_timeout_ms: int = field(default=10_000, metadata=_INT)
    # Records a poll returns: the stream thread's consumer (the consumer's default) and its
    # restore consumer. Kafka Streams has one max.poll.records (1000) for both.
    max_poll_records: int = field(default=500, metadata=_INT)
    restore_max_poll_records: int = field(default=2000, metadata=_INT)
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


def _flag(f: Field[Any]) -> str:
    return f.metadata.get("flag") or "--" + f.name.replace("_", "-")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m workloads.worker", description=__doc__)
    for f in fields(WorkerConfig):
        required = f.default is MISSING and f.default_factory is MISSING
        # Values stay text here; parse_args converts them, defaults are taken as they are.
        p.add_argument(_flag(f), dest=f.name, required=required, default=None,
                       help=f.metadata.get("help") or None,
                       choices=f.metadata.get("choices") or None)
    return p


def parse_args(argv: list[str] | None = None) -> WorkerConfig:
    """Parse flags; argparse exits 2 on bad flags, a bad value raises ValueError."""
    given = vars(build_parser().parse_args(argv))
    values: dict[str, Any] = {}
    for f in fields(WorkerConfig):
        text = given[f.name]
        if text is not None:
            parse = f.metadata.get("parse")
            try:
                values[f.name] = parse(text) if parse else text
            except ValueError as exc:
                raise ValueError(f"{_flag(f)} {text!r}: {exc}") from exc
    cfg = WorkerConfig(**values)
    if cfg.threads < 1 or cfg.standbys < 0:
        raise ValueError("--threads must be >= 1 and --standbys >= 0")
    if min(cfg.max_poll_records, cfg.restore_max_poll_records) < 1:
        raise ValueError("--max-poll-records and --restore-max-poll-records must be >= 1")
    return cfg
