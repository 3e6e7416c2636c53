"""Typed parameters, declared once with their types and defaults and checked when a plan is
made or loaded: the run settings a profile may set (`ProfileSettings`, for faults/plan.py)
and each fault kind's step parameters (a frozen dataclass per kind, `FaultKind.params` in
faults/kinds.py, which checks a step against it: `check_step`). A misspelt or mistyped key
is refused in one line that names it, where it was and the valid keys; before, it was
dropped or read as its default, and the run went on without a word (a misspelt
`keep_volume` kept the volume)."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, TypedDict, TypeVar, cast, get_args, get_origin


class ParamError(ValueError):
    """An unknown or mistyped step parameter or profile setting: the message is one line
    (the harness shows it as bad input, exit 254)."""


class ProfileSettings(TypedDict, total=False):
    """The run settings a profile may set (`faults.plan`: what a targeted profile or a mix
    needs, e.g. standbys), applied unless the user set them. Each is a field of
    `harness.config.run.RunConfig` of the very same type (checked when that module loads);
    what the run is (seed, bugs, platform, SUT, a cluster) is never a profile's."""

    pods: int
    threads: int
    standbys: int
    brokers: int
    partitions: int
    accounts: int
    rate: float
    duplicate_fraction: float
    time_limit_s: float
    drain_timeout_s: float
    guarantee: str | None
    restart: str
    commit_interval_ms: int
    write_buffer_bytes: int
    cleaner_delay_ms: int
    cleaner_interval_ms: int
    # Drawn by the broad profiles (faults/knobs.py); no profile sets them yet.
    session_timeout_ms: int
    transaction_timeout_ms: int
    max_poll_records: int
    restore_max_poll_records: int
    # When each store and window segment flushes (workloads/ledger/windowed.py): drawn by
    # the broad profiles; the segment profile pins them.
    write_buffer_count: int
    window_retention_ms: int
    window_segment_ms: int
    transactional_stores: bool


class Params(Protocol):
    """A fault kind's parameters: a frozen dataclass, one field a parameter."""

    __dataclass_fields__: ClassVar[dict[str, Any]]


P = TypeVar("P", bound=Params)


def type_name(hint: Any) -> str:
    origin = get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        return " | ".join(type_name(a) for a in get_args(hint))
    if origin is tuple:
        return f"list of {type_name(get_args(hint)[0])}"
    return "None" if hint is type(None) else str(getattr(hint, "__name__", hint))


def _convert(hint: Any, value: Any) -> tuple[bool, Any]:
    """(whether `value`, as JSON gives it, is of type `hint`; the value as that type)."""
    origin = get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        for option in get_args(hint):
            ok, converted = _convert(option, value)
            if ok:
                return True, converted
        return False, None
    if origin is tuple:  # tuple[X, ...]: a JSON list
        if not isinstance(value, list | tuple):
            return False, None
        items = [_convert(get_args(hint)[0], item) for item in value]
        return all(ok for ok, _ in items), tuple(item for _, item in items)
    if hint is type(None):
        return value is None, None
    if hint is bool:
        return isinstance(value, bool), value
    if hint is int:  # JSON's true is no count
        return isinstance(value, int) and not isinstance(value, bool), value
    if hint is float:  # an int is a float (JSON writes 300.0 as given, or 300)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return ok, float(value) if ok else None
    if hint is str:
        return isinstance(value, str), value
    raise TypeError(f"no check for parameters of type {type_name(hint)}")


def _check(hints: Mapping[str, Any], raw: object, where: str, noun: str, valid: str
           ) -> dict[str, Any]:
    """`raw`'s values as their declared types; ParamError for an unknown key or a value of
    another type (one line: `where`, the key, a close match, `valid`)."""
    if not isinstance(raw, Mapping):
        raise ParamError(f"{where}: the {noun}s must be a JSON object, not "
                         f"{type(raw).__name__} {raw!r}; {valid}")
    unknown = [str(key) for key in raw if key not in hints]
    if unknown:
        said = []
        for key in unknown:
            close = difflib.get_close_matches(key, list(hints), n=1)
            said.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        plural = "s" if len(unknown) > 1 else ""
        raise ParamError(f"{where}: unknown {noun}{plural} {', '.join(said)}; {valid}")
    values = {}
    for key, value in raw.items():
        ok, values[key] = _convert(hints[key], value)
        if not ok:
            raise ParamError(f"{where}: {noun} {key} must be {type_name(hints[key])}, not "
                             f"{type(value).__name__} {value!r}; {valid}")
    return values


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def check_settings(raw: object, profile: str) -> ProfileSettings:
    """A profile's run settings, checked against `ProfileSettings` (values as given)."""
    valid = f"a profile may set {', '.join(sorted(_hints(ProfileSettings)))}"
    _check(_hints(ProfileSettings), raw, f"profile {profile}", "run setting", valid)
    return cast(ProfileSettings, dict(cast(Mapping[str, Any], raw)))


def _shown(default: object) -> object:
    return list(default) if isinstance(default, tuple) else default  # as plan.json has it


def describe(cls: type[Params], kind: str) -> str:
    """What the kind takes, e.g. `move takes keep_volume: bool = True, node: ...`."""
    said = [f"{f.name}: {type_name(_hints(cls)[f.name])}"
            + ("" if f.default is dataclasses.MISSING else f" = {_shown(f.default)!r}")
            for f in dataclasses.fields(cls)]
    return f"{kind} takes {', '.join(said)}" if said else f"{kind} takes no parameters"


def parse(cls: type[P], raw: object, kind: str, where: str) -> P:
    """A step's parameters (`raw`, as in plan.json) as the kind's `cls`, its defaults for
    those left out; ParamError (one line) for an unknown key or a mistyped value."""
    values = _check(_hints(cls), raw, where, "parameter", describe(cls, kind))
    return cls(**values)


# -- the fault kinds' parameters (faults/kinds.py: `FaultKind.params`) ---------------------


@dataclasses.dataclass(frozen=True)
class NoParams:
    """A kind that takes no parameters."""


@dataclasses.dataclass(frozen=True)
class KillParams:
    down: bool = False  # a machine crash: held down until the heal, not restarted


@dataclasses.dataclass(frozen=True)
class MoveParams:
    keep_volume: bool = True  # False: the pod starts on its new node with an empty volume
    node: str | None = None  # None: the node after the pod's


@dataclasses.dataclass(frozen=True)
class ScaleOutParams:
    node: str | None = None  # None: the nodes in turn


@dataclasses.dataclass(frozen=True)
class DelayCheckpointParams:
    ms: int = 2000
    reasons: tuple[str, ...] = ()  # empty: every write


@dataclasses.dataclass(frozen=True)
class TruncateGlobalParams:
    live: bool = False


# Where the I/O faults aim by default: the checkpoint files (write, fsync and rename of
# `.checkpoint.tmp` -> `.checkpoint`), the checkpoint delay without a hook in the process.
IO_PATTERN = "*.checkpoint*"


@dataclasses.dataclass(frozen=True)
class IoDelayParams:  # a faults.faultfs.rules.Rule: `ops` on paths matching `pattern`
    ms: int = 1500
    ops: tuple[str, ...] = ("fsync", "rename")
    pattern: str = IO_PATTERN
    error: str | None = None  # EIO or ENOSPC after the delay


@dataclasses.dataclass(frozen=True)
class IoErrorParams:
    error: str = "EIO"  # or ENOSPC
    ops: tuple[str, ...] = ("write", "fsync")
    pattern: str = IO_PATTERN
    ms: int = 0  # a delay before the error


@dataclasses.dataclass(frozen=True)
class NetemParams:
    delay_ms: int = 0  # each direction
    jitter_ms: int = 0
    loss_pct: float = 0.0


@dataclasses.dataclass(frozen=True)
class ClockParams:  # faults/clock.py: the pod's wall clock off the true time until the heal
    jump_s: float = 0.0  # a step at once: + ahead, - behind
    rate: float = 1.0  # then running this fast (0.5: half speed; 3.0: three times)
