"""The `kchaos` command: parse (each command's options are in harness/commands.py), dispatch,
and map failures to Jepsen's exit codes."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from rich.markup import escape

from harness.commands import COMMANDS, Handler
from harness.config.options import Parser
from harness.console import err
from harness.errors import (
    HarnessError,
    Interrupted,
    StopSignal,
    UsageError,
    environment_problem,
    exit_code_for_exception,
)
from harness.results import DEFAULT_RESULTS_DIR


def build_parser() -> Parser:
    parser = Parser(prog="kchaos", description="Crash-consistency harness for Kafka streams apps")
    parser.add_argument(
        "--results-dir", type=Path, default=DEFAULT_RESULTS_DIR,
        help="where run folders live (default: ./results)",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for add_command in COMMANDS:
        add_command(commands)
    return parser


def _say_one_line(prefix: str, exc: Exception) -> None:
    err.print(f"[red]{prefix}[/] {escape(str(exc))}", highlight=False, soft_wrap=True)


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _stop_on_sigterm() -> Iterator[None]:
    """SIGTERM (how the nightly and CI stop a run) and SIGHUP act as Ctrl-C: the run stops
    its pods and brokers and writes run.json. Once: a second signal during that clean-up
    is ignored rather than cutting it short (SIGKILL remains for that). The previous
    handlers come back afterwards (tests call main() in their own process)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_interrupted(signum: int, frame: object) -> None:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        StopSignal.received = signum
        raise Interrupted(signum)

    StopSignal.received = None
    before = {sig: signal.signal(sig, raise_interrupted) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _crash_file(results_dir: Path | None) -> Path:
    """Where the traceback of a harness failure goes: the results folder, never the
    working directory; the temp folder if the results folder cannot be written."""
    import tempfile
    import traceback

    text = traceback.format_exc()
    for folder in (results_dir, Path(tempfile.gettempdir())):
        if folder is None:
            continue
        try:
            folder.mkdir(parents=True, exist_ok=True)
            crash = (folder / "kchaos-crash.txt").resolve()
            crash.write_text(text)
            return crash
        except OSError:
            continue
    return Path("(not written)")


def main(argv: Sequence[str] | None = None) -> int:
    args: argparse.Namespace | None = None
    try:
        with _stop_on_sigterm():
            args = build_parser().parse_args(argv)
            handler: Handler = args.handler
            return handler(args)
    except KeyboardInterrupt as exc:
        what = "stopped by signal" if isinstance(exc, Interrupted) else "interrupted"
        err.print(f"[yellow]kchaos: {what}[/]", highlight=False)
        return exit_code_for_exception(exc)
    except Exception as exc:
        _say_how_it_ended(exc, args)
        return exit_code_for_exception(exc)


def _say_how_it_ended(exc: Exception, args: argparse.Namespace | None) -> None:
    if StopSignal.received is not None:  # a library swallowed the signal's exception
        err.print("[yellow]kchaos: stopped by signal[/]", highlight=False)
    elif isinstance(exc, UsageError):
        _say_one_line("kchaos:", exc)
    elif isinstance(exc, HarnessError):
        _say_one_line("kchaos: harness failed:", exc)
    elif (problem := environment_problem(exc)) is not None:
        # The machine, not the harness (full disk, read-only folder).
        _say_one_line("kchaos:", RuntimeError(problem))
    else:  # the harness itself broke: one line, the traceback in a file
        crash = _crash_file(getattr(args, "results_dir", None))
        _say_one_line("kchaos: harness failed:", RuntimeError(f"{exc!r} (traceback: {crash})"))


if __name__ == "__main__":
    sys.exit(main())
