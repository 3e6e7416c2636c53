"""`--group-protocol classic|streams` (harness/config/protocol.py): a typed run setting in
run.json, passed to Kafka Streams pods only under the streams protocol, refused in one
line (254, before a run folder exists, before anything is fetched) for the Python worker
and for Kafka Streams or broker releases that lack what the app needs under it; the
streams group gets the run's standbys, session and heartbeat."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from refused_run import refused_run

from harness.config.protocol import (
    broker_refusal,
    configure_streams_group,
    kstreams_refusal,
    refuse_kstreams,
    streams_group_config,
)
from harness.config.run import RunConfig, resolve
from harness.errors import UsageError
from harness.nightly.matrix import parse_matrix
from harness.sut import PodPaths, PodSettings, open_sut
from tests.kstreams.test_kstreams_sut import kstreams_run, whole_run

EXAMPLES = Path(__file__).resolve().parents[2] / "workloads" / "app-examples"
NEW = ["--kafka-version", "4.4.0", "--kstreams-version", "4.4.0"]


@pytest.mark.parametrize(("version", "lacks"), [
    ("3.9.1", "KIP-1071"), ("4.0.1", "KIP-1071"),
    ("4.1.2", "early access"),
    ("4.2.2", "static membership"), ("4.3.1", "static membership"),
])
def test_kafka_streams_releases_without_what_the_app_needs_are_refused(
    version: str, lacks: str
) -> None:
    reason = kstreams_refusal(version)
    assert reason is not None and lacks in reason and version in reason
    assert "--kstreams-version 4.4.0" in reason and "\n" not in reason
    with pytest.raises(UsageError, match=lacks):
        refuse_kstreams("streams", version)
    refuse_kstreams("classic", version)  # the classic protocol: every release


@pytest.mark.parametrize(("version", "lacks"), [
    ("3.9.1", "streams groups (KIP-1071"), ("4.1.2", "early access"),
    ("4.2.2", "static members"), ("4.3.1", "static members"),
])
def test_broker_releases_without_what_the_app_needs_are_refused(version: str,
                                                               lacks: str) -> None:
    reason = broker_refusal(version)
    assert reason is not None and lacks in reason and f"Kafka {version} brokers" in reason
    assert "--kafka-version 4.4.0" in reason


@pytest.mark.parametrize("version", ["4.4.0", "4.4.1", "5.0.0"])
def test_releases_from_4_4_take_the_streams_protocol(version: str) -> None:
    assert kstreams_refusal(version) is None and broker_refusal(version) is None


@pytest.mark.parametrize(("args", "says"), [
    (["--group-protocol", "stream"], "choose one of classic, streams"),
    (["--group-protocol", "streams"], "--sut python keeps the classic protocol"),
    (["--sut", "kstreams", "--group-protocol", "streams", "--kstreams-version", "4.4.0"],
     "Kafka 4.1.2 brokers lack streams groups beyond early access"),
    (["--sut", "kstreams", "--group-protocol", "streams", *NEW[:2]],  # the pinned 4.1.2 app
     "Kafka Streams 4.1.2 lacks the streams protocol beyond early access"),
    (["--sut", "kstreams", "--group-protocol", "streams", "--kafka-version", "4.4.0",
      "--kstreams-version", "4.3.1"], "Kafka Streams 4.3.1 lacks static membership"),
    (["--sut", "app", "--app", "dev.kchaos:examples:1", "--input",
      str(EXAMPLES / "wordcount.yaml"), "--group-protocol", "streams",
      "--kafka-version", "4.4.0"],  # the app's default release, 4.2.2
     "Kafka Streams 4.2.2 lacks static membership"),
])
def test_refusals_are_one_line_254_before_anything_is_fetched_or_written(
    tmp_path: Path, args: list[str], says: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_fetch(*_: object) -> None:
        raise AssertionError("fetched before the refusal")

    monkeypatch.setattr("harness.kafka.jars.kafka_libs", no_fetch)
    assert says in refused_run(tmp_path, ["--time-limit", "10", *args], capsys)


def test_the_setting_is_in_run_json_and_comes_back() -> None:
    config = resolve({"sut": "kstreams", "group_protocol": "streams", "profile": "kill",
                      "kafka_version": "4.4.0", "kstreams_version": "4.4.0"})
    assert config.to_json()["group_protocol"] == "streams"
    assert RunConfig.from_json(config.to_json()) == config
    older = {k: v for k, v in config.to_json().items() if k != "group_protocol"}
    assert RunConfig.from_json(older).group_protocol == "classic"  # a run from before it
    assert open_sut(config).version == "4.4.0"


def test_pods_get_the_protocol_only_under_streams() -> None:
    paths = PodPaths("/s", "/t", "/c")
    classic = PodSettings.from_run(RunConfig(), "b:1").argv("pod-0", paths)
    assert "--group-protocol" not in classic  # the Python worker's command line as before
    streams = PodSettings.from_run(RunConfig(group_protocol="streams"), "b:1").argv("pod-0",
                                                                                    paths)
    assert streams[streams.index("--group-protocol") + 1] == "streams"


@pytest.mark.parametrize(("standbys", "session_ms", "heartbeat_ms"), [
    (0, 10_000, 3000), (1, 45_000, 3000), (2, 6000, 2000),
])
def test_the_streams_group_gets_the_runs_standbys_session_and_heartbeat(
    standbys: int, session_ms: int, heartbeat_ms: int
) -> None:
    assert streams_group_config(standbys, session_ms) == {
        "streams.num.standby.replicas": str(standbys),
        "streams.session.timeout.ms": str(session_ms),
        "streams.heartbeat.interval.ms": str(heartbeat_ms),
    }


def test_a_nightly_cell_takes_it_as_a_setting_or_an_option() -> None:
    matrix = parse_matrix({"include": [
        {"profile": "kill", "seeds": [1], "settings": {
            "sut": "kstreams", "group_protocol": "streams", "kstreams_version": "4.4.0",
            "kafka_version": "4.4.0"}},
        {"profile": "kill", "seeds": [1], "args": ["--sut", "kstreams", "--group-protocol",
                                                   "streams"]},
    ]})
    for cell in matrix.cells:
        assert cell.setting("group_protocol") == "streams", cell


def test_a_scale_in_says_a_streams_group_has_no_admin_leave() -> None:
    """The scale-in fault's leave (KIP-812's, by the admin client) has no counterpart for a
    streams group: the step's details say so instead of an empty list of members."""
    from harness.run.topics import GroupMembers, NoAdminLeave

    with pytest.raises(NoAdminLeave, match="session timeout"):
        GroupMembers("127.0.0.1:1", "ledger-app", streams_group=True).leave("pod-2")

def test_the_brokers_hold_the_streams_groups_configs_and_say_why_they_refuse_one(
    kafka_bootstrap: str,
) -> None:
    """On the session's brokers (the pinned release: streams groups early access there, the
    group configs already there): set before any member exists and read back; a value
    outside the brokers' bounds is one line with their reason."""
    wanted = streams_group_config(1, 6000)
    assert configure_streams_group(kafka_bootstrap, "kchaos-protocol-test", wanted) == wanted
    with pytest.raises(UsageError, match="refused the streams group's configs") as refused:
        configure_streams_group(kafka_bootstrap, "kchaos-protocol-test-2",
                                {"streams.session.timeout.ms": "500"})  # below min 1000
    assert "\n" not in str(refused.value)

@whole_run
def test_a_streams_protocol_run_is_valid_and_really_ran_streams_groups_with_standbys(
    tmp_path: Path, spark_url: str
) -> None:
    """Kafka Streams 4.4.0 on 4.4.0 brokers, one standby, pods killed: valid; the broker
    held the run's standbys and session on the streams group, its members joined a streams
    group (the broker's log), and standbys were assigned (the pods traced standby updates,
    which the client-side num.standby.replicas alone no longer gives)."""
    code, run_dir, doc = kstreams_run(tmp_path, spark_url, *NEW, "--group-protocol", "streams",
                                      "--standbys", "1", "--profile", "kill", "--seed", "1",
                                      "--time-limit", "25")
    assert code == 0 and doc["verdict"] is True, doc["anomaly_counts"]
    run = json.loads((run_dir / "run.json").read_text())
    assert run["config"]["group_protocol"] == "streams"
    held = run["streams_group_config"]["held"]
    assert held["streams.num.standby.replicas"] == "1"
    assert held["streams.session.timeout.ms"] == str(run["config"]["session_timeout_ms"])
    broker_log = "".join(p.read_text() for p in (run_dir / "kafka").glob("broker-*.log"))
    assert "joins the streams group" in broker_log
    traces = [json.loads(line) for trace in (run_dir / "pods").glob("*/trace.jsonl")
              for line in trace.read_text().splitlines() if line.strip()]
    assert any(t["event"] == "standby-update-start" for t in traces), "no standby assigned"
    logs = "".join(p.read_text() for p in (run_dir / "pods").glob("*/worker.log"))
    assert "Streams rebalance protocol enabled" in logs
