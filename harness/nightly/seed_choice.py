"""A nightly that chases coverage (issue 53, `kchaos nightly --choose-seeds coverage`).

Plans are cheap to draw: for each cell of the matrix, the plans of a pool of candidate
seeds (`POOL`, 1-500) are drawn with the cell's settings and each is told which coverage
classes it can reach (predict.py). When the nightly launches a cell's next run it asks
`CoverageSeeds.choose` for its seed: the seed of the pool whose predicted classes weigh
most, a class weighing what it still lacks of being reached `ENOUGH` times tonight (the
classes the finished runs really reached, from their results.json, plus those the runs in
progress are predicted to reach). A seed whose plan aims at nothing still wanted loses to
one that does, so tonight's picks go where tonight's runs have not been; ties go to the
broader plan, then the lower seed, so a choice is the same for the same state.

The matrix keeps its shape: each cell runs as many times as it has seeds in the matrix,
in the same order and budget as with the matrix's seeds (`--choose-seeds matrix`, the
default); only which seed each run gets differs. `cover` is the same choice with no runs
at all (each pick counted as reached), for the bench (bench/bench_seed_choice.py).
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.nightly.matrix import Cell, Matrix
from harness.nightly.supervise import Attempt

POOL = range(1, 501)  # candidate seeds per cell
ENOUGH = 2  # a class reached this often tonight is no longer aimed at
MATRIX, COVERAGE = "matrix", "coverage"  # `--choose-seeds`
CHOICES = (MATRIX, COVERAGE)

Predictions = Mapping[int, frozenset[str]]  # seed -> the classes its plan can reach


@dataclass(frozen=True)
class Pick:
    """A seed chosen for a run, and why: the predicted classes it aimed at (still wanted
    when it was picked) among all it predicted."""

    seed: int
    aimed_at: tuple[str, ...]
    predicted: tuple[str, ...]
    note: str = ""  # why no prediction was made (the matrix's seed was kept)

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "aimed_at": list(self.aimed_at),
                "predicted": list(self.predicted), "note": self.note}


def lacking(counts: Mapping[str, int], name: str) -> int:
    """How far class `name` is from being reached ENOUGH times (its weight in a pick)."""
    return max(0, ENOUGH - counts.get(name, 0))


def pick(predictions: Predictions, counts: Mapping[str, int],
         used: Collection[int] = ()) -> Pick | None:
    """The seed of `predictions` (none of `used`) whose classes lack most (ties: more
    classes, then the lower seed); None when every seed is used."""
    best: tuple[int, int, int] | None = None
    for seed, classes in predictions.items():
        if seed in used:
            continue
        key = (sum(lacking(counts, c) for c in classes), len(classes), -seed)
        if best is None or key > best:
            best = key
    if best is None:
        return None
    seed = -best[2]
    classes = predictions[seed]
    return Pick(seed, tuple(sorted(c for c in classes if lacking(counts, c))),
                tuple(sorted(classes)))


def cover(predictions: Predictions, counts: Mapping[str, int] | None = None,
          runs: int | None = None) -> list[Pick]:
    """Greedy picks, each counted as reaching what it predicts, until every class some
    seed of the pool predicts is reached ENOUGH times (or `runs` picks, or the pool is
    used up)."""
    tally = Counter(counts or {})
    coverable = frozenset().union(*predictions.values()) if predictions else frozenset()
    picks: list[Pick] = []
    while runs is None or len(picks) < runs:
        if runs is None and all(not lacking(tally, c) for c in coverable):
            break
        chosen = pick(predictions, tally, [p.seed for p in picks])
        if chosen is None:
            break
        picks.append(chosen)
        tally.update(chosen.predicted)
    return picks


def reached_classes(run_dir: Path | None) -> list[str]:
    """The classes a finished run reached (results.json `coverage`); none if unreadable."""
    if run_dir is None:
        return []
    try:
        doc = json.loads((Path(run_dir) / "results.json").read_text())
        reached = doc["coverage"]["reached"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [str(r) for r in reached] if isinstance(reached, list) else []


def template(cell: Cell) -> Cell:
    """The cell without its seed: what the seed is chosen for."""
    return dataclasses.replace(cell, seed=0)


class CoverageSeeds:
    """Chooses each run's seed at its launch, from the classes tonight's runs reached."""

    def __init__(self, predict_pool: Callable[[Cell], Predictions]) -> None:
        self._predict_pool = predict_pool
        self._pools: dict[Cell, Predictions | str] = {}  # per template, or why none
        self._used: dict[Cell, list[int]] = {}
        self.reached: Counter[str] = Counter()  # by the finished runs
        self._in_progress: dict[Cell, frozenset[str]] = {}  # launched cell -> predicted
        self.picks: dict[Cell, Pick] = {}  # launched cell -> why its seed

    def counts(self) -> Counter[str]:
        """What the choice weighs against: reached, and predicted for the runs going on."""
        counts = Counter(self.reached)
        for predicted in self._in_progress.values():
            counts.update(predicted)
        return counts

    def _pool(self, key: Cell) -> Predictions | str:
        if key not in self._pools:
            try:
                self._pools[key] = self._predict_pool(key)
            except Exception as exc:  # the run says what is wrong; the seed stays the matrix's
                self._pools[key] = f"no prediction: {type(exc).__name__}: {exc}"
        return self._pools[key]

    def choose(self, cell: Cell) -> Cell:
        """The cell with the seed chosen for its run (the matrix's when none can be)."""
        key = template(cell)
        pool, used = self._pool(key), self._used.setdefault(key, [])
        chosen = pick(pool, self.counts(), used) if not isinstance(pool, str) else None
        if chosen is None:
            note = pool if isinstance(pool, str) else "the pool is used up"
            chosen = Pick(cell.seed, (), (), note)
        used.append(chosen.seed)
        launched = dataclasses.replace(cell, seed=chosen.seed)
        self.picks[launched] = chosen
        self._in_progress[launched] = frozenset(chosen.predicted)
        return launched

    def finished(self, attempt: Attempt) -> None:
        """A run ended: what it really reached replaces what it was predicted to."""
        self._in_progress.pop(attempt.cell, None)
        self.reached.update(reached_classes(attempt.run_dir))

    def pick_of(self, cell: Cell) -> Pick | None:
        return self.picks.get(cell)

    def said(self, cell: Cell) -> str:
        """Why the launched cell got its seed, in a line."""
        chosen = self.picks.get(cell)
        if chosen is None or chosen.note:
            return chosen.note if chosen else "not chosen"
        if not chosen.aimed_at:
            return f"seed {chosen.seed}: every class it can reach is reached {ENOUGH}x tonight"
        return f"seed {chosen.seed} aims at {', '.join(chosen.aimed_at)}"


def seed_choice_record(choose_seeds: str, chooser: CoverageSeeds | None) -> dict[str, Any]:
    """nightly.json's `seed_choice`: how the seeds were chosen (each run's `pick` says
    why its seed) and, by coverage, what tonight's runs reached per class."""
    if chooser is None:
        return {"by": choose_seeds}
    return {"by": choose_seeds, "pool": [POOL.start, POOL.stop - 1], "enough": ENOUGH,
            "reached": dict(sorted(chooser.reached.items()))}


def predict_pool(matrix: Matrix, seeds: range = POOL) -> Callable[[Cell], Predictions]:
    """Draws each seed's plan as `kchaos run` would for the cell (its settings resolved,
    its knobs drawn, the platform's kinds and the SUT's refusals) and predicts its
    classes."""
    def predictions(cell: Cell) -> Predictions:
        from faults.plan import plan as draw_plan
        from harness.config.options import explicit_settings, parse_run_args
        from harness.config.run import plan_settings, resolve
        from harness.nightly.predict import predict_plan
        from harness.platforms import platform_kinds
        from harness.sut import open_sut

        args = parse_run_args(cell.run_args(matrix.time_limit_s, matrix.extra_args))
        explicit, drawn = explicit_settings(args), args.knobs == "drawn"
        first = resolve({**explicit, "seed": seeds[0]}, drawn)
        kinds = platform_kinds(first.platform, first.bootstrap)
        refused = open_sut(first).refused_faults
        out: dict[int, frozenset[str]] = {}
        for seed in seeds:
            config = resolve({**explicit, "seed": seed}, drawn)
            plan = draw_plan(seed, config.profile, config.pods, config.brokers,
                             config.time_limit_s, kinds, refused,
                             settings=plan_settings(config))
            out[seed] = predict_plan(plan, dataclasses.asdict(config))
        return out

    return predictions
