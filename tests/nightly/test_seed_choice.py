"""`kchaos nightly --choose-seeds coverage` (harness/nightly/seed_choice.py): the greedy
covering choice over a pool of predicted plans, and the feedback from what finished runs
really reached, through the real `nightly()` against the fake `kchaos`."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sharded_fakes import FAKE

from harness.cli import main
from harness.nightly import nightly, seed_choice
from harness.nightly.matrix import Cell
from harness.nightly.seed_choice import ENOUGH, CoverageSeeds, cover, pick
from harness.nightly.supervise import Attempt

NAMES = ("zombie", "crash-in-txn", "standby-promoted", "power-loss-unsynced", "task-returns")
pools = st.dictionaries(st.integers(1, 60), st.frozensets(st.sampled_from(NAMES)), max_size=25)


@given(pools)
def test_the_cover_reaches_every_class_the_pool_can_as_often_as_it_can(
        pool: dict[int, frozenset[str]]) -> None:
    picks = cover(pool)
    picked = Counter(c for p in picks for c in p.predicted)
    for name in frozenset().union(*pool.values()) if pool else ():
        holders = sum(1 for classes in pool.values() if name in classes)
        assert picked[name] >= min(ENOUGH, holders), name
    assert len({p.seed for p in picks}) == len(picks)  # no seed twice


@given(pools, st.dictionaries(st.sampled_from(NAMES), st.integers(0, 3)))
def test_a_choice_is_the_same_for_the_same_state(
        pool: dict[int, frozenset[str]], counts: dict[str, int]) -> None:
    shuffled = dict(reversed(list(pool.items())))
    assert cover(pool, counts, runs=5) == cover(shuffled, counts, runs=5)
    assert pick(pool, counts) == pick(shuffled, counts)


def test_a_pick_aims_at_what_is_reached_fewer_than_twice() -> None:
    pool = {1: frozenset({"zombie", "crash-in-txn"}), 2: frozenset({"power-loss-unsynced"})}
    assert pick(pool, {}).seed == 1
    chosen = pick(pool, {"zombie": 2, "crash-in-txn": 1})
    assert chosen is not None and chosen.seed == 2 and chosen.aimed_at == ("power-loss-unsynced",)
    # Nothing lacks: the broader plan, then the lower seed.
    assert pick(pool, dict.fromkeys(NAMES, ENOUGH)).aimed_at == ()  # type: ignore[union-attr]
    assert pick(pool, {}, used=[1, 2]) is None


def test_runs_in_progress_count_as_reaching_what_they_predict() -> None:
    pool = {1: frozenset({"zombie"}), 2: frozenset({"zombie"}), 3: frozenset({"task-returns"})}
    chooser = CoverageSeeds(lambda cell: pool)
    first = chooser.choose(Cell("all", 1))
    # The first still runs: its zombie counts once, so the task's return weighs more.
    assert chooser.choose(Cell("all", 2)).seed == 3
    assert chooser.choose(Cell("all", 3)).seed == 2
    assert chooser.counts()["zombie"] == 2
    chooser.finished(Attempt(first, 0, None, 1.0))  # no folder: reached nothing after all
    assert chooser.counts()["zombie"] == 1 and not chooser.reached


def test_a_cell_whose_plans_cannot_be_predicted_keeps_its_matrix_seed() -> None:
    def broken(cell: Cell) -> dict[int, frozenset[str]]:
        raise ValueError("no app jar")

    chooser = CoverageSeeds(broken)
    launched = chooser.choose(Cell("all", 7))
    assert launched.seed == 7 and "no app jar" in chooser.said(launched)


# Two runs of one cell, one at a time: the second's seed follows what the first reached.
MATRIX = "time_limit_s: 1\njobs: 1\nseeds: [1, 2]\nprofiles: [kill]\nbugs: [[]]\n"
POOL = {11: frozenset({"zombie", "crash-in-txn"}), 12: frozenset({"zombie"}),
        13: frozenset({"crash-in-txn"})}


def _nightly_reaching(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      reached: list[str]) -> dict[str, object]:
    monkeypatch.setattr(seed_choice, "predict_pool", lambda matrix: lambda cell: POOL)
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(MATRIX)
    results = tmp_path / "results"
    fake = [sys.executable, str(FAKE), "--coverage", json.dumps({"kill/11": reached})]
    assert nightly(results, 3600, matrix, fake, choose_seeds="coverage") == 0
    (folder,) = [p for p in results.glob("nightly-*") if p.is_dir()]
    assert "aims at" in (folder / "nightly.md").read_text()
    assert 'id="seed-choice"' in (folder / "nightly.html").read_text()
    doc: dict[str, object] = json.loads((folder / "nightly.json").read_text())
    return doc


@pytest.mark.parametrize(("reached", "second", "aimed_at"), [
    (["zombie"], 13, ["crash-in-txn"]),  # the crash was missed: the next plan aims at it
    (["crash-in-txn"], 12, ["zombie"]),
])
def test_the_next_pick_aims_at_what_the_finished_runs_missed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reached: list[str], second: int,
        aimed_at: list[str]) -> None:
    doc = _nightly_reaching(tmp_path, monkeypatch, reached)
    runs = doc["runs"]
    assert isinstance(runs, list)
    assert [r["cell"]["seed"] for r in runs] == [11, second]
    assert runs[0]["pick"]["aimed_at"] == ["crash-in-txn", "zombie"]
    assert runs[1]["pick"]["aimed_at"] == aimed_at
    assert doc["seed_choice"] == {"by": "coverage", "pool": [1, 500], "enough": ENOUGH,
                                  "reached": {reached[0]: 1}}


def test_the_matrix_seeds_stay_the_default(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(MATRIX)
    results = tmp_path / "results"
    assert nightly(results, 3600, matrix, [sys.executable, str(FAKE)]) == 0
    (folder,) = [p for p in results.glob("nightly-*") if p.is_dir()]
    doc = json.loads((folder / "nightly.json").read_text())
    assert [r["cell"]["seed"] for r in doc["runs"]] == [1, 2]
    assert doc["seed_choice"] == {"by": "matrix"} and "pick" not in doc["runs"][0]


@pytest.mark.parametrize("other", [["--seeds", "2"], ["--shard", "1/2"]])
def test_coverage_with_options_that_fix_the_seeds_is_one_line_and_254(
        tmp_path: Path, other: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(MATRIX)
    results = tmp_path / "results"
    assert main(["--results-dir", str(results), "nightly", "--matrix", str(matrix),
                 "--choose-seeds", "coverage", *other]) == 254
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--choose-seeds matrix" in err[0]
    assert not results.exists()
