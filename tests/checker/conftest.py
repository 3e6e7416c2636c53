"""Fixtures of the checker tests: one SparkSession for the whole test session (starting a
JVM costs seconds; hypothesis runs many examples), stopped at the end."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from checker.session import start_spark

# pytest runs with --import-mode=importlib, which puts no test folder on sys.path; the
# synthetic-history helpers beside this file are plain modules the tests import.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    # Tiny histories: two shuffle partitions keep per-job scheduling overhead low.
    session = start_spark(driver_memory="1g", shuffle_partitions=2, app_name="kchaos-tests")
    # Tiny inputs: compiling whole-stage code and re-planning adaptively cost more than
    # they save here (about 2x per example); results do not depend on either.
    session.conf.set("spark.sql.codegen.wholeStage", "false")
    session.conf.set("spark.sql.adaptive.enabled", "false")
    yield session
    session.stop()
