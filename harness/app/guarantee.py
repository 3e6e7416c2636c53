"""Which processing guarantee an app's pods run with, and whose choice it is (issue 52,
"run as configured"; docs/your-app.md, "The guarantee").

An app runs with the guarantee it is deployed with: its own `processing.guarantee` (what its
main built, read when kchaos describes the app: harness/sut/app.py), else Kafka Streams'
default, at-least-once. kchaos's own exactly-once default is the worker's and the ledger
app's, never an app's. The run overrides it only where told to: `--guarantee`, or
`processing.guarantee` in `--streams-config` (the two must agree) or in the input spec's
`config`. The oracle chooses its judgments by the result (checker/oracle/alos.py under
at-least-once), so the run records both the value and whose it was.

Pure: the settings in, the choice out; the pods are given it by UserApp.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from common.guarantees import KAFKA_STREAMS_DEFAULT
from harness.errors import UsageError

GUARANTEE = "processing.guarantee"

# Whose choice the guarantee was, as run.json, meta.json, results.json and the report say.
ChosenBy = Literal["--streams-config", "--guarantee", "input spec", "app",
                   "kafka-streams default"]
BY_STREAMS_CONFIG: ChosenBy = "--streams-config"
BY_RUN: ChosenBy = "--guarantee"
BY_SPEC: ChosenBy = "input spec"
BY_APP: ChosenBy = "app"
BY_KAFKA_STREAMS: ChosenBy = "kafka-streams default"


@dataclass(frozen=True)
class ChosenGuarantee:
    """The guarantee an app's pods run with and whose choice it was."""

    guarantee: str
    chosen_by: ChosenBy

    @property
    def overrides_app(self) -> bool:
        """Whether the pods must be told it over what the app and its spec say: only the
        run's `--guarantee` (a `--streams-config` is passed to the pods last already)."""
        return self.chosen_by == BY_RUN

    def to_json(self) -> dict[str, str]:
        return {"guarantee": self.guarantee, "guarantee_chosen_by": self.chosen_by}


def last_setting(settings: Sequence[str], key: str) -> str | None:
    """The value of `key` in KEY=VALUE settings, the last one winning (as the launcher
    applies them); None where none sets it."""
    found = None
    for setting in settings:
        name, sep, value = setting.partition("=")
        if sep and name.strip() == key:
            found = value.strip()
    return found


def choose_guarantee(given: str | None, run_config: Sequence[str], spec_config: Sequence[str],
                     app_config: Mapping[str, str]) -> ChosenGuarantee:
    """The guarantee of an app run: the run's `--streams-config`, else `given` (the run's
    `--guarantee`; None when not given), else the input spec's config, else the app's own
    setting, else Kafka Streams' default. UsageError when `--guarantee` and
    `--streams-config` say two different ones."""
    said = last_setting(run_config, GUARANTEE)
    if said is not None:
        if given is not None and given != said:
            raise UsageError(f"--guarantee {given} and --streams-config {GUARANTEE}={said} "
                             f"disagree: give one of them")
        return ChosenGuarantee(said, BY_STREAMS_CONFIG)
    if given is not None:
        return ChosenGuarantee(given, BY_RUN)
    spec = last_setting(spec_config, GUARANTEE)
    if spec is not None:
        return ChosenGuarantee(spec, BY_SPEC)
    own = app_config.get(GUARANTEE)
    if own is not None and own.strip():
        return ChosenGuarantee(own.strip(), BY_APP)
    return ChosenGuarantee(KAFKA_STREAMS_DEFAULT, BY_KAFKA_STREAMS)
