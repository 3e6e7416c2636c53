"""Docker cells of a nightly matrix (`--platform docker` in their options) need an engine:
where none answers they are not started, with the reason, and the rest of the matrix runs
(as the docker tests skip in `make test`). Bring one up for them with
`scripts/docker-engine.sh with kchaos nightly ...`."""

from __future__ import annotations

import dataclasses

from harness.config.platforms import DEFAULT_PLATFORM
from harness.errors import UsageError
from harness.nightly.matrix import Cell, Matrix


def platform_of(cell: Cell, matrix: Matrix) -> str:
    """The platform `kchaos run` would get from the matrix's and the cell's options."""

    return str(cell.setting("platform", matrix.extra_args) or DEFAULT_PLATFORM)


def without_docker_cells_if_no_engine(matrix: Matrix) -> tuple[Matrix, list[Cell], str]:
    """The matrix to run, the cells left out and why (empty when none are): those whose
    platform's preflight (harness.platforms.PARTS) fails here, docker's without an engine."""
    from harness.platforms import PARTS

    why: dict[str, str] = {}
    for name in sorted({platform_of(c, matrix) for c in matrix.cells}):
        try:
            PARTS[name].preflight()
        except UsageError as exc:
            why[name] = str(exc)
    left_out = [c for c in matrix.cells if platform_of(c, matrix) in why]
    if not left_out:
        return matrix, [], ""
    kept = tuple(c for c in matrix.cells if c not in left_out)
    return dataclasses.replace(matrix, cells=kept), left_out, "; ".join(why.values())
