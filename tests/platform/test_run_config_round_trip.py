"""run.json keeps everything needed to redo a run: any valid RunConfig written the way the
harness writes run.json reads back equal (`kchaos repro` depends on it)."""

from __future__ import annotations

import json
from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from hypothesis import strategies as st

from faults.plan import PROFILES
from harness.config.platforms import PLATFORMS
from harness.config.run import (
    GUARANTEES,
    RESTART_POLICIES,
    RunConfig,
    known_bugs,
)
from harness.results import read_json, write_json

names = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FFF), min_size=1, max_size=12)
seconds = st.floats(min_value=10, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def run_configs(draw: st.DrawFn) -> RunConfig:
    pods = draw(st.integers(1, 8))
    kstreams = draw(st.booleans())
    profile = draw(st.sampled_from(PROFILES))
    commit_interval_ms = draw(st.integers(1, 10**6))
    bootstrap = draw(st.none() | st.just("127.0.0.1:9092"))
    # the brokers' release: only of brokers the run starts
    kafka_version = (draw(st.none() | st.sampled_from(["3.7.2", "3.9.1", "4.1.2", "4.4.0"]))
                     if bootstrap is None else None)
    # the streams protocol: Kafka Streams on brokers that hold streams groups (4.4 on)
    streams_protocol = kstreams and (bootstrap is not None or kafka_version == "4.4.0")
    return RunConfig(
        profile=profile,
        seed=draw(st.integers(0, 2**63)),
        time_limit_s=draw(seconds),
        pods=pods,
        threads=draw(st.integers(1, 4)),
        standbys=draw(st.integers(0, pods)),
        brokers=3 if profile == "broker" else draw(st.sampled_from([1, 3])),
        restart=draw(st.sampled_from(RESTART_POLICIES)),
        rate=draw(st.floats(min_value=0.001, max_value=1e5)),
        bugs=() if kstreams else tuple(draw(st.lists(st.sampled_from(known_bugs()),
                                                      unique=True, max_size=3))),
        guarantee=draw(st.none() | st.sampled_from(GUARANTEES)),  # None: not given
        bootstrap=bootstrap,
        kafka_version=kafka_version,
        platform=draw(st.sampled_from(sorted(PLATFORMS))),
        partitions=draw(st.integers(1, 64)),
        accounts=draw(st.integers(1, 1000)),
        duplicate_fraction=draw(st.floats(min_value=0, max_value=0.99)),
        application_id=draw(names),
        drain_timeout_s=draw(seconds),
        commit_interval_ms=commit_interval_ms,
        # Under exactly-once at least the commit interval (validate: Kafka Streams' rule).
        transaction_timeout_ms=commit_interval_ms + draw(st.integers(0, 10**6)),
        session_timeout_ms=draw(st.integers(1, 10**6)),
        max_poll_records=draw(st.integers(1, 10**4)),
        restore_max_poll_records=draw(st.integers(1, 10**4)),
        spark_master=draw(st.none() | st.just("spark://127.0.0.1:7077")),
        sut="kstreams" if kstreams else "python",
        kstreams_version=draw(st.none() | st.just("4.1.2")) if kstreams else None,
        streams_config=tuple(draw(st.lists(st.just("a.b=1") | st.just("x=y=z"), max_size=2)))
        if kstreams else (),
        group_protocol=draw(st.sampled_from(["classic", "streams"]))
        if streams_protocol else "classic",
    )


@given(run_configs())
@settings(max_examples=150, deadline=None)
def test_run_config_survives_run_json(config: RunConfig) -> None:
    with TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.json"
        write_json(path, {"config": config.to_json()})
        assert RunConfig.from_json(read_json(path)["config"]) == config


@given(run_configs())
@settings(max_examples=50, deadline=None)
def test_run_config_json_is_plain(config: RunConfig) -> None:
    """Only JSON types: a reader in another language (the report, CI) sees the same."""
    data = config.to_json()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
