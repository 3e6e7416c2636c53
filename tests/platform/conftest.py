"""The platform tests' helpers (cli_helpers.py) are plain modules beside this file."""

from __future__ import annotations

import sys
from pathlib import Path

# pytest runs with --import-mode=importlib, which puts no test folder on sys.path.
sys.path.insert(0, str(Path(__file__).parent))
