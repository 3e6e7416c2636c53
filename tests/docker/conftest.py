"""Docker tests: most need no engine (files and specs); those marked `docker` take the
`engine` fixture, which skips them, with the reason, where no engine answers."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from harness.errors import UsageError
from harness.platforms.docker import require_engine

# pytest runs with --import-mode=importlib, which puts no test folder on sys.path; the
# fake docker client (docker_fakes.py) is imported from here.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def engine() -> Iterator[docker.DockerClient]:
    try:
        require_engine()
    except UsageError as exc:
        pytest.skip(f"needs a Docker engine: {exc}")
    client = docker.from_env()
    try:
        yield client
    finally:
        client.close()
