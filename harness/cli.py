"""The `kchaos` command: parse, dispatch, and map failures to Jepsen's exit codes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from rich.markup import escape

from harness.console import err
from harness.errors import EXIT_BAD_INPUT, EXIT_HARNESS_FAILED, HarnessError, UsageError
from harness.results import DEFAULT_RESULTS_DIR


class Parser(argparse.ArgumentParser):
    """argparse exits 2 on bad options; kchaos reserves 2 for 'unknown' and uses 254."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `kchaos {self.prog.split(' ', 1)[-1]} --help`)")


Handler = Callable[[argparse.Namespace], int]


def _kafka_up(args: argparse.Namespace) -> int:
    from harness.kafka import commands

    return commands.up(args.results_dir, commands.validate_brokers(args.brokers))


def _kafka_status(args: argparse.Namespace) -> int:
    from harness.kafka import commands

    return commands.status(args.results_dir)


def _kafka_fetch(args: argparse.Namespace) -> int:
    from harness.kafka import commands

    return commands.fetch()


def _clean(args: argparse.Namespace) -> int:
    from harness.console import out
    from harness.procs import clean

    stopped = clean(args.results_dir)
    for record in stopped:
        out.print(f"stopped {record.name} (pid {record.pid})")
    out.print(f"{len(stopped)} process(es) stopped")
    return 0


def build_parser() -> Parser:
    parser = Parser(prog="kchaos", description="Crash-consistency harness for Kafka streams apps")
    parser.add_argument(
        "--results-dir", type=Path, default=DEFAULT_RESULTS_DIR,
        help="where run folders live (default: ./results)",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    kafka = commands.add_parser("kafka", help="the local Kafka cluster")
    kafka_commands = kafka.add_subparsers(dest="kafka_command", required=True, parser_class=Parser)
    up = kafka_commands.add_parser("up", help="start a cluster; runs until Ctrl-C")
    up.add_argument("--brokers", type=int, default=1, help="1 (default) or 3 KRaft nodes")
    up.set_defaults(handler=_kafka_up)
    kafka_commands.add_parser("status", help="clusters started by kchaos").set_defaults(
        handler=_kafka_status
    )
    kafka_commands.add_parser("fetch", help="fetch the Kafka jars into the cache").set_defaults(
        handler=_kafka_fetch
    )

    commands.add_parser("clean", help="stop processes a crashed harness left").set_defaults(
        handler=_clean
    )
    return parser


def _say_one_line(prefix: str, exc: Exception) -> None:
    err.print(f"[red]{prefix}[/] {escape(str(exc))}", highlight=False, soft_wrap=True)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        handler: Handler = args.handler
        return handler(args)
    except UsageError as exc:
        _say_one_line("kchaos:", exc)
        return EXIT_BAD_INPUT
    except HarnessError as exc:
        _say_one_line("kchaos: harness failed:", exc)
        return EXIT_HARNESS_FAILED
    except KeyboardInterrupt:
        err.print("[yellow]kchaos: interrupted[/]")
        return 130


if __name__ == "__main__":
    sys.exit(main())
