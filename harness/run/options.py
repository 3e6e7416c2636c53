"""`kchaos run`'s options, declared once: the CLI builds its `run` command from them and
the nightly checks a matrix cell's options against them (without importing the CLI, which
imports the nightly), and `explicit_settings` turns parsed options into the settings
`harness.run.config.resolve` takes.

`Parser` is argparse with kchaos's exit codes: a bad option is one line and 254 (argparse
would exit 2, which kchaos keeps for 'unknown').
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from harness.errors import UsageError
from harness.run.platforms import DEFAULT_PLATFORM, PLATFORMS
from harness.run.suts import DEFAULT_SUT, SUT_KINDS


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


# `kchaos run --kafka-version` and `kchaos kafka up|fetch --kafka-version`
KAFKA_VERSION_HELP = ("(3.7 or newer, its jars fetched from Maven Central; default: "
                      "harness/kafka/pom.xml's <kafka.version>)")

RUN_OPTIONS: list[tuple[str, str, type, str]] = [
    ("--profile", "profile", str, "fault mix: kill, move, checkpoint, global, all, or a seed's"),
    ("--seed", "seed", int, "determines the event stream and the fault plan"),
    ("--time-limit", "time_limit_s", float, "seconds of load + faults (default 60)"),
    ("--pods", "pods", int, "worker pods (default 2)"),
    ("--threads", "threads", int, "stream threads per pod (default 2)"),
    ("--standbys", "standbys", int, "standby replicas per task (default 0)"),
    ("--brokers", "brokers", int, "Kafka nodes: 1 or 3 (default 1)"),
    ("--rate", "rate", float, "input events per second (default 100)"),
    ("--guarantee", "guarantee", str, "exactly_once_v2 (default) or at_least_once"),
    ("--bootstrap", "bootstrap", str, "use this Kafka instead of starting one (HOST:PORT)"),
    ("--platform", "platform", str, "where pods and brokers run: " + ", ".join(
        f"{k.name} ({k.summary}{', default' if k.name == DEFAULT_PLATFORM else ''})"
        for k in PLATFORMS.values())),
    ("--restart", "restart", str,
     "pod restart policy: always (default; an exited pod restarts after a back-off) or never"),
    ("--sut", "sut", str, "what runs in the pods: " + ", ".join(
        f"{k.name} ({k.summary}{', default' if k.name == DEFAULT_SUT else ''})"
        for k in SUT_KINDS.values())),
    ("--kstreams-version", "kstreams_version", str,
     "Kafka Streams release of --sut kstreams (default: workloads/kstreams/pom.xml's) or app "
     "(default: harness/sut/app.py's DEFAULT_VERSION)"),
    ("--kafka-version", "kafka_version", str, "Kafka release of the brokers the run starts"
                                              f" {KAFKA_VERSION_HELP}"),
    ("--group-protocol", "group_protocol", str,
     "Kafka Streams' rebalance protocol: classic (default) or streams (KIP-1071; --sut "
     "kstreams or app, Kafka Streams and brokers 4.4 or newer; docs/kstreams.md)"),
    ("--app", "app", str, "--sut app: the app, a jar, a Maven project folder or "
                          "GROUP:ARTIFACT:VERSION (docs/your-app.md)"),
    ("--app-class", "app_class", str,
     "--sut app: CLASS[#METHOD], a public method returning the app's Topology, taking "
     "Properties or nothing (default: the spec's app_class; METHOD default topology)"),
    ("--app-main", "app_main", str,
     "--sut app: run the app's own main of this class, taken over at its KafkaStreams "
     "(default, when no --app-class: the jar's Main-Class)"),
    ("--app-args", "app_args", str,
     "--sut app: the arguments of --app-main, one shell-quoted string (--app-args='--x 1')"),
    ("--input", "input_spec", str, "--sut app: the input spec file (docs/your-app.md)"),
    ("--spark-master", "spark_master", str, "Spark master URL for the check (default local[*])"),
    ("--drain-timeout", "drain_timeout_s", float, "seconds to wait for the group to catch up"),
]


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    for flag, dest, kind, text in RUN_OPTIONS:
        run.add_argument(flag, dest=dest, type=kind, default=None, help=text)
    run.add_argument("--bugs", default=None, help="worker bug switches, comma-separated")
    run.add_argument("--streams-config", default=None,
                     help="Kafka Streams settings of --sut kstreams: KEY=VALUE[,KEY=VALUE]")
    run.add_argument("--set", dest="settings", action="append", default=None,
                     metavar="KEY=VALUE[,...]",
                     help="any other run setting (session_timeout_ms, commit_interval_ms, "
                          "partitions, max_poll_records, ...; run.json lists them)")
    run.add_argument("--oracle", action="store_const", const=True, default=None,
                     help="--sut kstreams: judge the ledger app by the differential oracle "
                          "too (docs/your-app.md)")
    run.add_argument("--knobs", choices=("drawn", "default"), default="drawn",
                     help="a broad profile's settings drawn from the seed (default) or its "
                          "defaults (docs/faults.md, knobs)")


def parse_run_args(args: Sequence[str]) -> argparse.Namespace:
    """`kchaos run`'s options alone (a nightly cell's), UsageError on a bad one."""
    run = Parser(prog="kchaos run")
    add_run_arguments(run)
    return run.parse_args(list(args))


def settings_argv(settings: Sequence[tuple[str, str]]) -> list[str]:
    """Run settings by name as `kchaos run` options (a nightly cell's `settings`)."""
    return [f"--set={key}={value}" for key, value in settings]


def explicit_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the options gave (those left out are the profile's or drawn)."""
    from harness.run.config import parse_setting

    explicit: dict[str, Any] = {dest: getattr(args, dest) for _, dest, _, _ in RUN_OPTIONS
                                if getattr(args, dest) is not None}
    for path_option in ("app", "input_spec"):  # run.json keeps them for repro from anywhere
        given = explicit.get(path_option)
        if given is not None and os.path.exists(given):
            explicit[path_option] = os.path.abspath(given)
    if args.oracle:
        explicit["oracle"] = True
    if args.bugs is not None:
        explicit["bugs"] = tuple(b for b in args.bugs.split(",") if b)
    if args.streams_config is not None:
        explicit["streams_config"] = tuple(s for s in args.streams_config.split(",") if s)
    for text in (t for given in args.settings or () for t in given.split(",") if t):
        key, value = parse_setting(text)
        explicit[key] = value
    return explicit
