"""Storage faults where the fault filesystem cannot be: one line, exit 254, before any run."""

from __future__ import annotations

import pytest

from harness.errors import UsageError
from harness.platforms import faultfs as faultfs_module
from harness.platforms import require_platform


def test_docker_refuses_storage_faults() -> None:
    with pytest.raises(UsageError, match=r"--platform docker cannot apply power-loss.*local"):
        require_platform("docker", iter(["kill", "power-loss"]))


def test_missing_fusermount_is_bad_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faultfs_module.shutil, "which", lambda name: None)
    with pytest.raises(UsageError, match="apt-get install fuse3"):
        require_platform("local", iter(["io-error"]))


def test_plans_without_storage_faults_need_no_fuse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faultfs_module.shutil, "which", lambda name: None)
    require_platform("local", iter(["kill", "move"]))  # the default path: as before
