"""Is a broker up: a TCP connect, its process, the brokers the cluster has registered."""

from __future__ import annotations

import socket

import psutil
from kafka import KafkaAdminClient


def listening(host: str, port: int) -> bool:
    """A TCP connect: cheap, unlike an admin client."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def pid_alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def describe_brokers(bootstrap: str) -> set[int]:
    """The ids of the brokers the cluster reports (raises KafkaError if unreachable)."""
    # Readiness polls call this before the broker listens: kafka-python's defaults would
    # wait up to 30 s for a bootstrap connection (backing off up to 30 s between tries),
    # long after the broker is up; one poll must cost at most a few seconds.
    admin = KafkaAdminClient(
        bootstrap_servers=bootstrap, request_timeout_ms=3000, bootstrap_timeout_ms=3000,
        reconnect_backoff_max_ms=500,
    )
    try:
        brokers = admin.describe_cluster()["brokers"]
        return {int(b["broker_id"]) for b in brokers if not b.get("is_fenced")}
    finally:
        admin.close()
