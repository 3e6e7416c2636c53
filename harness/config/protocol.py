"""The rebalance protocol of a run's Kafka Streams app (`--group-protocol classic|streams`):
which releases take the streams protocol (KIP-1071) with the app's settings, and the
streams group's settings the brokers hold under it.

Under the streams protocol the assignment is computed on the broker, and so are settings a
classic client keeps itself: Kafka Streams ignores `num.standby.replicas` (it logs that
standbys "are configured broker-side") and its consumer's `session.timeout.ms` and
`heartbeat.interval.ms`. The run's values are set on the streams group instead
(`streams.num.standby.replicas`, `streams.session.timeout.ms`,
`streams.heartbeat.interval.ms`, group configs of KIP-1071) before the pods start.
"""

from __future__ import annotations

from typing import Any

from harness.errors import UsageError

CLASSIC = "classic"
STREAMS = "streams"
GROUP_PROTOCOLS = (CLASSIC, STREAMS)

# What a release needs for the streams protocol as the app runs it, oldest first: a release
# before `first` lacks `what`. Read from the releases (docs/kstreams.md, "the rebalance
# protocol"): StreamsConfig has `group.protocol=streams` from 4.1, whose brokers keep
# streams groups behind an unstable feature (streams.version 1 is production from 4.2);
# 4.2 and 4.3 refuse static members under it (StreamsConfig: "Streams rebalance protocol
# does not support static membership"; the group coordinator: "Static members are not
# supported in streams groups"), and the app is a static member (group.instance.id = pod
# name), as under the classic protocol.
KSTREAMS_NEEDS: tuple[tuple[tuple[int, int], str], ...] = (
    ((4, 1), "the streams rebalance protocol (KIP-1071, from 4.1)"),
    ((4, 2), "the streams protocol beyond early access (production-ready from 4.2)"),
    ((4, 4), "static membership under the streams protocol (from 4.4; the app's "
             "group.instance.id is its pod name)"),
)
BROKER_NEEDS: tuple[tuple[tuple[int, int], str], ...] = (
    ((4, 1), "streams groups (KIP-1071, from 4.1)"),
    ((4, 2), "streams groups beyond early access (feature streams.version is production "
             "from 4.2)"),
    ((4, 4), "static members in streams groups (from 4.4; the app's group.instance.id is "
             "its pod name)"),
)
FIRST_STREAMS_RELEASE = ".".join(map(str, KSTREAMS_NEEDS[-1][0])) + ".0"

# The heartbeat a classic Kafka Streams consumer keeps (the consumer's default
# heartbeat.interval.ms, which Kafka Streams does not change); the streams group gets the
# same, or a third of a shorter session.
CLASSIC_HEARTBEAT_MS = 3000


def _release(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _lacks(version: str, needs: tuple[tuple[tuple[int, int], str], ...]) -> str | None:
    return next((what for first, what in needs if _release(version) < first), None)


def _refusal(version: str, needs: tuple[tuple[tuple[int, int], str], ...], subject: str,
             option: str) -> str | None:
    """`subject` names what lacks it, e.g. "Kafka {version} brokers lack"."""
    what = _lacks(version, needs)
    if what is None:
        return None
    return (f"--group-protocol streams: {subject.format(version=version)} {what}; give "
            f"{option} {FIRST_STREAMS_RELEASE} or later, or --group-protocol classic")


def kstreams_refusal(version: str) -> str | None:
    """Why Kafka Streams `version` cannot run the app under the streams protocol, or None."""
    return _refusal(version, KSTREAMS_NEEDS, "Kafka Streams {version} lacks",
                    "--kstreams-version")


def broker_refusal(version: str) -> str | None:
    """Why Kafka `version` brokers cannot hold the app's streams group, or None."""
    return _refusal(version, BROKER_NEEDS, "Kafka {version} brokers lack", "--kafka-version")


def refuse_kstreams(protocol: str, version: str | None) -> None:
    """UsageError (254) when the run's Kafka Streams release (None: not Kafka Streams, which
    validate() has refused already) cannot take `protocol`."""
    reason = kstreams_refusal(version) if protocol == STREAMS and version else None
    if reason is not None:
        raise UsageError(reason)


def streams_group_config(standbys: int, session_timeout_ms: int) -> dict[str, str]:
    """The streams group's configs that carry the run's settings (GroupConfig's names)."""
    return {
        "streams.num.standby.replicas": str(standbys),
        "streams.session.timeout.ms": str(session_timeout_ms),
        "streams.heartbeat.interval.ms": str(min(CLASSIC_HEARTBEAT_MS, session_timeout_ms // 3)),
    }


def configure_streams_group(bootstrap: str, group: str, configs: dict[str, str]) -> dict[str, Any]:
    """Sets `configs` on streams group `group` (incrementalAlterConfigs on the GROUP
    resource: the group need not exist yet) and returns what the brokers then describe for
    those keys. UsageError (254) with the brokers' reason if they refuse (e.g. a --bootstrap
    cluster whose group.streams.min.session.timeout.ms is above the run's session)."""
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType
    from kafka.errors import KafkaError

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        resource = ConfigResource(ConfigResourceType.GROUP, group, configs)
        try:
            answer = admin.alter_configs([resource], raise_on_unknown=False, incremental=True)
            result = answer.get("group", {}).get(group, "no answer")
            if result != "OK":  # kafka-python returns a resource's error as its text
                raise ValueError(result)
            described = admin.describe_configs([ConfigResource(ConfigResourceType.GROUP, group)])
        except (KafkaError, ValueError) as exc:
            raise UsageError(f"--group-protocol streams: the brokers refused the streams "
                             f"group's configs {configs}: {exc}") from exc
        held = described.get("group", {}).get(group, {})
        return {key: held[key].get("value") for key in configs if key in held}
    finally:
        admin.close()
