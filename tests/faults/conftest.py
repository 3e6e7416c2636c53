"""Puts this folder on sys.path: pytest runs with --import-mode=importlib, which adds no
test folder, and the plan tests import the golden plans (golden_plans.py) from here."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
