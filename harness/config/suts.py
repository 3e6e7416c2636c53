"""The systems under test kchaos knows, and what each one offers.

Pure data, read by the run's settings (which options a SUT takes), the CLI's help, the
workload's choice, the reports (whose runs have an expected verdict) and bisect. A new SUT
is its module in harness/sut/, one entry here and its loader in `harness.sut.LOADERS`
(typed: mypy checks the class against `SystemUnderTest`): the settings cannot import the
SUTs, which are built from them.
"""

from __future__ import annotations

from dataclasses import dataclass

from common.guarantees import EXACTLY_ONCE_V2


@dataclass(frozen=True)
class SutKind:
    name: str
    summary: str  # a few words for --help
    bug_switches: bool = False  # takes --bugs (the Python worker's switches): its runs
    # without any are expected valid, so a red one is a false alarm
    releases: bool = False  # takes --kstreams-version and --streams-config
    ledger_oracle: bool = False  # takes --oracle beside the ledger's checks
    bisect: bool = False  # `kchaos bisect` replays its runs on other releases
    user_app: bool = False  # takes --app, --app-class, --input; its workload is the app's
    needs_java: bool = False  # a JDK on this machine, before the run folder exists
    streams_protocol: bool = False  # takes --group-protocol streams (KIP-1071)
    ledger_windows: bool = False  # keeps the ledger's windows and sessions (judged too)
    # The guarantee its pods run with where the run gives none: kchaos's exactly-once for the
    # worker and the ledger app; None for an app, which runs with its own, else Kafka
    # Streams' default (harness/app/guarantee.py).
    default_guarantee: str | None = EXACTLY_ONCE_V2


SUT_KINDS: dict[str, SutKind] = {kind.name: kind for kind in (
    SutKind("python", "kchaos's Python worker",
            bug_switches=True),
    SutKind("kstreams", "the ledger app on Apache Kafka Streams", releases=True, ledger_oracle=True,
            bisect=True, needs_java=True, streams_protocol=True, ledger_windows=True),
    SutKind("app", "your own Kafka Streams app",
            releases=True, user_app=True, needs_java=True, streams_protocol=True,
            default_guarantee=None),
)}
DEFAULT_SUT = "python"


def sut_kind(name: str) -> SutKind:
    """The kind of a recorded run's SUT; an unknown name (a run of a newer kchaos) is
    treated as offering nothing."""
    return SUT_KINDS.get(name) or SutKind(name, name)


def names_with(capability: str) -> str:
    """`--sut A or B` for the SUTs that offer `capability` (a SutKind field)."""
    return " or ".join(f"--sut {k.name}" for k in SUT_KINDS.values() if getattr(k, capability))
