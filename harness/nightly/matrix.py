"""The nightly matrix: its YAML schema (pydantic), and the cells it expands to.

A matrix is checked whole when loaded, before any run starts: a misspelt key, a value of
the wrong type (`bugs: KAFKA-7672` instead of a list of bug sets), an unknown profile or
bug switch, a bad duration, an option `kchaos run` would refuse or a project check named
twice is one line naming the place, and exit 254. The format is in
harness/matrix_default.yaml.

Besides its runs, a matrix may name project checks (`project_checks`): commands of the
project's own (e.g. `scripts/test-fresh.sh`, set-up and the fast tier in a fresh
container), each run by the nightly as a cell of its own (project_checks.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)

from harness.config.run import RunConfig
from harness.errors import UsageError
from harness.nightly.durations import seconds_of

DEFAULT_MATRIX = Path(__file__).parent.parent / "matrix_default.yaml"


@dataclass(frozen=True)
class Cell:
    profile: str
    seed: int
    bugs: tuple[str, ...] = ()
    args: tuple[str, ...] = ()  # this cell's own extra `kchaos run` options
    # Run settings by name (RunConfig's fields, typed and checked when the matrix is
    # loaded), given to the run as `--set KEY=VALUE`: a cell says `sut: kstreams`, not argv.
    settings: tuple[tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        given = [f"{k}={v}" for k, v in self.settings] + list(self.args)
        extra = f" {' '.join(given)}" if given else ""
        return f"{self.profile} seed {self.seed} bugs {','.join(self.bugs) or '-'}{extra}"

    def setting(self, key: str, extra: Sequence[str] = ()) -> Any:
        """One of the run's settings as this cell gives it (settings or options, after the
        matrix's `extra`); None where the run takes the profile's or the default."""
        from harness.config.options import given_settings

        return given_settings(self.run_args(RunConfig.time_limit_s, extra)).get(key)

    def argv(self, time_limit_s: float, results_dir: Path, extra: Sequence[str]) -> list[str]:
        # --results-dir is a global kchaos option: it goes before the command.
        return ["--results-dir", str(results_dir), "run", *self.run_args(time_limit_s, extra)]

    def run_args(self, time_limit_s: float, extra: Sequence[str]) -> list[str]:
        """The `kchaos run` options of the cell's run (later ones win)."""
        from harness.config.options import settings_argv

        args = ["--profile", self.profile, "--seed", str(self.seed)]
        if self.bugs:  # no --bugs at all means the fixed worker
            args += ["--bugs", ",".join(self.bugs)]
        args += ["--time-limit", f"{time_limit_s:g}"]
        return args + list(extra) + settings_argv(self.settings) + list(self.args)


@dataclass(frozen=True)
class ProjectCheck:
    """A command of the project's own the nightly runs besides its runs (project_checks.py):
    from the project's root folder, stopped after `timeout_s`; passed when it exits 0."""

    name: str  # also its log's name: check-<name>.log
    command: tuple[str, ...]
    timeout_s: float
    needs: tuple[str, ...] = ()  # NEEDS: what must be there for it to start


NEEDS = ("docker",)  # a Docker engine, or root to start one


@dataclass(frozen=True)
class Matrix:
    cells: tuple[Cell, ...]
    time_limit_s: float
    run_timeout_s: float
    extra_args: tuple[str, ...] = ()
    jobs: int = 1  # runs at once
    project_checks: tuple[ProjectCheck, ...] = ()


def time_limits(matrix: Matrix) -> list[float]:
    """The time limit each cell's run gets: the matrix's `time_limit_s`, or the cell's own
    (`--time-limit` or its `time_limit_s` setting)."""
    from harness.config.options import given_settings

    limits = []
    for cell in matrix.cells:
        try:
            limit = given_settings(cell.run_args(
                matrix.time_limit_s, matrix.extra_args)).get("time_limit_s")
        except UsageError:  # the matrix was checked when loaded; not one that was
            limit = None
        good = isinstance(limit, float) and math.isfinite(limit) and limit > 0
        limits.append(limit if good and isinstance(limit, float) else matrix.time_limit_s)
    return limits


def run_timeout(matrix: Matrix, time_limit_s: float) -> float:
    """When a cell's run is stopped: `run_timeout_s`, plus 3 s for each second its own
    time limit exceeds the matrix's (a 25-minute soak in a matrix of 60 s runs)."""
    return matrix.run_timeout_s + 3 * max(0.0, time_limit_s - matrix.time_limit_s)


# -- the schema -----------------------------------------------------------------------------


def _duration(raw: Any) -> Any:
    """Seconds as a number, or a duration string ("90s", "15m"); anything else is left for
    the float check to refuse (so bools and lists are errors, not 1.0)."""
    if isinstance(raw, str):
        seconds = seconds_of(raw)
        if seconds is None:
            raise ValueError(f"{raw!r} is not a duration such as 90, 90s, 15m or 1h30m")
        return seconds
    return raw


def _profile(raw: Any) -> Any:
    from faults.plan import PROFILES

    if isinstance(raw, str) and raw not in PROFILES:
        raise ValueError(f"unknown profile {raw!r}; known: {', '.join(PROFILES)}")
    return raw


def _switch(raw: Any) -> Any:
    from harness.config.run import known_bugs

    if isinstance(raw, str) and raw not in known_bugs():
        raise ValueError(f"unknown bug switch {raw!r}; known: {', '.join(known_bugs())}")
    return raw


# strict: True is not 1 second.
Seconds = Annotated[
    float, BeforeValidator(_duration), Field(gt=0, allow_inf_nan=False, strict=True)
]
Profile = Annotated[StrictStr, BeforeValidator(_profile)]
Switch = Annotated[StrictStr, BeforeValidator(_switch)]
BugSet = list[Switch]  # one run's switches; [] is the fixed worker
Seed = Annotated[StrictInt, Field(ge=0)]


class _Strict(BaseModel):
    # A misspelt key is an error, not a silently ignored setting.
    model_config = ConfigDict(extra="forbid", frozen=True)


Setting = StrictStr | StrictInt | StrictFloat | StrictBool  # a value: RunConfig types it


class IncludeDoc(_Strict):
    profile: Profile
    bugs: BugSet = []
    seeds: list[Seed] | None = None  # None: the matrix's seeds
    settings: dict[StrictStr, Setting] = {}
    args: list[StrictStr] = []  # options that are no setting (e.g. --knobs default)


class ProjectCheckDoc(_Strict):
    name: Annotated[StrictStr, Field(pattern=r"^[a-z0-9][a-z0-9-]{0,39}$")]
    command: Annotated[list[StrictStr], Field(min_length=1)]  # from the project's root
    timeout_s: Seconds
    needs: list[Literal["docker"]] = []


class MatrixDoc(_Strict):
    time_limit_s: Seconds = RunConfig.time_limit_s  # a run's own, unless the matrix says
    run_timeout_s: Seconds | None = None  # None: 3 x time_limit_s + 600
    extra_args: list[StrictStr] = []
    jobs: Annotated[StrictInt, Field(ge=1)] = 1
    seeds: list[Seed] = []  # [] or absent: seed 1
    profiles: list[Profile] = []
    bugs: list[BugSet] = []  # [] or absent: the fixed worker only
    # Every scenario (faults/scenarios) under its profile, with its switches and without.
    scenarios: StrictBool = False
    include: list[IncludeDoc] = []
    project_checks: list[ProjectCheckDoc] = []


def _one_line(exc: ValidationError, where: str) -> str:
    first = exc.errors()[0]
    # Keys are the user's text: escaped, so a key with a newline cannot break the line.
    place = ".".join(repr(p)[1:-1] if isinstance(p, str) else str(p) for p in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    given = "" if first["type"] == "missing" else f", got {first['input']!r}"
    return " ".join(f"{where}: `{place or 'top level'}`: {message}{given}{more}".split())


def _check_run_options(args: Sequence[str], where: str) -> None:
    """Options a cell adds must be ones `kchaos run` takes, with values their settings'
    rules allow: found now, not at the run."""
    if not args:
        return
    from harness.config.options import check_given, given_settings

    try:
        check_given(given_settings(args))
    except UsageError as exc:
        raise UsageError(f"{where}: {' '.join(args)}: {exc}") from None


def _settings(given: dict[str, Any], where: str) -> tuple[tuple[str, str], ...]:
    """Each KEY: VALUE a run setting of the right type and a value its rule allows, as
    `--set` would take it."""
    from harness.config.run import SETTINGS, parse_setting

    out = []
    for key, value in given.items():
        try:
            name, typed = parse_setting(f"{key}={value}")
            SETTINGS[name].checked(typed)
        except UsageError as exc:
            raise UsageError(f"{where}: {str(exc).removeprefix('--set ')}") from None
        if "," in str(typed):  # --set splits its list at commas
            raise UsageError(f"{where}: {key}: a value with a comma goes in args, as its option")
        out.append((name, str(typed)))
    return tuple(out)


# -- the cells ------------------------------------------------------------------------------


def parse_matrix(doc: Any, where: str = "matrix") -> Matrix:
    if not isinstance(doc, dict):
        raise UsageError(f"{where}: expected a mapping with profiles, seeds, bugs, include")
    try:
        spec = MatrixDoc.model_validate(doc)
    except ValidationError as exc:
        raise UsageError(_one_line(exc, where)) from None
    _check_run_options(spec.extra_args, f"{where}: extra_args")
    seeds = spec.seeds or [1]
    per_seed: list[tuple[Cell, list[int]]] = [
        (Cell(p, 0, tuple(b)), seeds) for p in spec.profiles for b in spec.bugs or [[]]
    ]
    if spec.scenarios:
        from faults.scenarios import SCENARIOS
        from faults.scenarios.scenario import WORKER

        for scenario in SCENARIOS.values():
            if scenario.sut != WORKER:  # aimed at Kafka Streams' releases: no fixed worker
                continue
            # The fixed worker, then with the switches (none: aimed at a fault, `clock-jump`).
            per_seed += [(Cell(scenario.name, 0, switches), seeds)
                         for switches in dict.fromkeys(((), scenario.switches))]
    for n, extra in enumerate(spec.include):
        _check_run_options(extra.args, f"{where}: include.{n}.args")
        settings = _settings(extra.settings, f"{where}: `include.{n}.settings`")
        cell = Cell(extra.profile, 0, tuple(extra.bugs), tuple(extra.args), settings)
        per_seed.append((cell, extra.seeds or seeds))
    # Seed-major order: if the budget runs out, every cell has had its first seed.
    cells = [
        dataclasses.replace(cell, seed=seed)
        for seed in sorted({s for _, ss in per_seed for s in ss})
        for cell, ss in per_seed
        if seed in ss
    ]
    checks = tuple(ProjectCheck(c.name, tuple(c.command), c.timeout_s, tuple(c.needs))
                   for c in spec.project_checks)
    for n, check in enumerate(checks):
        if check.name in (c.name for c in checks[:n]):
            raise UsageError(f"{where}: `project_checks.{n}.name`: {check.name!r} is named "
                             "twice; give each check its own name (its log is named after it)")
    if not cells and not checks:
        raise UsageError(f"{where}: the matrix has no runs (no profiles, include or "
                         "project_checks)")
    return Matrix(
        cells=tuple(dict.fromkeys(cells)),  # a cell listed twice runs once
        time_limit_s=spec.time_limit_s,
        run_timeout_s=spec.run_timeout_s or 3 * spec.time_limit_s + 600,
        extra_args=tuple(spec.extra_args),
        jobs=spec.jobs,
        project_checks=checks,
    )


def load_matrix(path: Path | None) -> Matrix:
    path = path or DEFAULT_MATRIX
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise UsageError(f"cannot read the matrix {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"the matrix {path} is not a text file: {exc.reason}") from exc
    except yaml.YAMLError as exc:
        detail = " ".join(str(exc).split())  # YAML errors span lines; keep one
        raise UsageError(f"the matrix {path} is not valid YAML: {detail}") from exc
    return parse_matrix(doc, str(path))


def parse_seeds(text: str) -> frozenset[int]:
    """`--seeds 2,3` or `--seeds 2-3`: seeds 0 or above, listed or as ranges; an argparse
    type (the CLI turns its error into 254)."""
    seeds: set[int] = set()
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        if not (low.isdigit() and (not dash or high.isdigit())) or (dash and int(high) < int(low)):
            raise argparse.ArgumentTypeError(
                f"{text!r} is no list of seeds: give them as 2,3 or 2-3 (whole numbers from 0)")
        seeds.update(range(int(low), int(high or low) + 1))
    return frozenset(seeds)


def only_seeds(matrix: Matrix, seeds: frozenset[int]) -> Matrix:
    """The matrix's runs of these seeds (its project checks kept): a matrix's seeds spread
    over nights, one or two a night, as `--shard` spreads its cells over machines."""
    cells = tuple(c for c in matrix.cells if c.seed in seeds)
    if not cells:
        listed = ",".join(str(s) for s in sorted({c.seed for c in matrix.cells})) or "none"
        raise UsageError(f"--seeds {','.join(map(str, sorted(seeds)))}: the matrix has no run "
                         f"of these seeds (its seeds: {listed}); give some of those")
    return dataclasses.replace(matrix, cells=cells)
