"""Docker cells of a nightly matrix (`--platform docker` in their options) need an engine:
where none answers they are not started, with the reason, and the rest of the matrix runs
(as the docker tests skip in `make test`). Bring one up for them with
`scripts/docker-engine.sh with kchaos nightly ...`."""

from __future__ import annotations

import dataclasses

from harness.errors import UsageError
from harness.nightly.matrix import Cell, Matrix
from harness.run.platforms import DEFAULT_PLATFORM, PLATFORMS


def platform_of(cell: Cell, matrix: Matrix) -> str:
    """The platform `kchaos run` would get from the matrix's and the cell's options."""

    return str(cell.setting("platform", matrix.extra_args) or DEFAULT_PLATFORM)


def without_docker_cells_if_no_engine(matrix: Matrix) -> tuple[Matrix, list[Cell], str]:
    """The matrix to run, the docker cells left out, and why (empty when none are)."""
    docker = [c for c in matrix.cells if PLATFORMS[platform_of(c, matrix)].needs_engine]
    if not docker:
        return matrix, [], ""
    from harness.platforms.docker_engine import require_engine

    try:
        require_engine()
    except UsageError as exc:
        kept = tuple(c for c in matrix.cells if c not in docker)
        return dataclasses.replace(matrix, cells=kept), docker, str(exc)
    return matrix, [], ""
