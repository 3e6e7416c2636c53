"""Systems under test: what runs in the pods. Each is a module here implementing
`SystemUnderTest` (base.py), named with what it offers in harness/run/suts.py; `open_sut`
builds a run's from its settings."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from harness.run.protocol import refuse_kstreams
from harness.run.suts import SUT_KINDS
from harness.sut.base import PodPaths, PodSettings, SystemUnderTest, refuse_plan

if TYPE_CHECKING:
    from harness.run.config import RunConfig

__all__ = ["PodPaths", "PodSettings", "SystemUnderTest", "open_sut", "refuse_plan"]


def open_sut(config: RunConfig) -> SystemUnderTest:
    """The run's SUT, from its settings (validate() has checked the name and which options
    it takes); UsageError for what only the SUT can judge (a release, an app, a release
    that cannot take the run's rebalance protocol)."""
    module, _, name = SUT_KINDS[config.sut].implementation.partition(":")
    sut: SystemUnderTest = getattr(importlib.import_module(module), name).from_config(config)
    refuse_kstreams(config.group_protocol, sut.version)
    return sut
