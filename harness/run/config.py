"""A run's configuration: CLI options over the knobs a broad profile draws from the seed
(faults/knobs.py) over the profile's needs over defaults.

Everything needed to redo the run is in `run.json` (`RunConfig.to_json`), the drawn
values too: `kchaos repro` and `kchaos shrink` read them back, never draw again.
"""

from __future__ import annotations

import difflib
import socket
import types
import typing
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from faults import knobs
from faults.params import ParamError, ProfileSettings
from faults.plan import PROFILES, REGISTRY, profile_config
from faults.windows import PlanSettings
from harness.errors import UsageError
from harness.run.platforms import DEFAULT_PLATFORM, PLATFORMS
from harness.run.protocol import CLASSIC, GROUP_PROTOCOLS, STREAMS, broker_refusal
from harness.run.suts import DEFAULT_SUT, SUT_KINDS, names_with, sut_kind

GUARANTEES = ("exactly_once_v2", "at_least_once")
RESTART_POLICIES = ("always", "never")
APP_APPLICATION_ID = "kchaos-app"


def known_bugs() -> tuple[str, ...]:
    """The worker's switches, read from its registry (a constant list; no runtime import
    of the worker's machinery)."""
    from workloads.worker.bugs import BUG_NAMES

    return tuple(BUG_NAMES)


@dataclass(frozen=True)
class RunConfig:
    profile: str = "all"
    seed: int = 0
    time_limit_s: float = 60.0
    pods: int = 2
    threads: int = 2
    standbys: int = 0
    brokers: int = 1
    rate: float = 100.0
    bugs: tuple[str, ...] = ()
    # A mutant of the Python worker from harness/mutants/catalog.json, by its key: made by
    # a tool, not a switch (`--set mutant=KEY`; bench/bench_power.py runs the catalog).
    mutant: str | None = None
    guarantee: str = "exactly_once_v2"
    bootstrap: str | None = None
    platform: str = DEFAULT_PLATFORM
    restart: str = "always"  # pod restart policy, as Kubernetes' restartPolicy
    partitions: int = 4
    accounts: int = 40
    duplicate_fraction: float = 0.05
    application_id: str = "ledger-app"
    drain_timeout_s: float = 60.0
    commit_interval_ms: int = 500
    write_buffer_bytes: int = 64 * 1024
    cleaner_delay_ms: int = 600_000
    # Kafka Streams' defaults: state.cleanup.delay.ms 10 min, the cleaner runs at that period.
    cleaner_interval_ms: int = 600_000
    # The worker's, as before the knobs (faults/knobs.py draws them in broad profiles).
    session_timeout_ms: int = 10_000
    # Kafka Streams' transaction.timeout.ms under exactly-once.
    transaction_timeout_ms: int = 10_000
    # The worker's poll sizes; a pod is passed these flags only when they differ (Kafka
    # Streams then keeps its own max.poll.records, 1000, for every consumer).
    max_poll_records: int = 500
    restore_max_poll_records: int = 2000
    # Which of the settings above were drawn from the seed (faults/knobs.py): recorded so
    # the report marks them and the shrink tries each one's default.
    drawn_knobs: tuple[str, ...] = ()
    spark_master: str | None = None
    sut: str = DEFAULT_SUT
    kstreams_version: str | None = None  # None: the one workloads/kstreams/pom.xml pins
    # The brokers' Kafka release; None: the one harness/kafka/pom.xml pins
    kafka_version: str | None = None
    streams_config: tuple[str, ...] = ()  # KEY=VALUE Kafka Streams settings (sut kstreams)
    # Kafka Streams' rebalance protocol (harness/run/protocol.py): classic, or streams
    # (KIP-1071, the assignment on the broker; the run's standbys and session set there)
    group_protocol: str = CLASSIC
    # sut app (docs/your-app.md): the user's app, where it is entered (a topology method, or
    # its own main and that main's arguments, shell-quoted), its input spec
    app: str | None = None
    app_class: str | None = None
    app_main: str | None = None
    app_args: str | None = None
    input_spec: str | None = None
    # The differential oracle beside the ledger checks (sut kstreams; always on for app)
    oracle: bool = False

    @property
    def nodes(self) -> int:
        """One node more than pods, so a moved pod always has somewhere to go."""
        return self.pods + 1

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["bugs"] = list(self.bugs)
        data["streams_config"] = list(self.streams_config)
        data["drawn_knobs"] = list(self.drawn_knobs)
        return data

    @staticmethod
    def from_json(raw: dict[str, Any]) -> RunConfig:
        names = {f.name for f in fields(RunConfig)}
        unknown = set(raw) - names
        if unknown:
            raise UsageError(f"run.json has unknown settings {sorted(unknown)}: damaged file?")
        data = dict(raw)
        data["bugs"] = tuple(data.get("bugs", ()))
        data["streams_config"] = tuple(data.get("streams_config", ()))
        data["drawn_knobs"] = tuple(data.get("drawn_knobs", ()))
        return validate(RunConfig(**data))


def _scalar(hint: Any) -> Any:
    """`str | None` (a setting whose default is "not given") is a str setting."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    optional = typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1
    return args[0] if optional else hint


def parse_setting(text: str) -> tuple[str, Any]:
    """`KEY=VALUE` of `kchaos run --set`: any scalar RunConfig setting, typed by its field
    (names are checked by `resolve`)."""
    key, sep, raw = text.partition("=")
    key = key.strip().replace("-", "_")
    hints = {name: _scalar(hint) for name, hint in typing.get_type_hints(RunConfig).items()}
    if not sep or key not in hints:
        names = [f.name for f in fields(RunConfig) if hints[f.name] in (int, float, str)]
        close = difflib.get_close_matches(key, names, n=1)
        raise UsageError(f"--set {text}: give KEY=VALUE with a run setting as KEY"
                         + (f" (did you mean {close[0]!r}?)" if close else "")
                         + f"; settings: {', '.join(names)}")
    kind = hints[key]
    if kind not in (int, float, str):
        raise UsageError(f"--set {text}: {key} is not a single value; use its own option")
    try:
        return key, kind(raw)
    except ValueError:
        what = {int: "a whole number", float: "a number"}.get(kind, "text")
        raise UsageError(f"--set {text}: {key} takes {what}, not {raw!r}") from None


def resolve(explicit: dict[str, Any], draw_knobs: bool = True) -> RunConfig:
    """Options the user gave win; then the knobs a broad profile draws from the seed
    (unless `draw_knobs` is off: `kchaos run --knobs default`); then what the profile
    needs; then the defaults."""
    profile = explicit.get("profile") or RunConfig.profile
    if profile not in PROFILES:
        raise UsageError(f"--profile {profile}: choose one of {', '.join(PROFILES)}")
    names = [f.name for f in fields(RunConfig)]
    for key in explicit:  # no longer dropped: a misspelt setting ran on its default
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1)
            raise UsageError(f"unknown run setting {key!r}"
                             + (f" (did you mean {close[0]!r}?)" if close else "")
                             + f"; settings are {', '.join(names)}")
    seed = explicit.get("seed", RunConfig.seed)
    shape = {**profile_settings(profile), **explicit}  # the run the draw is bounded to
    drawn = {k: v for k, v in knobs.bounded(
                 knobs.draw(seed, profile), int(shape.get("pods", RunConfig.pods)),
                 float(shape.get("time_limit_s", RunConfig.time_limit_s))).items()
             if k not in explicit and draw_knobs}
    user_app = sut_kind(str(explicit.get("sut", RunConfig.sut))).user_app
    if user_app:  # the oracle judges exactly-once: keep the given one
        drawn.pop("guarantee", None)
    merged: dict[str, Any] = {**profile_settings(profile), **drawn, **explicit,
                              "profile": profile}
    if user_app:  # the app's internal topics are not the ledger's
        merged.setdefault("application_id", APP_APPLICATION_ID)
    config = _drawn_give_way(replace(RunConfig(), **merged), set(drawn))
    return validate(replace(config, drawn_knobs=tuple(k.name for k in knobs.KNOBS
                                                      if k.name in drawn)))


def _drawn_give_way(config: RunConfig, drawn: set[str]) -> RunConfig:
    """A drawn value that contradicts an option given explicitly follows it: the draw
    knows only (seed, profile), not the options."""
    changes: dict[str, Any] = {}
    if "standbys" in drawn and config.standbys > config.pods:  # as many as there are pods
        changes["standbys"] = config.pods
    # Exactly-once keeps the transaction timeout at twice the commit interval
    # (faults/knobs.py): the drawn one of the pair follows the given one.
    short_txn = (config.transaction_timeout_ms
                 < knobs.TXN_OVER_COMMIT * config.commit_interval_ms)
    if config.guarantee == knobs.EXACTLY_ONCE_V2 and short_txn:
        if "transaction_timeout_ms" in drawn and "commit_interval_ms" not in drawn:
            changes["transaction_timeout_ms"] = knobs.transaction_timeout_for(
                config.commit_interval_ms)
        elif "commit_interval_ms" in drawn and "transaction_timeout_ms" not in drawn:
            changes["commit_interval_ms"] = knobs.commit_interval_for(
                config.transaction_timeout_ms)
    # Pairs drawn as one (Kafka Streams has one setting for both): the given one leads.
    if "restore_max_poll_records" in drawn and "max_poll_records" not in drawn:
        changes["restore_max_poll_records"] = config.max_poll_records
    if "cleaner_interval_ms" in drawn and "cleaner_delay_ms" not in drawn:
        changes["cleaner_interval_ms"] = config.cleaner_delay_ms
    return replace(config, **changes)


def plan_settings(config: RunConfig) -> PlanSettings:
    """The settings the run's plan is drawn from (its windows sized to them,
    faults/windows.py): the resolved ones, drawn, pinned or the profile's."""
    return PlanSettings(**{f.name: getattr(config, f.name) for f in fields(PlanSettings)})


def undrawn(config: RunConfig) -> RunConfig:
    """`config` with every drawn knob at the value it has when nothing is drawn (the
    profile's setting, or RunConfig's default)."""
    return replace(config, drawn_knobs=(),
                   **{name: knob_default(config.profile, name) for name in config.drawn_knobs})


def knobs_section(config: RunConfig) -> dict[str, Any]:
    """plan.json's `knobs`: whether the profile draws, each drawn setting's value and the
    value it has when nothing is drawn (the report and the shrink read run.json's config,
    which holds the same values)."""
    return {
        "profile_draws": knobs.draws(config.profile),
        "drawn": {name: getattr(config, name) for name in config.drawn_knobs},
        "defaults": {name: knob_default(config.profile, name) for name in config.drawn_knobs},
    }


def knob_default(profile: str, name: str) -> Any:
    """What setting `name` is in a run of `profile` that draws nothing."""
    settings: dict[str, Any] = dict(profile_settings(profile))
    return settings.get(name, getattr(RunConfig, name))


def profile_settings(profile: str) -> ProfileSettings:
    """The run settings `profile` sets (faults.plan), checked: UsageError (one line, the
    key, the profile, the keys a profile may set) for an unknown one or a mistyped one."""
    try:
        return profile_config(profile)
    except ParamError as exc:
        raise UsageError(str(exc)) from None


def _check_profile_settings() -> None:
    """On import, so that a profile's misspelt setting fails every test, not one run: each
    setting a profile may set is a RunConfig field of the same type, and every profile's
    settings are among them."""
    run_types = typing.get_type_hints(RunConfig)
    for key, hint in typing.get_type_hints(ProfileSettings).items():
        if run_types.get(key) != hint:
            raise TypeError(f"faults.params.ProfileSettings.{key} is {hint}, RunConfig's "
                            f"{run_types.get(key, 'missing')}")
    for profile in PROFILES:
        profile_settings(profile)
    # The plan's windows are sized from these (faults/windows.py): its defaults must be a
    # run's that pins and draws nothing.
    for f in fields(PlanSettings):
        if run_types.get(f.name) != typing.get_type_hints(PlanSettings)[f.name] \
                or getattr(RunConfig, f.name) != f.default:
            raise TypeError(f"faults.windows.PlanSettings.{f.name} is not RunConfig's "
                            "(type and default)")


_check_profile_settings()


def validate(config: RunConfig) -> RunConfig:
    min_brokers = REGISTRY[config.profile].min_brokers if config.profile in REGISTRY else 1
    checks = [
        (config.time_limit_s >= 10, "--time-limit must be at least 10 seconds"),
        (config.pods >= 1, "--pods must be at least 1"),
        (config.threads >= 1, "--threads must be at least 1"),
        (0 <= config.standbys < max(config.pods, 1) + 1, "--standbys must be 0..pods"),
        (config.brokers in (1, 3), "--brokers must be 1 or 3"),
        (config.brokers >= min_brokers,
         f"--profile {config.profile} needs --brokers {min_brokers}"),
        (config.rate > 0, "--rate must be positive"),
        (config.guarantee in GUARANTEES, f"--guarantee must be one of {', '.join(GUARANTEES)}"),
        (config.platform in PLATFORMS, f"--platform must be one of {', '.join(PLATFORMS)}"),
        (config.restart in RESTART_POLICIES,
         f"--restart must be one of {', '.join(RESTART_POLICIES)}"),
        (config.sut in SUT_KINDS, f"--sut must be one of {', '.join(SUT_KINDS)}"),
        (config.partitions >= 1, "partitions must be at least 1"),
        (min(config.session_timeout_ms, config.transaction_timeout_ms) > 0,
         "session and transaction timeouts must be positive"),
        (min(config.max_poll_records, config.restore_max_poll_records) >= 1,
         "max poll records must be at least 1"),
        # Kafka Streams refuses it (StreamsConfig.verifyEOSTransactionTimeoutCompatibility):
        # every transaction would time out before its commit.
        (config.guarantee != "exactly_once_v2"
         or config.transaction_timeout_ms >= config.commit_interval_ms,
         "the transaction timeout must be at least the commit interval under exactly-once"),
        (all(k in knobs.BY_NAME for k in config.drawn_knobs),
         f"drawn knobs are among {', '.join(knobs.BY_NAME)}"),
        (0 <= config.duplicate_fraction < 1, "duplicate fraction must be in [0, 1)"),
    ]
    for ok, message in checks:
        if not ok:
            raise UsageError(message)
    sut = SUT_KINDS[config.sut]
    if (config.kstreams_version is not None or config.streams_config) and not sut.releases:
        raise UsageError(f"--kstreams-version and --streams-config need "
                         f"{names_with('releases')}")
    _check_group_protocol(config)
    if config.bugs and not sut.bug_switches:
        raise UsageError(f"--bugs are switches of the Python worker: drop them with "
                         f"--sut {config.sut}")
    if config.mutant is not None:
        _check_mutant(config.mutant, config, sut.bug_switches)
    if config.kafka_version is not None:
        from harness.kafka.jars import check_kafka_version

        check_kafka_version(config.kafka_version)
        if config.bootstrap is not None:
            raise UsageError("--kafka-version picks the brokers kchaos starts: drop it with "
                             "--bootstrap (that Kafka is used as it is)")
    app_only = [flag for flag, value in (("--app", config.app), ("--app-class", config.app_class),
                                         ("--app-main", config.app_main),
                                         ("--app-args", config.app_args),
                                         ("--input", config.input_spec)) if value]
    if app_only and not sut.user_app:
        raise UsageError(f"{app_only[0]} needs {names_with('user_app')}")
    if sut.user_app and not (config.app and config.input_spec):
        raise UsageError(f"--sut {config.sut} needs --app JAR|FOLDER|GROUP:ARTIFACT:VERSION and "
                         "--input SPEC (docs/your-app.md)")
    if sut.user_app:
        from harness.app.entry import check_entry

        check_entry(config.app_class, config.app_main, config.app_args)
    if config.oracle and not sut.ledger_oracle:
        raise UsageError(f"--oracle judges the ledger app on Kafka Streams: give "
                         f"{names_with('ledger_oracle')} (an app run has the oracle always)")
    bad_settings = [s for s in config.streams_config if "=" not in s.strip("=")]
    if bad_settings:
        raise UsageError(f"--streams-config {','.join(bad_settings)}: give KEY=VALUE[,KEY=VALUE]")
    bad = [b for b in config.bugs if b not in known_bugs()]
    if bad:
        raise UsageError(f"--bugs {','.join(bad)}: known switches are {', '.join(known_bugs())}")
    return config


def _check_mutant(key: str, config: RunConfig, python_worker: bool) -> None:
    if not python_worker:
        raise UsageError(f"mutant {key}: mutants are of the Python worker (--sut python), "
                         f"not of --sut {config.sut}")
    if PLATFORMS[config.platform].needs_engine:
        raise UsageError(f"mutant {key}: its worker tree is built on this machine; run it "
                         "with --platform local")
    from harness.mutants.catalog import find_mutant

    find_mutant(key)


def _check_group_protocol(config: RunConfig) -> None:
    """The protocol's name, a SUT that speaks it, brokers of a release that hold streams
    groups (the Kafka Streams release is the SUT's to judge: harness/sut, open_sut)."""
    if config.group_protocol not in GROUP_PROTOCOLS:
        raise UsageError(f"--group-protocol {config.group_protocol}: choose one of "
                         f"{', '.join(GROUP_PROTOCOLS)}")
    if config.group_protocol != STREAMS:
        return
    if not SUT_KINDS[config.sut].streams_protocol:
        raise UsageError(f"--group-protocol streams needs {names_with('streams_protocol')}: "
                         f"--sut {config.sut} keeps the classic protocol")
    if config.bootstrap is None:  # a --bootstrap cluster is taken as it is
        from harness.kafka.jars import kafka_version

        reason = broker_refusal(config.kafka_version or kafka_version())
        if reason is not None:
            raise UsageError(reason)


def require_bootstrap(bootstrap: str | None, timeout_s: float = 5.0) -> None:
    """A --bootstrap given by the user must be HOST:PORT[,HOST:PORT...] and answer on TCP:
    said now, in one line, rather than as a client timeout deep in the setup phase."""
    if bootstrap is None:
        return
    reasons = []
    for address in bootstrap.split(","):
        host, _, port = address.strip().rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise UsageError(f"--bootstrap {bootstrap}: give HOST:PORT, e.g. 127.0.0.1:9092")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
            return
        except OSError as exc:
            reasons.append(f"{address.strip()}: {exc.strerror or exc}")
    raise UsageError(
        f"--bootstrap {bootstrap}: no broker answers ({'; '.join(reasons)}); start one with "
        "`kchaos kafka up` or leave --bootstrap out to have the run start its own"
    )


def repro_command(run_dir: Path) -> str:
    return f"kchaos repro {run_dir}"
