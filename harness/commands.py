"""`kchaos`'s commands, each as its options beside its handler: `add_<command>` adds its
parser to the command list and names its handler, which imports what the command runs
only when it is given (so `kchaos --help` starts fast). `COMMANDS` is the order of the
help; harness/cli.py builds the parser from it and maps failures to exit codes."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from harness.config.options import Parser, add_run_arguments, add_setting_option, explicit_settings
from harness.errors import UsageError

T = TypeVar("T")
Handler = Callable[[argparse.Namespace], int]
Commands = argparse._SubParsersAction  # the `add_subparsers` of a Parser


def add_kafka(commands: Commands) -> None:
    kafka = commands.add_parser("kafka", help="the local Kafka cluster")
    kafka_commands = kafka.add_subparsers(dest="kafka_command", required=True, parser_class=Parser)
    up = kafka_commands.add_parser("up", help="start a cluster; runs until Ctrl-C")
    add_setting_option(up, "brokers", "KRaft nodes", default=1)
    add_setting_option(up, "kafka_version", "the brokers' Kafka release")
    up.set_defaults(handler=_kafka_up)
    kafka_commands.add_parser("status", help="clusters started by kchaos").set_defaults(
        handler=_kafka_status)
    fetch = kafka_commands.add_parser("fetch", help="fetch the Kafka jars into the cache")
    add_setting_option(fetch, "kafka_version", "the Kafka release to fetch")
    fetch.set_defaults(handler=_kafka_fetch)


def _checked(name: str, value: T) -> T:
    """An option of `kchaos kafka` that is a run setting (`--brokers`, `--kafka-version`),
    held to that setting's rule: UsageError (one line) if it refuses the value."""
    from harness.config.run import SETTINGS

    return SETTINGS[name].checked(value)


def _kafka_up(args: argparse.Namespace) -> int:
    from harness.kafka import commands

    return commands.up(args.results_dir, _checked("brokers", args.brokers),
                       _checked("kafka_version", args.kafka_version))


def _kafka_status(args: argparse.Namespace) -> int:
    from harness.kafka import commands

    return commands.status(args.results_dir)


def _kafka_fetch(args: argparse.Namespace) -> int:
    from harness.kafka import commands

    return commands.fetch(_checked("kafka_version", args.kafka_version))


def add_run(commands: Commands) -> None:
    run = commands.add_parser("run", help="one chaos run, ending in a verdict and a report")
    add_run_arguments(run)
    run.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from harness.run.command import run

    return run(explicit_settings(args), args.results_dir, draw_knobs=args.knobs == "drawn")


def add_repro(commands: Commands) -> None:
    repro = commands.add_parser("repro", help="replay a run's plan and config")
    repro.add_argument("run_dir", type=Path)
    repro.add_argument("--times", type=int, default=1, help="replays (default 1)")
    repro.add_argument("--into", type=Path, default=None,
                       help="results folder for the replays (default: beside RUN_DIR)")
    repro.add_argument("--spark-master", default=None,
                       help="check the replays here (default: the run's, or local[*])")
    repro.set_defaults(handler=_repro)


def _repro(args: argparse.Namespace) -> int:
    from harness.run.command import repro

    return repro(args.run_dir, args.times, args.into, args.spark_master)


def _add_reruns(parser: Parser, times: str, min_hits: str, anomaly: str, into: str) -> None:
    """The options shrink and bisect share: a run folder, K reruns of each candidate, M
    hits of the anomaly to keep it, the classes a rerun must show, where the results go."""
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--times", type=int, default=3, help=f"{times}, K (3)")
    parser.add_argument("--min-hits", type=int, default=2, help=f"{min_hits}, M (2)")
    parser.add_argument("--anomaly", default=None, help=anomaly)
    parser.add_argument("--into", type=Path, default=None,
                        help=f"results folder for the {into} folder (default: beside RUN_DIR)")


def add_shrink(commands: Commands) -> None:
    shrink = commands.add_parser("shrink", help="minimise a failing run's plan")
    _add_reruns(shrink, "reruns per candidate",
                "hits of the same anomaly class to keep a candidate",
                "class(es) a rerun must show, A[,B] (default: the run's, less `unavailable`)",
                "shrink")
    shrink.add_argument("--budget", default="30m", help="e.g. 30m, 2h (default 30m)")
    shrink.set_defaults(handler=_shrink)


def _shrink(args: argparse.Namespace) -> int:
    from harness.nightly.durations import parse_duration
    from harness.shrink.command import shrink

    return shrink(args.run_dir, args.times, args.min_hits, parse_duration(args.budget),
                  args.into, args.anomaly)


def add_bisect(commands: Commands) -> None:
    bisect = commands.add_parser(
        "bisect", help="the Kafka Streams release where a failing kstreams run stops failing "
                       "(or, from a valid run and --anomaly, where it starts)")
    _add_reruns(bisect, "replays per release",
                "hits of the run's anomaly classes for a release to reproduce",
                "class(es) a replay must show, A[,B] (default: the run's, less `unavailable`; "
                "e.g. dedup-skip,lost-history for the data loss); from a valid run, what to "
                "search for", "bisect")
    bisect.add_argument("--versions", default=None,
                        help="releases A..B, both inclusive (default: the run's to the newest)")
    bisect.set_defaults(handler=_bisect)


def _bisect(args: argparse.Namespace) -> int:
    from harness.bisect.command import bisect

    return bisect(args.run_dir, args.versions, args.times, args.min_hits, args.into,
                  args.anomaly)


def add_probe(commands: Commands) -> None:
    probe = commands.add_parser(
        "probe", help="a deterministic probe of one Kafka behaviour on each broker release "
                      "(docs/findings/)")
    probe.add_argument("probe", metavar="NAME",
                       help="leaderless-markers: transaction markers dropped for a partition "
                            "without a leader, then the same producer's next transaction "
                            "aborted and the partition read committed")
    probe.add_argument("--kafka-versions", default="4.2.2,4.3.0,4.3.1,4.4.0",
                       help="broker releases A,B,... (default 4.2.2,4.3.0,4.3.1,4.4.0)")
    probe.set_defaults(handler=_probe)


def _probe(args: argparse.Namespace) -> int:
    from harness.probes.command import probe_releases

    return probe_releases(args.results_dir, args.probe, args.kafka_versions)


def add_check(commands: Commands) -> None:
    check = commands.add_parser("check", help="judge a run's stored history again")
    check.add_argument("run_dir", type=Path, nargs="+", help="one or more run folders")
    check.add_argument("--spark-master", default=None,
                       help="default local[*]; sc://HOST:PORT for a Spark Connect server")
    check.set_defaults(handler=_check)


def _check(args: argparse.Namespace) -> int:
    from harness.run.command import check

    return check(args.run_dir, args.spark_master)


def add_report(commands: Commands) -> None:
    report = commands.add_parser(
        "report", help="render a run's report.html (or a nightly's nightly.html) again")
    report.add_argument("run_dir", type=Path)
    report.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> int:
    from harness.console import out
    from harness.report import render_index, render_report, write_run_junit
    from harness.report.index import is_run_dir
    from harness.report.nightlies import NIGHTLY_JSON
    from harness.report.nightly_page import render_nightly
    from harness.report.run_files import read_verdict_files

    if (args.run_dir / NIGHTLY_JSON).is_file():  # a nightly's folder: its summary page
        try:
            out.print(f"nightly page: {render_nightly(args.run_dir)}", highlight=False,
                      soft_wrap=True)
        except (OSError, ValueError) as exc:
            raise UsageError(f"{args.run_dir / NIGHTLY_JSON} cannot be read ({exc}): run "
                             "`kchaos nightly` again to get a new one") from exc
        out.print(f"index:  {render_index(args.run_dir.parent)}", highlight=False, soft_wrap=True)
        return 0
    if not is_run_dir(args.run_dir):  # else report.html lands in it, index.html beside it
        raise UsageError(f"{args.run_dir} is not a kchaos run folder (no run.json): pass "
                         "a folder under results/, e.g. the `run folder:` a run printed, "
                         "or a nightly's folder")
    page = render_report(args.run_dir)
    out.print(f"report: {page}", highlight=False, soft_wrap=True)
    write_run_junit(args.run_dir)
    out.print(f"index:  {render_index(args.run_dir.parent)}", highlight=False, soft_wrap=True)
    damaged = [s for s in read_verdict_files(args.run_dir).states if s.status == "damaged"]
    if damaged:  # the page is written (a damaged run is when one is needed), yet not a pass
        raise UsageError(
            f"{args.run_dir / damaged[0].name} is damaged ({damaged[0].detail}): the report "
            f"marks it damaged beside what the other files hold; `kchaos check "
            f"{args.run_dir}` judges the run again from its history")
    return 0


def _int_in(low: int, high: int | None, what: str) -> Callable[[str], int]:
    """An argparse type: an integer from `low` to `high` (None: no bound), else `what`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
        return value

    return parse


def _seeds(text: str) -> object:
    """`--seeds 2,3` (an argparse type, imported only when given, as `--shard`)."""
    from harness.nightly.matrix import parse_seeds

    return parse_seeds(text)


def _shard(text: str) -> object:
    """`--shard I/N` (an argparse type; harness.nightly is imported only when it is given)."""
    from harness.nightly.shard import parse_shard

    return parse_shard(text)


def add_nightly(commands: Commands) -> None:
    nightly = commands.add_parser("nightly", help="a matrix of runs within a time budget")
    nightly.add_argument("--budget", default="2h", help="e.g. 90m, 2h, 1h30m (default 2h)")
    nightly.add_argument("--matrix", type=Path, default=None,
                         help="YAML matrix (default: harness/matrix_default.yaml)")
    nightly.add_argument("--jobs", type=_int_in(1, None, "a number of runs at once (1 or more)"),
                         default=None, help="runs at once (default: the matrix's `jobs`, else 1)")
    nightly.add_argument("--no-shared-spark", action="store_true",
                         help="each run starts its own Spark (default: one shared server)")
    nightly.add_argument("--shard", type=_shard, default=None, metavar="I/N",
                         help="run shard I of N of the matrix (1 <= I <= N), for N machines; "
                              "join them with `kchaos nightly merge` (docs/nightly-sharded.md)")
    nightly.add_argument("--seeds", type=_seeds, default=None, metavar="LIST",
                         help="only the matrix's runs of these seeds, e.g. 2,3 or 2-3 "
                              "(default: all its seeds)")
    nightly.add_argument("--choose-seeds", choices=("matrix", "coverage"), default="matrix",
                         help="matrix: the matrix's seeds (default); coverage: each run's seed "
                              "picked at its launch from seeds 1-500 so that the plans reach "
                              "the coverage classes tonight's runs have not (docs/faults.md)")
    nightly.set_defaults(handler=_nightly)
    nightly_commands = nightly.add_subparsers(dest="nightly_command", parser_class=Parser)
    merge = nightly_commands.add_parser(
        "merge", help="join the folders of `kchaos nightly --shard I/N` into one nightly")
    merge.add_argument("shard_dirs", type=Path, nargs="+", metavar="SHARD_DIR",
                       help="the nightly-*-shard-I-of-N folders, their run folders beside them")
    merge.add_argument("--out", type=Path, default=None,
                       help="results folder for the merged nightly (default: --results-dir)")
    merge.add_argument("--partial", action="store_true",
                       help="merge even with shards missing (their cells: not started; no "
                            "verdict, exit 2 unless a run failed)")
    merge.set_defaults(handler=_nightly_merge)


def _nightly(args: argparse.Namespace) -> int:
    from harness.nightly import nightly, parse_duration

    return nightly(args.results_dir, parse_duration(args.budget), args.matrix,
                   [sys.executable, "-m", "harness"], shared_spark=not args.no_shared_spark,
                   jobs=args.jobs, shard=args.shard, seeds=args.seeds,
                   choose_seeds=args.choose_seeds)


def _nightly_merge(args: argparse.Namespace) -> int:
    from harness.nightly.merge import merge

    return merge(args.shard_dirs, args.out or args.results_dir, partial=args.partial)


def add_serve(commands: Commands) -> None:
    serve = commands.add_parser("serve", help="serve the results folder on 127.0.0.1")
    serve.add_argument("--port", type=_int_in(0, 65535, "a port (0-65535; 0 picks a free one)"),
                       default=8000, help="default 8000; 0: any free")
    serve.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    from harness.serve import serve

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how one stops a server
        serve(args.results_dir, args.port)
    return 0


def add_clean(commands: Commands) -> None:
    clean = commands.add_parser(
        "clean", help="stop processes, networks and containers a crashed harness left")
    clean.add_argument("run_dir", type=Path, nargs="*",
                       help="only these run folders (default: every one in the results folder)")
    clean.set_defaults(handler=_clean)


def _clean(args: argparse.Namespace) -> int:
    from harness.console import out
    from harness.platforms import PARTS
    from harness.procs import clean, run_folders

    missing = [str(f) for f in args.run_dir if not f.is_dir()]
    if missing:  # a typo must not read as "nothing to stop"
        raise UsageError(f"no such run folder: {', '.join(missing)} (pass folders under "
                         f"{args.results_dir}/, or none to clean every run there)")
    folders = args.run_dir or run_folders(args.results_dir)
    stopped = clean(folders)
    for record in stopped:
        out.print(f"stopped {record.name} (pid {record.pid})")
    out.print(f"{len(stopped)} process(es) stopped")
    for parts in PARTS.values():  # what each platform left, after the processes
        for line in parts.clean(folders):
            out.print(line)
    return 0


# In the order `kchaos --help` lists them.
COMMANDS: tuple[Callable[[Commands], None], ...] = (
    add_kafka, add_run, add_repro, add_shrink, add_bisect, add_probe, add_check, add_report,
    add_nightly, add_serve, add_clean,
)
