"""End to end, through the CLI: each targeted profile catches its switch (the seed bugs and
the mutants with a profile of their own) with the expected anomaly class; the fixed worker
passes the very same plan; repro brings an anomaly back.

Every run is the real thing: its own Kafka broker, worker processes, the nemesis, Spark.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from faults.scenarios import SCENARIOS
from harness.procs import is_same_process, load_records
from tests.e2e import runs

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]

# Each scenario CI gates on (faults/scenarios: its switches, its plan, the classes a catch
# shows, its load phase): the switch caught, the fixed worker valid on the same plan. The
# others (the mutants' eos-no-corruption-wipe, global-rebuild-nonblocking, ...) are
# nightly cells: seed 1 caught them on a quiet machine and missed some under load, too
# few runs to gate CI.
GATED = {name: s for name, s in SCENARIOS.items() if s.in_ci}
EXPECTED = {name: set(s.expected) for name, s in GATED.items()}
TIME_LIMIT_S = {name: f"{s.ci_time_limit_s:g}" for name, s in GATED.items()}
PROFILES = list(EXPECTED)


def run_profile(
    results: Path, profile: str, bugs: str | None, spark_url: str
) -> tuple[int, Path]:
    time_limit = TIME_LIMIT_S[profile]
    args = ["run", "--profile", profile, "--seed", runs.SEED, "--time-limit", time_limit,
            "--spark-master", spark_url]
    code, run_dir, _ = runs.kchaos(results, *args, *(["--bugs", bugs] if bugs else []))
    return code, run_dir


RunOf = Callable[[str, str | None], tuple[int, Path]]


@pytest.fixture(scope="module")
def run_of(tmp_path_factory: pytest.TempPathFactory, spark_url: str) -> RunOf:
    """One run per (profile, bugs) for the module, each in a folder of its own: the repro
    test replays the very run the KIP-406 detection test judged (a run less in CI)."""
    runs: dict[tuple[str, str | None], tuple[int, Path]] = {}

    def get(profile: str, bugs: str | None) -> tuple[int, Path]:
        if (profile, bugs) not in runs:
            folder = tmp_path_factory.mktemp(f"{profile}-{bugs or 'fixed'}")
            runs[profile, bugs] = run_profile(folder, profile, bugs, spark_url)
        return runs[profile, bugs]

    return get


def assert_nothing_left(run_dir: Path) -> None:
    alive = [r for r in load_records(run_dir / "pids.json") if is_same_process(r)]
    assert not alive, f"processes left behind: {alive}"


@pytest.mark.parametrize("bug", PROFILES)
def test_switch_is_caught_by_its_targeted_profile(bug: str, run_of: RunOf) -> None:
    code, run_dir = run_of(bug, ",".join(GATED[bug].switches))
    result = runs.outcome(run_dir)
    assert code == 1 and result["verdict"] is False, result["anomaly_counts"]
    found = set(result["anomaly_counts"])
    assert found & EXPECTED[bug], f"{bug}: expected one of {EXPECTED[bug]}, got {found}"
    examples = [e for name in found & EXPECTED[bug] for e in result["checks"][name]["examples"]]
    assert examples, "an anomaly comes with the records that prove it"
    assert runs.planned_steps(run_dir) == runs.expected_steps(bug, run_dir)
    assert (run_dir / "report.html").exists() and (run_dir / "junit.xml").exists()
    assert_nothing_left(run_dir)


@pytest.mark.parametrize("bug", PROFILES)
def test_fixed_worker_passes_the_same_plan(bug: str, tmp_path: Path, spark_url: str) -> None:
    code, run_dir = run_profile(tmp_path, bug, None, spark_url)
    result = runs.outcome(run_dir)
    assert code == 0 and result["verdict"] is True, result["anomaly_counts"]
    assert runs.planned_steps(run_dir) == runs.expected_steps(bug, run_dir)
    applied = json.loads((run_dir / "plan.json").read_text())["steps"]
    assert all(s["status"] == "healed" for s in applied), "the faults really happened"
    assert_nothing_left(run_dir)


def test_repro_brings_the_anomaly_back(run_of: RunOf, spark_url: str) -> None:
    code, original = run_of("KIP-406", "KIP-406")
    assert code == 1
    runs.repro_brings_it_back(original, spark_url)
