"""A Gradle build's artifacts as `--app` (docs/your-app.md, "The dependencies your app has"):
the folder `installDist` writes (`build/install/<app>`: `bin/<app>`, the `application`
plugin's start script, and `lib/*.jar`) and a plain folder of jars.

The start script is the one place that says the app's classpath, in Gradle's order, and its
main class. Gradle has shipped more than one template for it (an `eval set -- ...
-classpath "\\"$CLASSPATH\\"" MAIN "$APP_ARGS"` line up to Gradle 7, a `set -- \\` stack
since, a `--module` or `-jar` entry in place of the class), and a build may supply its own.
Rather than parse one of them, kchaos runs the script with a stand-in `java` that writes
down the command line it was handed: whatever template wrote the script, what it would run
is what kchaos reads. No JVM starts and nothing of the app runs.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.app.entry import main_class
from harness.errors import UsageError

# The stand-in `java`: each argument it is given, NUL-terminated, into the file the
# environment names (not stdout: Gradle 4's `warn` writes there).
STAND_IN_JAVA = '#!/bin/sh\nfor arg do printf \'%s\\0\' "$arg"; done > "$KCHAOS_JAVA_ARGS"\n'
SCRIPT_TIMEOUT_S = 20.0
# Options of `java` that take the next argument as their value.
CLASSPATH_OPTIONS = ("-cp", "-classpath", "--class-path")
VALUED_OPTIONS = ("-p", "--module-path", "--add-modules", "--upgrade-module-path")
# The property every Gradle script sets to its own name: not one of the app's options.
APP_NAME_PROPERTY = "-Dorg.gradle.appname="


@dataclass(frozen=True)
class StartCommand:
    """What a start script would run: its JVM options, classpath (in its order) and main
    class (an executable jar's Main-Class for a `-jar` script)."""

    main: str
    classpath: tuple[Path, ...]
    jvm_options: tuple[str, ...] = ()


def is_install_folder(folder: Path) -> bool:
    """An `installDist` layout: jars in lib/ and a start script in bin/."""
    return bool(list(folder.glob("lib/*.jar"))) and bool(_scripts(folder))


def is_gradle_project(folder: Path) -> bool:
    return any((folder / name).is_file() for name in
               ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"))


def gradle_project_hint(folder: Path) -> str:
    """The one line for `--app` naming a Gradle project: kchaos runs no Gradle."""
    built = sorted(p for p in folder.glob("build/install/*") if is_install_folder(p))
    where = str(built[0]) if len(built) == 1 else f"{folder}/build/install/<app>"
    return (f"--app {folder}: a Gradle project; kchaos does not run Gradle: run `gradle "
            f"installDist` and give --app {where}, or give the shadow jar (build/libs/*-all.jar)")


def _scripts(folder: Path) -> list[Path]:
    bin_dir = folder / "bin"
    if not bin_dir.is_dir():
        return []
    return sorted(p for p in bin_dir.iterdir() if p.is_file() and p.suffix.lower() != ".bat")


def start_script(folder: Path) -> Path:
    """The folder's start script: bin/<folder name>, else the only one in bin/."""
    scripts = _scripts(folder)
    named = [s for s in scripts if s.name == folder.name]
    if named:
        return named[0]
    if len(scripts) == 1:
        return scripts[0]
    raise UsageError(f"--app {folder}: bin/ holds {len(scripts)} start scripts "
                     f"({', '.join(s.name for s in scripts)}) and none is named {folder.name}; "
                     f"give --app-main CLASS with --app {folder}/lib")


def read_start_script(script: Path) -> StartCommand:
    """Run `script` with the stand-in java and read what it would have run."""
    with tempfile.TemporaryDirectory(prefix="kchaos-start-script-") as scratch:
        java = Path(scratch) / "bin" / "java"
        java.parent.mkdir()
        java.write_text(STAND_IN_JAVA)
        java.chmod(0o755)
        handed = Path(scratch) / "args"
        # A bare environment: the user's JAVA_OPTS or <APP>_OPTS are no part of the app.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "JAVA_HOME": scratch,
               "KCHAOS_JAVA_ARGS": str(handed)}
        try:
            done = subprocess.run(["sh", str(script.resolve())], env=env, cwd=scratch,
                                  capture_output=True, text=True, timeout=SCRIPT_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise UsageError(f"--app: the start script {script} did not reach its java within "
                             f"{SCRIPT_TIMEOUT_S:.0f} s; give --app-main CLASS with "
                             f"--app {script.parent.parent / 'lib'}") from None
        if done.returncode != 0 or not handed.exists():
            last = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines()
                    or ["no output"])[-1]
            raise UsageError(f"--app: the start script {script} ran no java (exit "
                             f"{done.returncode}: {last}); give --app-main CLASS with "
                             f"--app {script.parent.parent / 'lib'}")
        argv = handed.read_bytes().decode("utf-8", "replace").split("\0")[:-1]
    return command_of(argv, script)


def command_of(argv: list[str], script: Path) -> StartCommand:
    """The JVM options, classpath and main of a java command line."""
    options: list[str] = []
    classpath: list[Path] = []
    jar: Path | None = None
    args = iter(argv)
    for arg in args:
        if arg in CLASSPATH_OPTIONS:
            classpath = [Path(p) for p in next(args, "").split(os.pathsep) if p]
        elif arg in ("--module", "-m") or arg.startswith("--module="):
            raise UsageError(f"--app: the start script {script} runs a module ({arg} ...); "
                             f"kchaos runs an app from the classpath: give --app-main CLASS "
                             f"with --app {script.parent.parent / 'lib'}")
        elif arg == "-jar":
            jar = Path(next(args, ""))
            break
        elif arg in VALUED_OPTIONS:
            next(args, None)
        elif arg.startswith("-"):
            if not arg.startswith(APP_NAME_PROPERTY):
                options.append(arg)
        else:
            return _checked(StartCommand(arg, tuple(classpath), tuple(options)), script)
    if jar is not None:
        main = main_class(jar)
        if main is None:
            raise UsageError(f"--app: the start script {script} runs {jar.name}, whose "
                             f"manifest names no Main-Class; give --app-main CLASS")
        return _checked(StartCommand(main, (jar, *classpath), tuple(options)), script)
    raise UsageError(f"--app: the start script {script} names no main class; give "
                     f"--app-main CLASS with --app {script.parent.parent / 'lib'}")


def _checked(command: StartCommand, script: Path) -> StartCommand:
    missing = [p for p in command.classpath if not p.exists()]
    if missing:
        raise UsageError(f"--app: the start script {script} puts {missing[0]} on the classpath "
                         f"and it is not there: run `gradle installDist` again")
    if not command.classpath:
        raise UsageError(f"--app: the start script {script} gives java no classpath; give "
                         f"--app-main CLASS with --app {script.parent.parent / 'lib'}")
    return command
