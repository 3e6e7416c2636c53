"""The session's nightlies for the sharded-nightly tests (sharded_fakes.py): the whole
matrix on one "machine" and its two shards on two others, run once, read by every test
(a test that damages one works on a copy)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# pytest runs with --import-mode=importlib, which puts no test folder on sys.path.
sys.path.insert(0, str(Path(__file__).parent))

from sharded_fakes import Nightlies, make_nightlies


@pytest.fixture(scope="session")
def nightlies(tmp_path_factory: pytest.TempPathFactory) -> Nightlies:
    return make_nightlies(tmp_path_factory.mktemp("sharded"))
