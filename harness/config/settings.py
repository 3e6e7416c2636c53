"""What a run setting is: one declaration that the CLI, `RunConfig`, the nightly's cells and
the help texts all read, in the spirit of Hypothesis's settings (each defined once with its
default, description and validator).

A setting is a `RunConfig` field declared with `setting(...)`: the field gives its name,
type and default; the declaration its help, its `kchaos run` option (or none: `--set`
only), the `Rule` its value keeps, and the SUT capability it needs. `settings_of` reads
them back as a table of `Setting`s (`harness.config.run.SETTINGS`), from which `kchaos run`
builds its options and their help (the default shown is the field's, the choices the
registry's), `--set` and a nightly cell type their values, and `validate` refuses a bad
value in one line. What ties two settings together (standbys and pods, the transaction
timeout and the commit interval) stays in `harness.config.run.validate`.

Before, a setting's type was written twice (the field and its option), its default three
times (the field, the option's help, sometimes the nightly), its choices twice (the help's
words and `validate`'s), and five options were parsed apart.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from harness.config.suts import SutKind, names_with
from harness.errors import UsageError

T = TypeVar("T")
# Where a field's declaration is kept in its metadata.
_DECLARED = "kchaos-setting"


@dataclass(frozen=True)
class Rule:
    """What a setting's value must be, said the same way in its help (`wants`, e.g.
    "at least 1") and in the refusal of a value that breaks it (`refuse`: e.g. "must be at
    least 1", None when it holds), a refused value as `shown` (quoted, where what was typed
    may be anything). Words are made when said: a registry's choices are the ones it has
    then."""

    wants: Callable[[], str]
    refuse: Callable[[Any], str | None]
    shown: Callable[[Any], str] = str


def at_least(low: int | float) -> Rule:
    return Rule(lambda: f"at least {low:g}",
                lambda value: None if value >= low else f"must be at least {low:g}")


def positive() -> Rule:
    return Rule(lambda: "positive", lambda value: None if value > 0 else "must be positive")


Choices = Iterable[Any] | Callable[[], Iterable[Any]]


def one_of(choices: Choices, what: str = "", describe: Mapping[Any, str] | None = None
           ) -> Rule:
    """A value among `choices` (a function: read when checked); `what` names them in the
    refusal ("the known switches"), `describe` gives some a few words in the help."""

    def names() -> list[Any]:
        return list(choices() if callable(choices) else choices)

    def wants() -> str:
        words = describe or {}
        return "one of " + ", ".join(f"{c}: {words[c]}" if c in words else str(c)
                                     for c in names())

    def refuse(value: Any) -> str | None:
        if value in names():
            return None
        return f"choose one of {what + ' ' if what else ''}{', '.join(map(str, names()))}"

    return Rule(wants, refuse)


@dataclass(frozen=True, kw_only=True)
class Declared:
    """What `setting(...)` declares beside the field's type and default."""

    help: str
    flag: str | None = None  # its `kchaos run` option; None: given by `--set NAME=VALUE` only
    rule: Rule | None = None  # for a list setting, what each item must be
    # The help's words for the default where its value says too little (spark_master's
    # None is local[*]); None: the value itself, or nothing for None, () and False.
    shown_default: str | None = None
    path: bool = False  # a file or folder: kept absolute, so a repro runs from anywhere
    sut_needs: str | None = None  # a `SutKind` capability the SUT must offer when it is set
    sut_why: str | None = None  # why, in the refusal ("judges the ledger app ...")


def setting(default: T, help: str, **declared: Any) -> T:
    """A `RunConfig` field: its default, and the rest of its declaration (`Declared`: a
    misspelt keyword fails when the module declaring the field is imported). Typed as its
    default, so that mypy sees the field as it is."""
    return dataclasses.field(default=default,
                             metadata={_DECLARED: Declared(help=help, **declared)})


@dataclass(frozen=True, kw_only=True)
class Setting(Declared):
    """One row of the table: a field's name, value type and default with its declaration."""

    name: str
    kind: type  # int, float, str or bool: a value's type, or each item's in a list
    many: bool  # a list (`tuple[str, ...]`): comma-separated on the command line
    default: Any

    def parse(self, text: str) -> Any:
        """The value of option text (`--pods 3`, `--bugs A,B`); ValueError if mistyped."""
        if self.many:
            return tuple(self.kind(item) for item in text.split(",") if item)
        if self.kind is bool:  # bool("false") is True
            said = text.strip().lower()
            if said not in ("true", "false"):
                raise ValueError(text)
            return said == "true"
        return self.kind(text)

    def said(self, value: Any) -> str:
        """The setting with a value as one gives it: `--pods 0`, `partitions=0`."""
        shown = self.rule.shown if self.rule is not None else str
        text = ",".join(map(shown, value)) if self.many else shown(value)
        return f"{self.flag} {text}" if self.flag else f"{self.name}={text}"

    def refusal(self, value: Any) -> str | None:
        """Why `value` is refused (one line naming the setting), None if its rule holds or
        it has none. None is never refused: it is "not given" (`str | None` settings)."""
        if self.rule is None or value is None:
            return None
        items = value if self.many else (value,)
        bad = [item for item in items if self.rule.refuse(item) is not None]
        if not bad:
            return None
        return f"{self.said(bad if self.many else value)}: {self.rule.refuse(bad[0])}"

    def checked(self, value: T) -> T:
        """`value`, or UsageError (one line) if the setting's rule refuses it."""
        refusal = self.refusal(value)
        if refusal is not None:
            raise UsageError(refusal)
        return value

    def sut_refusal(self, value: Any, sut: SutKind) -> str | None:
        """Why `value` is refused with `sut` (a setting of another SUT's), None if not."""
        if self.sut_needs is None or not value or getattr(sut, self.sut_needs):
            return None
        if self.sut_why is None:
            return f"{self.flag or self.name} needs {names_with(self.sut_needs)}"
        return f"{self.flag or self.name} {self.sut_why}: give {names_with(self.sut_needs)}"

    def help_text(self, what: str | None = None) -> str:
        """The option's help: what it is (`what`, else its own words), for which SUTs,
        what it must be, its default."""
        wants = self.rule.wants() if self.rule is not None else ""
        said = [wants] if wants else []
        unset = self.default is None or self.default is False or self.default == ()
        default = self.shown_default or (
            None if unset else f"{self.default:g}" if isinstance(self.default, float)
            else str(self.default))
        if default is not None:
            said.append(f"default {default}")
        text = what or self.help
        if self.sut_needs is not None:
            text = f"{names_with(self.sut_needs)}: {text}"
        return f"{text} ({'; '.join(said)})" if said else text


def _kind(hint: Any) -> tuple[type, bool]:
    """(a value's type, whether the setting is a list) of a field's type hint:
    `str | None` is a str setting whose default is "not given"; `tuple[str, ...]` a list."""
    if typing.get_origin(hint) is tuple:
        return typing.get_args(hint)[0], True
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    optional = typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1
    return (args[0] if optional else hint), False


def settings_of(cls: type) -> Mapping[str, Setting]:
    """Every field of the dataclass `cls` as a `Setting`, in field order; TypeError for a
    field declared without `setting(...)` (checked on import: none is left undocumented)."""
    hints = typing.get_type_hints(cls)
    table: dict[str, Setting] = {}
    for field in dataclasses.fields(cls):
        declared = field.metadata.get(_DECLARED)
        if not isinstance(declared, Declared):
            raise TypeError(f"{cls.__name__}.{field.name} is not declared with setting(...)")
        kind, many = _kind(hints[field.name])
        table[field.name] = Setting(
            name=field.name, kind=kind, many=many, default=field.default,
            **{f.name: getattr(declared, f.name) for f in dataclasses.fields(Declared)})
    return table
