"""Gradle's artifacts as `--app` (harness/app/gradle.py): the start script of an installDist,
in the shapes of Gradle 7+ and Gradle 4-6 (tests/gradle_layout.py), is read for
its classpath order, main and JVM options; `-jar` and `--module` entries; which folder is
which kind; bad folders are one line, exit 254, before a run folder exists."""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from gradle_layout import start_script, write_install
from refused_run import refused_run

from harness.app.build import app_jars, folder_kind
from harness.app.entry import resolve_entry
from harness.app.gradle import read_start_script
from harness.app.spec import read_spec
from harness.errors import UsageError

SPEC_TEXT = "topics: [{name: words, value: '{w}', fields: {w: [a, b]}}]\n"
MAIN = "org.example.WordApp"


def jar(path: Path, main: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        manifest = "Manifest-Version: 1.0\n" + (f"Main-Class: {main}\n" if main else "")
        archive.writestr("META-INF/MANIFEST.MF", manifest)
    return path


def install(tmp_path: Path, jvm_options: Sequence[str] = (), legacy: bool = False) -> Path:
    parts = [jar(tmp_path / "parts" / n) for n in
             ("word-app-1.0.jar", "kafka-streams-4.2.2.jar", "kafka-clients-4.2.2.jar",
              "guava-33.0.0-jre.jar")]
    return write_install(tmp_path / "build" / "install" / "word-app", parts, MAIN, jvm_options,
                         legacy)


@pytest.mark.parametrize("legacy", [False, True], ids=["gradle-7-and-later", "gradle-4-to-6"])
def test_the_start_script_says_the_classpath_in_order_and_the_main(tmp_path: Path,
                                                                   legacy: bool) -> None:
    folder = install(tmp_path, ["-Xmx512m", "-Dapp.env=a b"], legacy)
    command = read_start_script(folder / "bin" / "word-app")
    assert command.main == MAIN
    assert [p.name for p in command.classpath] == ["word-app-1.0.jar", "kafka-streams-4.2.2.jar",
                                                   "kafka-clients-4.2.2.jar",
                                                   "guava-33.0.0-jre.jar"]
    assert all(p.parent == (folder / "lib").resolve() for p in command.classpath)
    assert command.jvm_options == ("-Xmx512m", "-Dapp.env=a b")


@pytest.mark.parametrize("legacy", [False, True], ids=["gradle-7-and-later", "gradle-4-to-6"])
def test_the_app_name_property_and_the_callers_environment_are_no_part_of_the_app(
        tmp_path: Path, legacy: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "word-app"
    (folder / "lib").mkdir(parents=True)
    jar(folder / "lib" / "word-app.jar")
    (folder / "bin").mkdir()
    (folder / "bin" / "word-app").write_text(
        start_script("word-app", ["word-app.jar"], MAIN, legacy=legacy, app_name_property=True))
    monkeypatch.setenv("JAVA_OPTS", "-Xmx8g")
    monkeypatch.setenv("WORD_APP_OPTS", "-Dfrom.shell=1")
    command = read_start_script(folder / "bin" / "word-app")
    assert command.main == MAIN and command.jvm_options == ()


def test_an_executable_jar_entry_is_run_by_its_main_class(tmp_path: Path) -> None:
    folder = tmp_path / "word-app"
    jar(folder / "lib" / "word-app.jar", main=MAIN)
    jar(folder / "lib" / "dep.jar")
    (folder / "bin").mkdir()
    (folder / "bin" / "word-app").write_text(
        start_script("word-app", ["dep.jar"], '-jar "$APP_HOME/lib/word-app.jar"'))
    command = read_start_script(folder / "bin" / "word-app")
    assert command.main == MAIN
    assert [p.name for p in command.classpath] == ["word-app.jar", "dep.jar"]


@pytest.mark.parametrize(("main", "says"), [
    ("--module org.example/org.example.WordApp", "runs a module"),
    ("", "names no main class"),
])
def test_a_script_kchaos_cannot_run_from_the_classpath_is_one_line(tmp_path: Path, main: str,
                                                                   says: str) -> None:
    folder = tmp_path / "word-app"
    jar(folder / "lib" / "word-app.jar")
    (folder / "bin").mkdir()
    (folder / "bin" / "word-app").write_text(start_script("word-app", ["word-app.jar"], main))
    with pytest.raises(UsageError, match=says) as refused:
        read_start_script(folder / "bin" / "word-app")
    assert "\n" not in str(refused.value) and "--app-main" in str(refused.value)


def test_a_jar_the_script_names_but_lib_lacks_asks_for_installdist_again(tmp_path: Path) -> None:
    folder = install(tmp_path)
    (folder / "lib" / "guava-33.0.0-jre.jar").unlink()
    with pytest.raises(UsageError, match=r"guava-33\.0\.0-jre\.jar .* run `gradle installDist`"):
        read_start_script(folder / "bin" / "word-app")


def test_an_install_keeps_the_scripts_order_and_drops_what_the_launcher_provides(
        tmp_path: Path) -> None:
    jars = app_jars(str(install(tmp_path)))
    assert jars.main == MAIN and jars.own == ()
    provided = frozenset({"kafka-streams", "kafka-clients"})
    assert [p.name for p in jars.classpath(provided)] == ["word-app-1.0.jar",
                                                          "guava-33.0.0-jre.jar"]
    assert [a.name for a in jars.dropped(provided)] == ["kafka-streams", "kafka-clients"]


def test_the_scripts_main_is_the_entry_unless_the_run_or_the_spec_names_one(
        tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC_TEXT)
    spec = read_spec(tmp_path / "spec.yaml")
    assert resolve_entry(None, None, "in out", spec, (), MAIN).name == f"{MAIN}.main"
    assert resolve_entry(None, None, "in out", spec, (), MAIN).app_args == ("in", "out")
    assert resolve_entry(None, "org.example.Other", None, spec, (), MAIN).app_main == (
        "org.example.Other")
    assert resolve_entry("org.example.T#build", None, None, spec, (), MAIN).app_class == (
        "org.example.T#build")
    with pytest.raises(UsageError, match="folder of jars and names no main"):
        resolve_entry(None, None, None, spec, (), None)


def test_each_folder_kind_is_told_apart(tmp_path: Path) -> None:
    assert folder_kind(install(tmp_path)) == "install"
    jars = tmp_path / "jars"
    jar(jars / "a.jar")
    assert folder_kind(jars) == "jars"
    assert [a.artifact for a in app_jars(str(jars)).libs] == ["a"]
    maven = tmp_path / "maven"
    maven.mkdir()
    (maven / "pom.xml").write_text("<project/>")
    jar(maven / "lib" / "x.jar")
    assert folder_kind(maven) == "maven"
    no_script = tmp_path / "dist"
    jar(no_script / "lib" / "b.jar")
    assert folder_kind(no_script) == "jars"


def empty_folder(folder: Path) -> Path:
    folder.mkdir()
    (folder / "README").write_text("no app here\n")
    return folder


def gradle_project(folder: Path) -> Path:
    folder.mkdir()
    (folder / "build.gradle").write_text("plugins { id 'application' }\n")
    return folder


@pytest.mark.parametrize(("make", "says"), [
    (empty_folder, "no pom.xml, no installDist layout"),
    (gradle_project, "a Gradle project; kchaos does not run Gradle"),
])
def test_a_folder_that_is_no_app_is_one_line_254(tmp_path: Path, make: Callable[[Path], Path],
                                                 says: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    folder = make(tmp_path / "app")
    (tmp_path / "spec.yaml").write_text(SPEC_TEXT)
    err = refused_run(tmp_path / "results", ["--sut", "app", "--app", str(folder), "--input",
                                             str(tmp_path / "spec.yaml")], capsys)
    assert says in err, err


def test_a_gradle_project_with_an_install_names_the_folder_to_give(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = gradle_project(tmp_path / "word-app")
    install(project)
    (tmp_path / "spec.yaml").write_text(SPEC_TEXT)
    err = refused_run(tmp_path / "results", ["--sut", "app", "--app", str(project), "--input",
                                             str(tmp_path / "spec.yaml")], capsys)
    assert f"give --app {project}/build/install/word-app" in err, err


def test_a_folder_of_jars_with_no_main_named_is_one_line_254(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jar(tmp_path / "jars" / "word-app-1.0.jar", main=MAIN)  # a folder's Main-Class is no choice
    (tmp_path / "spec.yaml").write_text(SPEC_TEXT)
    err = refused_run(tmp_path / "results", ["--sut", "app", "--app", str(tmp_path / "jars"),
                                             "--input", str(tmp_path / "spec.yaml")], capsys)
    assert "folder of jars and names no main: give --app-main CLASS" in err, err
