"""SUT kstreams across Kafka Streams releases: one source tree per API generation
(harness/sut/kstreams.py GENERATIONS), chosen by the release; releases below 2.1 refused
with one line before anything starts; the trees keep one contract (the same pod flags,
trace format and trace events but for the ones a generation has no listener for); each
generation builds; a fault-free run of a 2.x release is valid."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest
from refused_run import refused_run

from harness.errors import UsageError
from harness.maven import sources_digest
from harness.sut.base import CONTAINER_APP_DIR
from harness.sut.kstreams import (
    COMMON_DIR,
    GENERATIONS,
    KafkaStreamsApp,
    build,
    default_version,
    generation,
)
from tests.kstreams.test_kstreams_sut import kstreams_run, whole_run

CURRENT, LEGACY = GENERATIONS
PACKAGE = Path("src/main/java/dev/kchaos/kstreams")
# Trace events only the legacy tree writes: which guarantee, membership and events it had;
# what 2.x tells only its log (LogTrace.java: a lock that failed, the cleaner's deletions)
# and what it tells nobody (StateDirAgent: cleaner passes, directory locks, checkpoint reads
# and deletes).
LEGACY_ONLY = {"app-config", "lock-failed", "cleaner-delete", "cleaner-pass", "dir-locked",
               "checkpoint-read", "checkpoint-delete"}


@pytest.mark.parametrize(("version", "tree"), [
    ("2.1.0", "legacy"), ("2.1.1", "legacy"), ("2.3.1", "legacy"), ("2.8.2", "legacy"),
    ("3.0.0", "legacy"), ("3.6.2", "legacy"), ("3.7.0", "current"), ("3.9.1", "current"),
    ("4.1.2", "current"), ("4.3.1", "current"), ("10.0.0", "current"),
])
def test_each_release_gets_its_generations_tree(version: str, tree: str) -> None:
    assert generation(version).name == tree
    assert KafkaStreamsApp(version).generation.name == tree


def test_the_default_release_is_the_current_trees() -> None:
    assert generation(default_version()) is CURRENT


@pytest.mark.parametrize("version", ["2.0.1", "1.1.1", "0.11.0", "0.10.2"])
def test_releases_below_2_1_are_refused(version: str) -> None:
    with pytest.raises(UsageError, match=r"2\.1 or later") as refused:
        KafkaStreamsApp(version)
    assert "\n" not in str(refused.value)


def test_a_release_below_2_1_is_one_line_254_and_no_run_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused_run(tmp_path, ["--time-limit", "10", "--sut", "kstreams",
                                 "--kstreams-version", "2.0.1"], capsys)
    assert "2.1" in err and "KIP-896" in err


SHARED = ("Trace.java", "Flags.java", "CommitWatch.java", "LedgerStep.java", "RestoreTrace.java",
          "PodConfig.java", "SmallWriteBuffer.java", "WindowAggregations.java")


def test_the_trees_share_one_trace_format_flags_and_commit_watch(tmp_path: Path) -> None:
    """One copy of each (workloads/kstreams-common), compiled into every tree's app and
    hashed into its build's cache key: no tree keeps its own."""
    for name in SHARED:
        assert (COMMON_DIR / PACKAGE / name).is_file(), name
    for generation_ in GENERATIONS:
        assert not [n for n in SHARED if (generation_.app_dir / PACKAGE / n).exists()]
        assert "../kstreams-common/src/main/java" in generation_.pom.read_text()
    app, common = tmp_path / "kstreams", tmp_path / "kstreams-common"
    shutil.copytree(CURRENT.app_dir, app)
    shutil.copytree(COMMON_DIR, common)
    before = sources_digest(app, common)
    trace = common / PACKAGE / "Trace.java"
    trace.write_text(trace.read_text() + "\n")
    assert sources_digest(app, common) != before  # an edit of the shared code rebuilds


def known_flags(tree: Path) -> set[str]:
    """The pod flags the apps' Flags.java accepts (its KNOWN list), as `tree` compiles it."""
    own = tree / PACKAGE / "Flags.java"
    text = (own if own.exists() else COMMON_DIR / PACKAGE / "Flags.java").read_text()
    listed = re.search(r"KNOWN = List\.of\((.*?)\);", text, re.DOTALL)
    assert listed, f"no KNOWN list in {tree}"
    return set(re.findall(r'"([\w-]+)"', listed.group(1)))


def test_every_pod_flag_the_harness_passes_is_known_to_every_tree() -> None:
    """PodSettings.argv with every setting off its default (so flags passed only when set
    appear too): each flag it gives is accepted by both trees' Flags.java."""
    from harness.sut import PodPaths, PodSettings

    off_default: dict[str, Any] = {f.name: f.default + 1 for f in fields(PodSettings)
                                   if type(f.default) is int}
    settings = replace(PodSettings(bootstrap="b:1", bugs=("x",), group_protocol="streams"),
                       **off_default)
    argv = settings.argv("pod-0", PodPaths("/s", "/t", "/c"))
    passed = {arg[2:] for arg in argv if arg.startswith("--")}
    assert {"bootstrap", "instance-id", "state-dir", "trace"} <= passed
    for generation_ in GENERATIONS:
        assert passed <= known_flags(generation_.app_dir), generation_.name
    assert known_flags(CURRENT.app_dir) <= known_flags(LEGACY.app_dir)


def _top_level_args(text: str) -> list[str]:
    """The arguments of a call whose text starts just after its `(`."""
    args, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                args.append(text[start:i].strip())
                return args
            depth -= 1
        elif char == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    raise ValueError(f"unclosed call: {text[:80]}")


def traced(tree: Path) -> dict[str, set[str]]:
    """Each trace event a tree's sources (its own and the shared ones) emit -> the field
    names they give it."""
    events: dict[str, set[str]] = {}
    sources = [*(tree / PACKAGE).glob("*.java"), *(COMMON_DIR / PACKAGE).glob("*.java")]
    for source in sorted(sources):
        text = source.read_text()
        for call in re.finditer(r"\.(emit|emitAs)\(", text):
            args = _top_level_args(text[call.end():])
            if call.group(1) == "emitAs":
                args = args[1:]  # the thread
            if not args or not args[0].startswith('"'):
                continue  # Trace's own emit -> emitAs forwarding
            fields = {a.strip('"') for a in args[1::2]}
            events.setdefault(args[0].strip('"'), set()).update(fields)
    return events


def test_the_legacy_tree_traces_the_same_events_but_those_it_has_no_listener_for() -> None:
    current, legacy = traced(CURRENT.app_dir), traced(LEGACY.app_dir)
    assert {"client-state", "task-running", "dedup-skip", "txn-commit"} <= set(current)
    assert set(current) - set(legacy) == set(LEGACY.cannot_trace)
    assert set(legacy) - set(current) == LEGACY_ONLY
    for event in set(current) & set(legacy):
        assert legacy[event] == current[event], event
    assert not CURRENT.cannot_trace


def test_the_build_classpath_starts_with_the_generations_jar(tmp_path: Path) -> None:
    from harness.sut.kstreams import Build

    assert Build(tmp_path, 0.0, LEGACY.jar).classpath.split(":")[0] == str(tmp_path / LEGACY.jar)
    assert LEGACY.jar != CURRENT.jar


def test_the_legacy_pods_run_under_the_state_directory_agent() -> None:
    """2.x tells nobody of its cleaner's passes, its locks and its checkpoint reads: the
    legacy jar is its own Java agent (StateDirAgent) and every legacy pod runs under it."""
    from tests.docker.test_specs import CONTAINER_PATHS, WORKER

    legacy = KafkaStreamsApp("2.2.2").container_command(WORKER, "pod-0", CONTAINER_PATHS)
    assert f"-javaagent:{CONTAINER_APP_DIR}/{LEGACY.jar}" in legacy
    assert legacy.index(f"-javaagent:{CONTAINER_APP_DIR}/{LEGACY.jar}") < legacy.index("-cp")
    current = KafkaStreamsApp("4.2.2").container_command(WORKER, "pod-0", CONTAINER_PATHS)
    assert not any(arg.startswith("-javaagent") for arg in current)
    pom = (LEGACY.app_dir / "pom.xml").read_text()
    assert "<Premain-Class>dev.kchaos.kstreams.StateDirAgent</Premain-Class>" in pom


# The current tree's build is tests/kstreams/test_kstreams_sut.py's (the default release).
# A cold build of the legacy tree took 15-21 s here (Maven Central downloads included).
@pytest.mark.slow
@pytest.mark.parametrize("version", ["2.1.1", "3.6.2"])  # the legacy generation's two ends
def test_the_legacy_tree_builds(version: str) -> None:
    first = build(version)
    assert first.jar == LEGACY.jar and (first.folder / LEGACY.jar).is_file()
    jars = [Path(jar).name for jar in first.classpath.split(":")]
    assert f"kafka-streams-{version}.jar" in jars
    # one Jackson: 3.x's own jackson-annotations would break databind (NoSuchMethodError)
    jackson = {re.sub(r"^jackson-(annotations|core|databind)-", "", jar) for jar in jars
               if re.match(r"jackson-(annotations|core|databind)-", jar)}
    assert len(jackson) == 1, jars
    again = build(version)
    assert again.folder == first.folder and again.seconds == 0.0  # from the cache


@whole_run
def test_fault_free_run_on_kafka_streams_2_1_is_valid(tmp_path: Path, spark_url: str) -> None:
    code, run_dir, doc = kstreams_run(tmp_path, spark_url, "--kstreams-version", "2.1.1",
                                      "--profile", "none", "--time-limit", "20")
    assert code == 0 and doc["verdict"] is True, doc["anomaly_counts"]
    traces = [json.loads(line) for path in sorted((run_dir / "pods").glob("*/trace.jsonl"))
              for line in path.read_text().splitlines() if line.strip()]
    configs = [t for t in traces if t["event"] == "app-config"]
    assert configs and all(c["release"] == "2.1.1" and c["generation"] == "legacy"
                           and c["guarantee"] == "exactly_once"  # v1: 2.1 has no other
                           and c["guarantee_asked"] == "exactly_once_v2"
                           and c["static_membership"] is False for c in configs), configs
    events = {t["event"] for t in traces}
    # txn-commit: the pre-2.5 home of the commit metric is read; task-running: the
    # Transformer's init; task-first-record: after its first writes
    assert {"txn-commit", "task-running", "task-first-record", "client-state"} <= events, events
    assert not events & set(LEGACY.cannot_trace)
    # StateDirAgent: each task read its checkpoint (none yet: `{}`) when it was made, and
    # took its directory's lock after that (2.1's order, the one KAFKA-8187's family needs).
    first: dict[tuple[str, str], str] = {}
    for t in sorted(traces, key=lambda t: t["ts_ns"]):
        if t["event"] in ("checkpoint-read", "dir-locked") and t["thread"] != "cleaner":
            first.setdefault((t["pod"], t["task"]), t["event"])
    assert first and set(first.values()) == {"checkpoint-read"}, first


def test_a_release_maven_central_does_not_serve_is_one_line_254(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: Maven built it and failed in a log; the list bisect reads says so at once
    (here its cached copy: Maven Central is made unreachable)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "kafka-streams-maven-metadata.xml").write_text(
        "".join(f"<version>{v}</version>" for v in ("4.1.2", "4.2.2", "4.4.0")))
    monkeypatch.setenv("KCHAOS_CACHE", str(cache))
    monkeypatch.setenv("KCHAOS_MAVEN_REPOSITORY", "http://127.0.0.1:1")
    err = refused_run(tmp_path / "results", ["--time-limit", "10", "--sut", "kstreams",
                                             "--kstreams-version", "9.9.9"], capsys)
    assert "9.9.9" in err and "4.4.0" in err
