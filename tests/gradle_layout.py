"""The artifacts a Gradle build of an example app makes, made without Gradle (none can be had
here: services.gradle.org is not reachable, and Debian's is Gradle 4.4.1, of 2017): the
`installDist` folder (`build/install/<app>/bin/<app>` and `lib/*.jar`) and a shadow jar.

The start scripts have the shapes of the two generations of Gradle's `application` plugin
scripts: `current` Gradle 7 and later (a `set -- \\` stack, the options through xargs),
`legacy` Gradle 4 to 6 (an `eval set -- ... -classpath "\\"$CLASSPATH\\""` line, the
arguments saved quoted). They are written here, short, with the mechanics that decide what
java runs; kchaos runs a start script rather than parsing it, so what it must get right
is what the script hands java.

Run as a script it makes the installDist of the windowed-count example for
docs/your-app.md: `python tests/gradle_layout.py DEST` prints the folder to give `--app`.
"""

from __future__ import annotations

import shutil
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script
    sys.path.insert(0, str(ROOT))

from harness.app.build import app_jars  # noqa: E402
from harness.maven import run_maven  # noqa: E402

EXAMPLES = ROOT / "workloads" / "app-examples"
EXAMPLE_APP = "windowed-count"
EXAMPLE_MAIN = "dev.kchaos.examples.WindowedCount"

# Our own scripts with the mechanics of each generation that decide what java gets (they
# are not Gradle's text): APP_HOME from the script's path, the classpath under it, java
# from JAVA_HOME or PATH, the JVM options word-split as that generation does, then exec.
CURRENT = r"""#!/bin/sh
# @APP@: Gradle 7+ shape (a `set --` stack; options split by xargs, quoted for eval)
APP_HOME=$(cd -P "$(dirname "$0")/.." > /dev/null && pwd) || exit 1
APP_BASE_NAME=$(basename "$0")
CLASSPATH=@CLASSPATH@
if [ -n "$JAVA_HOME" ]; then JAVACMD=$JAVA_HOME/bin/java; else JAVACMD=java; fi
DEFAULT_JVM_OPTS=@JVM_OPTS@
set -- \
@APPNAME@        -classpath "$CLASSPATH" \
        @MAIN@ \
        "$@"
options=$(printf '%s\n' "$DEFAULT_JVM_OPTS $JAVA_OPTS $@OPTS_VAR@" | xargs -n1 |
          sed 's~[^-[:alnum:]+,./:=@_]~\\&~g' | tr '\n' ' ')
eval "set -- $options" '"$@"'
exec "$JAVACMD" "$@"
"""

LEGACY = r"""#!/usr/bin/env sh
# @APP@: Gradle 4-6 shape (the arguments saved quoted; one `eval set --` line)
APP_HOME=$(cd "$(dirname "$0")/.." > /dev/null && pwd -P)
APP_BASE_NAME=$(basename "$0")
DEFAULT_JVM_OPTS=@JVM_OPTS@
CLASSPATH=@CLASSPATH@
if [ -n "$JAVA_HOME" ]; then JAVACMD="$JAVA_HOME/bin/java"; else JAVACMD="java"; fi
quoted () {
    for arg do printf '%s\n' "$arg" | sed "s/'/'\\\\''/g;1s/^/'/;\$s/\$/' \\\\/"; done
    echo " "
}
APP_ARGS=$(quoted "$@")
eval set -- $DEFAULT_JVM_OPTS $JAVA_OPTS $@OPTS_VAR@ @APPNAME@-classpath "\"$CLASSPATH\"" @MAIN@ "$APP_ARGS"
exec "$JAVACMD" "$@"
"""  # noqa: E501 (the eval line is one line in every such script)


def start_script(app: str, jars: Sequence[str], main: str, jvm_options: Sequence[str] = (),
                 legacy: bool = False, app_name_property: bool = False) -> str:
    """The start script Gradle writes for an app named `app` whose lib/ holds `jars` (in
    classpath order), its entry `main` (a class, or Gradle's `--module M/C` or `-jar "..."`)."""
    opts = " ".join(f'"{o}"' for o in jvm_options)
    appname = ""
    if app_name_property:
        appname = ('"\\"-Dorg.gradle.appname=$APP_BASE_NAME\\"" ' if legacy else
                   '        "-Dorg.gradle.appname=$APP_BASE_NAME" \\\n')
    return ((LEGACY if legacy else CURRENT)
            .replace("@CLASSPATH@", ":".join(f"$APP_HOME/lib/{j}" for j in jars))
            .replace("@JVM_OPTS@", f"'{opts}'" if opts else '""')
            .replace("@OPTS_VAR@", app.upper().replace("-", "_") + "_OPTS")
            .replace("@APPNAME@", appname).replace("@MAIN@", main).replace("@APP@", app))


def write_install(folder: Path, jars: Sequence[Path], main: str,
                  jvm_options: Sequence[str] = (), legacy: bool = False) -> Path:
    """An installDist folder `folder` (named as its app): lib/ holds `jars`, bin/ the start
    script naming them in this order and its Windows twin (which kchaos must pass over)."""
    (folder / "lib").mkdir(parents=True, exist_ok=True)
    (folder / "bin").mkdir(exist_ok=True)
    for jar in jars:
        shutil.copyfile(jar, folder / "lib" / jar.name)
    launcher = folder / "bin" / folder.name
    launcher.write_text(start_script(folder.name, [j.name for j in jars], main, jvm_options,
                                     legacy))
    launcher.chmod(0o755)
    (folder / "bin" / f"{folder.name}.bat").write_text("@rem the Windows start script\r\n")
    return folder


def example_jars(work: Path) -> list[Path]:
    """The example apps' jar, then Kafka Streams and what it brings, as Gradle's
    runtimeClasspath lists them for `implementation "org.apache.kafka:kafka-streams"`:
    the project's own jar first."""
    deps = work / "deps"
    if not deps.is_dir():
        deps.mkdir(parents=True)
        # compile scope takes the examples' provided kafka-streams with its dependencies
        run_maven(["-f", str(EXAMPLES / "pom.xml"), "dependency:copy-dependencies",
                   f"-DoutputDirectory={deps}", "-DincludeScope=compile"],
                  work / "deps.log", "copy the examples' dependencies")
    own = app_jars(str(EXAMPLES)).own
    return [*own, *sorted(deps.glob("*.jar"))]


def example_install(dest: Path, legacy: bool = False) -> Path:
    """`build/install/windowed-count` under `dest`, as `gradle installDist` makes it."""
    folder = dest / "build" / "install" / EXAMPLE_APP
    return write_install(folder, example_jars(dest / "work"), EXAMPLE_MAIN,
                         jvm_options=["-Xmx256m"], legacy=legacy)


def example_spec(dest: Path) -> Path:
    """The windowed count's spec naming no entry, as a user's would: the start script (or
    the shadow jar's Main-Class) says the main."""
    spec = dest / f"{EXAMPLE_APP}.yaml"
    lines = (EXAMPLES / f"{EXAMPLE_APP}.yaml").read_text().splitlines(keepends=True)
    spec.write_text("".join(line for line in lines if not line.startswith("app_main:")))
    return spec


def shadow_jar(jar: Path, parts: Sequence[Path], main: str) -> Path:
    """One jar of `parts`, as the Shadow plugin's shadowJar with mergeServiceFiles() makes
    it: the first copy of a class wins, META-INF/services files are joined, signatures and
    the parts' manifests dropped, a manifest naming `main`."""
    services: dict[str, list[str]] = {}
    seen = {"META-INF/MANIFEST.MF"}
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("META-INF/MANIFEST.MF", f"Manifest-Version: 1.0\nMain-Class: {main}\n")
        for part in parts:
            with zipfile.ZipFile(part) as archive:
                for info in archive.infolist():
                    name = info.filename
                    if name.startswith("META-INF/services/") and not info.is_dir():
                        lines = archive.read(name).decode().splitlines()
                        services.setdefault(name, []).extend(lines)
                    elif (name not in seen and not name.endswith((".SF", ".DSA", ".RSA"))
                          and name != "module-info.class"):
                        seen.add(name)
                        out.writestr(info, archive.read(name))
        for name, lines in services.items():
            out.writestr(name, "\n".join(dict.fromkeys(line for line in lines if line)) + "\n")
    return jar


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/gradle_layout.py DEST  (makes DEST/build/install/"
                 f"{EXAMPLE_APP})")
    print(example_install(Path(sys.argv[1]).resolve()))
