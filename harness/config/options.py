"""`kchaos run`'s options, made from the run's settings (harness/config/run.py's
`SETTINGS`, each declared once): the CLI builds its `run` command from them and the
nightly checks a matrix cell's options against them (without importing the CLI, which
imports the nightly), and `explicit_settings` turns parsed options into the settings
`harness.config.run.resolve` takes.

`Parser` is argparse with kchaos's exit codes: a bad option is one line and 254 (argparse
would exit 2, which kchaos keeps for 'unknown').
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, NoReturn

from harness.errors import UsageError


class Parser(argparse.ArgumentParser):
    """argparse exits 2 on bad options; kchaos reserves 2 for 'unknown' and uses 254."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """Unknown options named with the help of the command they were given to (argparse
        reports them at the top level: `kchaos --help`)."""
        commands = next((tuple(a.choices) for a in self._actions
                         if isinstance(a, argparse._SubParsersAction)), ())
        _refuse_misplaced_global_options(list(sys.argv[1:] if args is None else args), commands)
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            names = (getattr(parsed, "command", None), getattr(parsed, "kafka_command", None))
            command = " ".join([self.prog, *(n for n in names if n)])
            raise UsageError(f"unrecognized arguments: {' '.join(unknown)} "
                             f"(see `{command} --help`)")
        return parsed


GLOBAL_OPTIONS = ("--results-dir",)  # kchaos's own: before the command


def _refuse_misplaced_global_options(argv: list[str], commands: Sequence[str]) -> None:
    """`kchaos nightly --results-dir r`: argparse would read `r` as a subcommand of
    nightly's and blame it; the mistake is the option's place."""
    command = next((a for a in argv if a in commands), None)
    if command is None:
        return
    for option in argv[argv.index(command) + 1:]:
        if option.split("=", 1)[0] in GLOBAL_OPTIONS:
            raise UsageError(f"{option.split('=', 1)[0]} is an option of kchaos itself: put it "
                             f"before the command, `kchaos {option.split('=', 1)[0]} DIR "
                             f"{command} ...` (see `kchaos {command} --help`)")


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    """`kchaos run`'s options: one a setting that has a flag (harness/config/run.py's
    `SETTINGS`, with its help), `--set` for the others (listed after the options), and
    `--knobs`, which is how the settings are resolved rather than one of them."""
    from harness.config.run import SETTINGS

    for declared in SETTINGS.values():
        if declared.flag is not None:
            add_setting_option(command=run, name=declared.name)
    by_set = [s for s in SETTINGS.values() if s.flag is None and not s.many]
    run.add_argument("--set", dest="settings", action="append", default=None,
                     metavar="KEY=VALUE[,...]",
                     help="any other run setting, of those listed below (run.json lists "
                          "every setting of a run)")
    run.add_argument("--knobs", choices=("drawn", "default"), default="drawn",
                     help="a broad profile's settings drawn from the seed (default) or its "
                          "defaults (docs/faults.md, knobs)")
    run.formatter_class = argparse.RawDescriptionHelpFormatter  # the list below as written
    run.epilog = "settings of --set KEY=VALUE:\n" + "\n".join(
        textwrap.fill(f"{s.name}: {s.help_text()}", width=78, initial_indent="  ",
                      subsequent_indent="      ") for s in by_set)


def add_setting_option(command: argparse.ArgumentParser, name: str, what: str | None = None,
                       default: Any = None) -> None:
    """The option of run setting `name` (its flag, type and help; `what` in the help instead
    of its own words) in `command`, `kchaos run` or another that takes it (`kafka up
    --brokers`). `default` None: the option given or not (the run's own resolution)."""
    from harness.config.run import SETTINGS

    declared = SETTINGS[name]
    assert declared.flag is not None, name
    if declared.kind is bool:  # a switch: given is on
        command.add_argument(declared.flag, dest=name, action="store_const", const=True,
                             default=default, help=declared.help_text(what))
    else:
        command.add_argument(declared.flag, dest=name, default=default,
                             type=declared.parse if declared.many else declared.kind,
                             help=declared.help_text(what))


def parse_run_args(args: Sequence[str]) -> argparse.Namespace:
    """`kchaos run`'s options alone (a nightly cell's), UsageError on a bad one."""
    run = Parser(prog="kchaos run")
    add_run_arguments(run)
    return run.parse_args(list(args))


def given_settings(args: Sequence[str]) -> dict[str, Any]:
    """The settings `kchaos run` options give (a nightly cell's, whose values are then
    checked too: `check_given`), UsageError on a bad option."""
    return explicit_settings(parse_run_args(args))


def check_given(explicit: dict[str, Any]) -> None:
    """UsageError (one line) for a setting given a value its rule refuses: what `kchaos
    run` would say of it, said when a nightly's matrix is loaded rather than at its run."""
    from harness.config.run import SETTINGS

    for name, value in explicit.items():
        if name in SETTINGS:
            SETTINGS[name].checked(value)


def settings_argv(settings: Sequence[tuple[str, str]]) -> list[str]:
    """Run settings by name as `kchaos run` options (a nightly cell's `settings`)."""
    return [f"--set={key}={value}" for key, value in settings]


def explicit_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the options gave (those left out are the profile's or drawn)."""
    from harness.config.run import SETTINGS, parse_setting

    explicit: dict[str, Any] = {s.name: getattr(args, s.name) for s in SETTINGS.values()
                                if s.flag is not None and getattr(args, s.name) is not None}
    for text in (t for given in args.settings or () for t in given.split(",") if t):
        key, value = parse_setting(text)
        explicit[key] = value
    for name, given in explicit.items():  # run.json keeps them for repro from anywhere
        if SETTINGS[name].path and isinstance(given, str) and os.path.exists(given):
            explicit[name] = os.path.abspath(given)
    return explicit
