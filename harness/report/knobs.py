"""The knobs table of a run's report: every setting a broad profile may draw from the seed
(faults/knobs.py), its value in this run, what it is when nothing is drawn, and whether
it was drawn, given (an option), or is the default. Read from run.json's config only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from faults import knobs
from harness.config.drawn import knob_default
from harness.errors import UsageError


@dataclass(frozen=True)
class KnobRow:
    name: str
    value: str
    default: str
    source: str  # drawn | given | default
    why: str  # where the knob's range comes from

    @property
    def unusual(self) -> bool:
        """Away from the value a run that draws nothing has."""
        return self.value != self.default


def knob_rows(config: Mapping[str, Any] | None) -> list[KnobRow]:
    """One row per knob, the drawn ones first; none for a run.json without a config."""
    if not isinstance(config, Mapping):
        return []
    profile = str(config.get("profile", ""))
    drawn = set(config.get("drawn_knobs") or ())
    rows = []
    for knob in knobs.KNOBS:
        if knob.name not in config:
            continue  # a run from before the knob existed
        try:
            default = knob_default(profile, knob.name)
        except UsageError:  # a profile this kchaos does not know
            default = "?"
        value = config[knob.name]
        source = ("drawn" if knob.name in drawn
                  else "default" if value == default else "given")
        rows.append(KnobRow(knob.name, str(value), str(default), source, knob.why))
    return sorted(rows, key=lambda r: r.source != "drawn")


def knobs_note(config: Mapping[str, Any] | None) -> str:
    profile = str((config or {}).get("profile", ""))
    if knobs.draws(profile):
        return (f"Profile {profile} draws these settings from the seed (faults/knobs.py); "
                "options given on the command line win.")
    return f"Profile {profile} draws no setting: each is its default or was given."
