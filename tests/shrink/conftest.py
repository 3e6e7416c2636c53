"""The shrink tests' helpers (shrink_fixtures.py, and the platform tests' cli_helpers.py)
are plain modules; pytest's importlib mode puts no test folder on sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "platform"))

from shrink_fixtures import write_run


@pytest.fixture
def failing_run(tmp_path: Path) -> Path:
    return write_run(tmp_path / "results" / "20261122T000000-KAFKA-8187-s1",
                     {"lost-history": 3, "unavailable": 1})
