"""Fixtures of the checker tests: one SparkSession for the whole test session (starting a
JVM costs seconds; hypothesis runs many examples), stopped at the end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from checker.session import start_spark


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    # Tiny histories: two shuffle partitions keep per-job scheduling overhead low.
    session = start_spark(driver_memory="1g", shuffle_partitions=2, app_name="kchaos-tests")
    yield session
    session.stop()
