"""Where kchaos enters a user's app (docs/your-app.md, "What your app provides"): a method
returning its Topology (`--app-class CLASS[#METHOD]`), or its own `main` (`--app-main
CLASS`, `--app-args "..."`, default the jar's Main-Class), taken over at the KafkaStreams
constructor by the launcher's Java agent. The shapes are checked here, before a run folder
exists; what only the app's classes can say (no such method, a main that builds no
KafkaStreams) the launcher says when it describes the app.
"""

from __future__ import annotations

import re
import shlex
import zipfile
from dataclasses import dataclass
from pathlib import Path

from harness.app.boot import manifest_attributes
from harness.app.spec import InputSpec
from harness.errors import UsageError

JAVA_NAME = r"[A-Za-z_$][\w$]*"
CLASS_NAME = re.compile(rf"^{JAVA_NAME}(\.{JAVA_NAME})*$")


@dataclass(frozen=True)
class Entry:
    """One way into the app: `app_class` (CLASS or CLASS#METHOD) or `app_main` with its
    arguments."""

    app_class: str | None = None
    app_main: str | None = None
    app_args: tuple[str, ...] = ()

    @property
    def is_main(self) -> bool:
        return self.app_main is not None

    @property
    def name(self) -> str:
        return f"{self.app_main}.main" if self.app_main else str(self.app_class)

    def launcher_args(self) -> list[str]:
        """The launcher's flags naming this entry (pod, describe, reference)."""
        if self.app_main is None:
            return ["--app-class", str(self.app_class)]
        return ["--app-main", self.app_main,
                *[arg for a in self.app_args for arg in ("--app-arg", a)]]

    def to_json(self) -> dict[str, object]:
        return {"app_class": self.app_class, "app_main": self.app_main,
                "app_args": list(self.app_args)}


def check_entry(app_class: str | None, app_main: str | None, app_args: str | None) -> None:
    """UsageError for an entry that cannot be right whatever the app holds."""
    if app_class and app_main:
        raise UsageError("give one of --app-class CLASS[#METHOD] (a method returning the "
                         "Topology) and --app-main CLASS (the app's own main), not both")
    if app_args is not None and app_class:  # (with neither, the jar's Main-Class takes them)
        raise UsageError("--app-args are the arguments of the app's main: give --app-main "
                         "CLASS (or drop --app-class for the jar's Main-Class)")
    split_args(app_args)
    if app_class:
        owner, _, method = app_class.partition("#")
        if not CLASS_NAME.match(owner) or ("#" in app_class and not re.fullmatch(JAVA_NAME,
                                                                                  method)):
            raise UsageError(f"--app-class {app_class}: give CLASS or CLASS#METHOD, a class's "
                             f"full name (com.example.MyApp) and a method's name")
    if app_main and not CLASS_NAME.match(app_main):
        raise UsageError(f"--app-main {app_main}: give a class's full name "
                         f"(com.example.MyApp), the one whose main starts the app")


def split_args(app_args: str | None) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(app_args or ""))
    except ValueError as exc:
        raise UsageError(f"--app-args {app_args}: not shell-quoted words ({exc})") from exc


def main_class(jar: Path) -> str | None:
    """The Main-Class of a jar's manifest, if it names one."""
    try:
        with zipfile.ZipFile(jar) as archive:
            return manifest_attributes(archive).get("Main-Class") or None
    except (OSError, zipfile.BadZipFile):
        return None


def resolve_entry(app_class: str | None, app_main: str | None, app_args: str | None,
                  spec: InputSpec, own_jars: tuple[Path, ...],
                  script_main: str | None = None) -> Entry:
    """The entry a run uses: the options', else the spec's (app_class, or app_main with its
    app_args), else the main an installDist's start script names, else the main of the
    app's jar's Main-Class."""
    args = split_args(app_args)
    if app_main:
        return Entry(app_main=app_main, app_args=args)
    if app_class:
        return Entry(app_class=app_class)
    if spec.app_main:
        return Entry(app_main=spec.app_main,
                     app_args=args if app_args is not None else split_args(spec.app_args))
    if spec.app_class and app_args is None:
        return Entry(app_class=spec.app_class)
    if script_main:
        return Entry(app_main=script_main, app_args=args)
    if not own_jars:
        raise UsageError("--app is a folder of jars and names no main: give --app-main CLASS "
                         "(the app's main) or --app-class CLASS[#METHOD] (a method returning "
                         "its Topology)")
    for jar in own_jars:
        found = main_class(jar)
        if found:
            return Entry(app_main=found, app_args=args)
    names = ", ".join(j.name for j in own_jars)
    raise UsageError(f"{names} names no Main-Class in its manifest: give --app-main CLASS (the "
                     f"app's main) or --app-class CLASS[#METHOD] (a method returning its Topology)")
