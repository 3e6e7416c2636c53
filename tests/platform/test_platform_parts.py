"""Each platform names its preflight and its clean-up (harness.platforms.PARTS): `kchaos
clean` cleans what every platform left (docker's containers, volumes and networks labelled
with the run included), and the nightly leaves out the cells whose platform cannot run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import docker
import pytest

from harness.cli import main
from harness.errors import UsageError
from harness.nightly import parse_matrix
from harness.nightly.engine import without_docker_cells_if_no_engine
from harness.platforms import PARTS, PlatformParts, docker_engine
from harness.platforms.docker_specs import LABEL_RUN


class _Thing:
    def __init__(self, name: str, run: str, gone: list[str]) -> None:
        self.name, self.labels, self._gone = name, {LABEL_RUN: run}, gone

    def remove(self, **_: Any) -> None:
        self._gone.append(self.name)


class _Collection:
    def __init__(self, things: list[_Thing]) -> None:
        self.things = things

    def list(self, filters: dict[str, str], **_: Any) -> list[_Thing]:
        key, _, value = filters["label"].partition("=")
        return [t for t in self.things if t.labels.get(key) == value]


class _Engine:
    """The docker SDK's client, as much as clean_runs uses."""

    def __init__(self, gone: list[str]) -> None:
        self.containers = _Collection([_Thing("kchaos-r1-pod-0-1", "r1", gone),
                                       _Thing("kchaos-r2-pod-0-1", "r2", gone)])
        self.volumes = _Collection([_Thing("kchaos-r1-pod-0", "r1", gone)])
        self.networks = _Collection([_Thing("kchaos-r1", "r1", gone)])

    def ping(self) -> bool:
        return True

    def close(self) -> None:
        pass


def test_docker_clean_removes_only_what_the_given_runs_left(
        monkeypatch: pytest.MonkeyPatch) -> None:
    gone: list[str] = []
    monkeypatch.setattr(docker, "from_env", lambda **_: _Engine(gone))
    removed = docker_engine.clean_runs({"r1"})
    assert removed == gone == ["kchaos-r1-pod-0-1", "kchaos-r1-pod-0", "kchaos-r1"]


def test_docker_clean_is_nothing_where_no_engine_answers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_engine(**_: Any) -> Any:
        raise docker.errors.DockerException("no engine")

    monkeypatch.setattr(docker, "from_env", no_engine)
    assert docker_engine.clean_runs({"r1"}) == []


def test_kchaos_clean_asks_every_platform(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    asked: dict[str, list[Path]] = {}

    def cleaner(name: str) -> Any:
        def clean(folders: Any) -> list[str]:
            asked[name] = list(folders)
            return [f"{name} cleaned"]
        return clean

    for name, parts in list(PARTS.items()):
        monkeypatch.setitem(PARTS, name, PlatformParts(parts.open, parts.preflight,
                                                       cleaner(name)))
    run = tmp_path / "results" / "20261128T000000-all-s1"
    run.mkdir(parents=True)
    assert main(["--results-dir", str(tmp_path / "results"), "clean", str(run)]) == 0
    assert asked == {name: [run] for name in PARTS}
    out = capsys.readouterr().out
    assert all(f"{name} cleaned" in out for name in PARTS)


def test_the_nightly_leaves_out_cells_whose_platform_fails_its_preflight(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> None:
        raise UsageError("no Docker engine answers")

    docker_parts = PARTS["docker"]
    monkeypatch.setitem(PARTS, "docker", PlatformParts(docker_parts.open, refuse,
                                                       docker_parts.clean))
    matrix = parse_matrix({"profiles": ["kill"], "seeds": [1], "include": [
        {"profile": "all", "settings": {"platform": "docker"}}]})
    kept, left_out, why = without_docker_cells_if_no_engine(matrix)
    assert [c.profile for c in kept.cells] == ["kill"]
    assert [c.profile for c in left_out] == ["all"] and why == "no Docker engine answers"
