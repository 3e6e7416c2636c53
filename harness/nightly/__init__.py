"""`kchaos nightly`: a matrix of profiles x seeds x bug switches, each `kchaos run` a
subprocess (`jobs` of them at once), and the project's own checks, within a time budget;
then the index, a JUnit file and a summary.

Where each part lives:
- matrix.py     the YAML schema (pydantic) and the cells and project checks it expands to;
- durations.py  "90s", "45m", "1h30m" -> seconds (--budget, matrix durations);
- supervise.py  runs as subprocesses, `jobs` at once, timeouts, interruption, the budget;
- project_checks.py  a project check (`scripts/test-fresh.sh`) as a subprocess, whether it
                can start here, its JUnit suite;
- table.py      the terminal summary tables;
- command.py    the whole nightly: run, judge, write the index, JUnit and nightly.json;
- shard.py      `--shard I/N`: which cells a machine runs, and the shard.json it records;
- shard_folder.py, merge.py  `kchaos nightly merge`: shard folders checked, then joined
                into one nightly (docs/nightly-sharded.md).
"""

from harness.nightly.command import NIGHTLY_JUNIT, nightly
from harness.nightly.durations import parse_duration
from harness.nightly.matrix import DEFAULT_MATRIX, Cell, Matrix, load_matrix, parse_matrix
from harness.nightly.supervise import Attempt, Progress, run_matrix

__all__ = [
    "DEFAULT_MATRIX", "NIGHTLY_JUNIT", "Attempt", "Cell", "Matrix", "Progress", "load_matrix",
    "nightly", "parse_duration", "parse_matrix", "run_matrix",
]
