"""What a run drew and what each drawn setting is where nothing is drawn: plan.json's
`knobs`, the report's knob table and the shrink, which tries a failing run with its draws
undone (faults/knobs.py draws them from the seed; harness/config/run.py resolves them)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from common.guarantees import EXACTLY_ONCE_V2
from faults import knobs
from harness.config.run import RunConfig, profile_settings


def undrawn(config: RunConfig) -> RunConfig:
    """`config` with every drawn knob at the value it has when nothing is drawn (the
    profile's setting, or RunConfig's default)."""
    return replace(config, drawn_knobs=(),
                   **{name: knob_default(config.profile, name) for name in config.drawn_knobs})


def knobs_section(config: RunConfig) -> dict[str, Any]:
    """plan.json's `knobs`: whether the profile draws, each drawn setting's value and the
    value it has when nothing is drawn (the report and the shrink read run.json's config,
    which holds the same values)."""
    return {
        "profile_draws": knobs.draws(config.profile),
        "drawn": {name: getattr(config, name) for name in config.drawn_knobs},
        "defaults": {name: knob_default(config.profile, name) for name in config.drawn_knobs},
    }


# A knob whose setting's default is "not given", as the value that stands for where knobs
# are drawn: the guarantee is drawn for the worker and the ledger app only (never an app's,
# `resolve`), whose default it is.
KNOB_UNSET_MEANS: dict[str, Any] = {"guarantee": EXACTLY_ONCE_V2}


def knob_default(profile: str, name: str) -> Any:
    """What setting `name` is in a run of `profile` that draws nothing."""
    settings: dict[str, Any] = dict(profile_settings(profile))
    return settings.get(name, KNOB_UNSET_MEANS.get(name, getattr(RunConfig, name)))
