"""A run's configuration: its settings, each declared once as a `RunConfig` field (type,
default, help, option, rule, SUT: harness/config/settings.py; `SETTINGS` is the table the CLI,
`--set`, the nightly and `validate` read), resolved as CLI options over the knobs a broad
profile draws from the seed (faults/knobs.py) over the profile's needs over defaults.

Everything needed to redo the run is in `run.json` (`RunConfig.to_json`), the drawn
values too: `kchaos repro` and `kchaos shrink` read them back, never draw again.
"""

from __future__ import annotations

import difflib
import typing
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from common.guarantees import AT_LEAST_ONCE, EXACTLY_ONCE_V2, GUARANTEES, KAFKA_STREAMS_DEFAULT
from faults import knobs
from faults.params import ParamError, ProfileSettings
from faults.plan import PROFILES, REGISTRY, profile_config
from faults.windows import PlanSettings
from harness.config.platforms import DEFAULT_PLATFORM, PLATFORMS
from harness.config.protocol import CLASSIC, GROUP_PROTOCOLS
from harness.config.rules import (
    BROKERS,
    FRACTION,
    KEY_VALUE,
    STANDBYS,
    check_group_protocol,
    check_mutant,
    kafka_release,
    known_bugs,
)
from harness.config.settings import at_least, one_of, positive, setting, settings_of
from harness.config.suts import DEFAULT_SUT, SUT_KINDS, sut_kind
from harness.errors import UsageError
from workloads.ledger.windowed import WINDOW_GRACE_MS, WINDOW_SIZE_MS, WindowSpec

RESTART_POLICIES = ("always", "never")
APP_APPLICATION_ID = "kchaos-app"


# The drain's least wait past a session timeout: the rebalance and a restore after it.
DRAIN_PAST_SESSION_S = 30.0


@dataclass(frozen=True)
class RunConfig:
    """Every setting of a run, each declared once (harness/config/settings.py): its type and
    default here, with its help, its `kchaos run` option (none: `--set NAME=VALUE`), the
    rule its value keeps and the SUT it is for. What the settings are as a whole (pods
    and standbys, the SUT's options) is `validate`'s."""

    profile: str = setting("all", "fault mix, or a seed's scenario", flag="--profile",
                           rule=one_of(PROFILES))
    seed: int = setting(0, "determines the event stream and the fault plan", flag="--seed")
    time_limit_s: float = setting(60.0, "seconds of load + faults", flag="--time-limit",
                                  rule=at_least(10))
    pods: int = setting(2, "worker pods", flag="--pods", rule=at_least(1))
    threads: int = setting(2, "stream threads per pod", flag="--threads", rule=at_least(1))
    standbys: int = setting(0, "standby replicas per task", flag="--standbys",
                            rule=STANDBYS)
    brokers: int = setting(1, "Kafka nodes", flag="--brokers", rule=BROKERS)
    rate: float = setting(100.0, "input events per second", flag="--rate", rule=positive())
    bugs: tuple[str, ...] = setting(
        (), "worker bug switches, comma-separated", flag="--bugs",
        rule=one_of(known_bugs, "the known switches"), shown_default="none: the fixed worker",
        sut_needs="bug_switches", sut_why="are switches of the Python worker")
    # Made by a tool, not a switch: bench/bench_power.py runs the catalog.
    mutant: str | None = setting(
        None, "a mutant of the Python worker, by its key in harness/mutants/catalog.json")
    # None: not given. The worker and the ledger app then run exactly-once (`resolve`
    # records it); an app runs with its own, else Kafka Streams' default (at-least-once),
    # chosen once it is described (harness/app/guarantee.py), and a repro chooses again.
    guarantee: str | None = setting(
        None, "processing guarantee", flag="--guarantee", rule=one_of(GUARANTEES),
        shown_default=f"{EXACTLY_ONCE_V2}; --sut app: the app's own, else Kafka Streams' "
                      f"{KAFKA_STREAMS_DEFAULT}")
    bootstrap: str | None = setting(
        None, "use this Kafka instead of starting one (HOST:PORT)", flag="--bootstrap")
    platform: str = setting(
        DEFAULT_PLATFORM, "where pods and brokers run", flag="--platform",
        rule=one_of(PLATFORMS, describe={k.name: k.summary for k in PLATFORMS.values()}))
    restart: str = setting(  # as Kubernetes' restartPolicy
        "always", "pod restart policy", flag="--restart",
        rule=one_of(RESTART_POLICIES,
                    describe={"always": "an exited pod restarts after a back-off"}))
    partitions: int = setting(4, "partitions of the input topic", rule=at_least(1))
    accounts: int = setting(40, "ledger accounts the input draws from")
    duplicate_fraction: float = setting(
        0.05, "the share of input events that re-send an earlier one", rule=FRACTION)
    application_id: str = setting("ledger-app", "Kafka Streams' application.id",
                                  shown_default=f"ledger-app; an app's {APP_APPLICATION_ID}")
    drain_timeout_s: float = setting(
        60.0, "seconds to wait for the group to catch up (at least the session timeout "
        "+ 30 s)", flag="--drain-timeout")
    commit_interval_ms: int = setting(500, "commit interval, ms")
    write_buffer_bytes: int = setting(64 * 1024, "RocksDB write buffer size, bytes")
    # When each store and window segment flushes (docs/windows.md): Kafka Streams pods only.
    write_buffer_count: int = setting(
        3, "RocksDB write buffers a Kafka Streams store keeps (max_write_buffer_number; "
        "Kafka Streams sets 3)", rule=at_least(1))
    window_retention_ms: int = setting(
        30_000, "retention of the ledger app's window and session stores, ms (at least a "
        "window and its grace)", rule=at_least(WINDOW_SIZE_MS + WINDOW_GRACE_MS))
    window_segment_ms: int = setting(
        5000, "segment interval of the ledger app's window store, ms (Kafka Streams' own is "
        "max(retention / 2, 60 s))", rule=at_least(1000))
    transactional_stores: bool = setting(
        False, "Kafka Streams' enable.transactional.statestores (KIP-892, 4.4 and newer)",
        sut_needs="releases")
    # Kafka Streams' defaults: state.cleanup.delay.ms 10 min, the cleaner runs at that period.
    cleaner_delay_ms: int = setting(600_000, "state-directory cleaner delay, ms")
    cleaner_interval_ms: int = setting(600_000, "state-directory cleaner period, ms")
    # The worker's, as before the knobs (faults/knobs.py draws them in broad profiles).
    session_timeout_ms: int = setting(10_000, "consumer session timeout, ms", rule=positive())
    transaction_timeout_ms: int = setting(  # Kafka Streams' under exactly-once
        10_000, "producer transaction timeout, ms", rule=positive())
    # The worker's poll sizes; a pod is passed these flags only when they differ (Kafka
    # Streams then keeps its own max.poll.records, 1000, for every consumer).
    max_poll_records: int = setting(500, "records a poll returns at most", rule=at_least(1))
    restore_max_poll_records: int = setting(
        2000, "records a restoring poll returns at most", rule=at_least(1))
    # Recorded so the report marks them and the shrink tries each one's default.
    drawn_knobs: tuple[str, ...] = setting(
        (), "the settings faults/knobs.py drew from the seed",
        rule=one_of(lambda: knobs.BY_NAME, "the knobs"))
    spark_master: str | None = setting(None, "Spark master URL for the check",
                                       flag="--spark-master", shown_default="local[*]")
    sut: str = setting(
        DEFAULT_SUT, "what runs in the pods", flag="--sut",
        rule=one_of(SUT_KINDS, describe={k.name: k.summary for k in SUT_KINDS.values()}))
    kstreams_version: str | None = setting(
        None, "Kafka Streams release", flag="--kstreams-version", sut_needs="releases",
        shown_default="workloads/kstreams/pom.xml's for kstreams, harness/sut/app.py's "
                      "DEFAULT_VERSION for app")
    kafka_version: str | None = setting(
        None, "Kafka release of the brokers the run starts", flag="--kafka-version",
        rule=kafka_release(), shown_default="harness/kafka/pom.xml's <kafka.version>")
    streams_config: tuple[str, ...] = setting(
        (), "Kafka Streams settings, KEY=VALUE[,KEY=VALUE]", flag="--streams-config",
        rule=KEY_VALUE, sut_needs="releases")
    # Kafka Streams' rebalance protocol (harness/config/protocol.py): classic, or streams
    # (KIP-1071, the assignment on the broker; the run's standbys and session set there)
    group_protocol: str = setting(
        CLASSIC, "Kafka Streams' rebalance protocol, streams being KIP-1071's: --sut kstreams "
        "or app, Kafka Streams and brokers 4.4 or newer, docs/kstreams.md",
        flag="--group-protocol", rule=one_of(GROUP_PROTOCOLS))
    # A user's app (docs/your-app.md): where it is entered (a topology method, or its own
    # main and that main's arguments, shell-quoted), its input spec.
    app: str | None = setting(
        None, "the app: a jar, a Maven project folder, a Gradle installDist folder, a folder of "
        "jars or GROUP:ARTIFACT:VERSION "
        "(docs/your-app.md)", flag="--app", path=True, sut_needs="user_app")
    app_class: str | None = setting(
        None, "CLASS[#METHOD], a public method returning the app's Topology, taking "
        "Properties or nothing", flag="--app-class", sut_needs="user_app",
        shown_default="the spec's app_class; METHOD default topology")
    app_main: str | None = setting(
        None, "run the app's own main of this class, taken over at its KafkaStreams",
        flag="--app-main", sut_needs="user_app",
        shown_default="the jar's Main-Class, when no --app-class")
    app_args: str | None = setting(
        None, "the arguments of --app-main, one shell-quoted string (--app-args='--x 1')",
        flag="--app-args", sut_needs="user_app")
    input_spec: str | None = setting(
        None, "the input spec file (docs/your-app.md)", flag="--input", path=True,
        sut_needs="user_app")
    # Beside the ledger checks (an app run has the oracle always).
    oracle: bool = setting(
        False, "judge the ledger app by the differential oracle too (docs/your-app.md)",
        flag="--oracle", sut_needs="ledger_oracle",
        sut_why="judges the ledger app on Kafka Streams (an app run has the oracle always)")

    @property
    def nodes(self) -> int:
        """One node more than pods, so a moved pod always has somewhere to go."""
        return self.pods + 1

    @property
    def windows(self) -> WindowSpec | None:
        """The ledger's windows as the pods keep them; None where the SUT keeps none."""
        if not sut_kind(self.sut).ledger_windows:
            return None
        return WindowSpec(retention_ms=self.window_retention_ms,
                          segment_ms=self.window_segment_ms)

    @property
    def pod_guarantee(self) -> str:
        """The guarantee the pods' `--guarantee` flag says: the one given, else the SUT's
        default (exactly-once for the worker and the ledger app). An app's pods are given
        the one its SUT chooses instead (harness/app/guarantee.py)."""
        return self.guarantee or sut_kind(self.sut).default_guarantee or KAFKA_STREAMS_DEFAULT

    @property
    def may_be_exactly_once(self) -> bool:
        """Whether the pods may run exactly-once: any guarantee but at-least-once given, or
        none given (an app's own is known only once it is described)."""
        return self.guarantee != AT_LEAST_ONCE

    @property
    def drain_budget_s(self) -> float:
        """The drain timeout, but never shorter than the longest wait the system under test
        may rightly make at the end, plus DRAIN_PAST_SESSION_S for the rebalance after it:
        a session (a pod killed as the load ended holds its tasks until it ends where
        nothing can release them: a streams group, KIP-1071); two commit intervals (the
        drain reads committed offsets, which move only at a commit); under exactly-once, a
        transaction timeout (a restore waits out a transaction a killed pod left open; an
        app whose guarantee was not given is waited for as if exactly-once)."""
        txn_ms = self.transaction_timeout_ms if self.may_be_exactly_once else 0
        longest_wait_ms = max(self.session_timeout_ms, 2 * self.commit_interval_ms, txn_ms)
        return max(self.drain_timeout_s, longest_wait_ms / 1000 + DRAIN_PAST_SESSION_S)

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


SETTINGS = settings_of(RunConfig)


def parse_setting(text: str) -> tuple[str, Any]:
    """`KEY=VALUE` of `kchaos run --set`: any single-valued setting, typed by its field
    (names are checked by `resolve`, values by `validate`)."""
    key, sep, raw = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or key not in SETTINGS:
        names = [s.name for s in SETTINGS.values()
                 if s.kind in (int, float, str, bool) and not s.many]
        close = difflib.get_close_matches(key, names, n=1)
        raise UsageError(f"--set {text}: give KEY=VALUE with a run setting as KEY"
                         + (f" (did you mean {close[0]!r}?)" if close else "")
                         + f"; settings: {', '.join(names)}")
    declared = SETTINGS[key]
    if declared.kind not in (int, float, str, bool) or declared.many:
        raise UsageError(f"--set {text}: {key} is not a single value; use its own option")
    try:
        return key, declared.parse(raw)
    except ValueError:
        what = {int: "a whole number", float: "a number", bool: "true or false"}.get(
            declared.kind, "text")
        raise UsageError(f"--set {text}: {key} takes {what}, not {raw!r}") from None


def resolve(explicit: dict[str, Any], draw_knobs: bool = True) -> RunConfig:
    """Options the user gave win; then the knobs a broad profile draws from the seed
    (unless `draw_knobs` is off: `kchaos run --knobs default`); then what the profile
    needs; then the defaults."""
    profile = SETTINGS["profile"].checked(explicit.get("profile") or RunConfig.profile)
    names = list(SETTINGS)
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
    sut = sut_kind(str(explicit.get("sut", RunConfig.sut)))
    user_app = sut.user_app
    if user_app:  # an app runs with its own guarantee unless one is given
        drawn.pop("guarantee", None)
    merged: dict[str, Any] = {**profile_settings(profile), **drawn, **explicit,
                              "profile": profile}
    if merged.get("guarantee") is None:  # the SUT's own default (an app's: not yet known)
        merged["guarantee"] = sut.default_guarantee
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
    if config.may_be_exactly_once and short_txn:
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
    """`config`, or UsageError (one line) for the first setting whose rule refuses its value
    or that its SUT does not take, then for what settings must be together."""
    for declared in SETTINGS.values():
        declared.checked(getattr(config, declared.name))
    sut = SUT_KINDS[config.sut]
    for declared in SETTINGS.values():
        refusal = declared.sut_refusal(getattr(config, declared.name), sut)
        if refusal is not None:
            raise UsageError(refusal)
    min_brokers = REGISTRY[config.profile].min_brokers
    checks = [
        (config.standbys <= config.pods,
         f"--standbys {config.standbys}: must be 0 to --pods ({config.pods})"),
        (config.brokers >= min_brokers,
         f"--profile {config.profile} needs --brokers {min_brokers}"),
        # Kafka Streams refuses it (StreamsConfig.verifyEOSTransactionTimeoutCompatibility):
        # every transaction would time out before its commit.
        (not config.may_be_exactly_once
         or config.transaction_timeout_ms >= config.commit_interval_ms,
         "the transaction timeout must be at least the commit interval under exactly-once"),
        (config.kafka_version is None or config.bootstrap is None,
         "--kafka-version picks the brokers kchaos starts: drop it with --bootstrap (that "
         "Kafka is used as it is)"),
        (not sut.user_app or bool(config.app and config.input_spec),
         f"--sut {config.sut} needs --app JAR|FOLDER|GROUP:ARTIFACT:VERSION and --input SPEC "
         "(docs/your-app.md)"),
    ]
    for ok, message in checks:
        if not ok:
            raise UsageError(message)
    check_group_protocol(config)
    if config.mutant is not None:
        check_mutant(config.mutant, config, sut.bug_switches)
    if sut.user_app:
        from harness.app.entry import check_entry

        check_entry(config.app_class, config.app_main, config.app_args)
    return config


def repro_command(run_dir: Path) -> str:
    return f"kchaos repro {run_dir}"
