"""One Spark Connect server checks every end-to-end run of the session (a JVM start per
run saved); `kchaos repro` still starts its own Spark, as a user's would."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from checker.spark_server import SparkConnectServer


@pytest.fixture(scope="session")
def spark_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("spark-connect") / "spark-connect.log"
    with SparkConnectServer(log, "local[*]", driver_memory="2g") as server:
        yield server.url
