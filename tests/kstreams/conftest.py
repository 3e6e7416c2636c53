"""pytest runs with --import-mode=importlib, which puts no test folder on sys.path: the
Kafka Streams tests share test_kstreams_sut's helpers (a whole run's marks, `kstreams_run`)
as a plain module."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
