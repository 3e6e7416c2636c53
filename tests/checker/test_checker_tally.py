"""Frames.tally: one job counts every check's events, and the view is cached only when a
count is not 0 (a sound run keeps none of it; a run with findings reads it again for
examples). Spark, on the pinned synthetic history of the property tests."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from synth_history import Params, generate
from synth_inject import INJECTORS

from checker.checks import event_tallies
from checker.frames import Frames, load_frames
from checker.meta import load_meta

pytestmark = pytest.mark.spark

PINNED = Params(seed=1)


def tallied(spark: SparkSession, history_dir: Path) -> Frames:
    frames = load_frames(spark, history_dir)
    frames.tally(event_tallies(load_meta(history_dir), frames))
    return frames


def cached(frames: Frames) -> bool:
    level = frames.events.storageLevel  # asked of the JVM's cache manager
    return bool(level.useMemory or level.useDisk)


def test_a_sound_history_is_tallied_without_caching_the_view(
    spark: SparkSession, tmp_path: Path
) -> None:
    frames = tallied(spark, generate(PINNED).write(tmp_path / "history"))
    assert set(frames.tallies) == set(event_tallies(load_meta(tmp_path / "history"), frames))
    assert set(frames.tallies.values()) == {0}
    assert not cached(frames)


def test_a_finding_caches_the_view_for_the_examples(
    spark: SparkSession, tmp_path: Path
) -> None:
    broken = INJECTORS["stale-global"](generate(PINNED), random.Random(7))
    assert broken is not None
    history, expected = broken
    frames = tallied(spark, history.write(tmp_path / "history"))
    try:
        assert frames.tallies["stale-global"] == expected.count > 0
        assert cached(frames)
    finally:
        frames.unpersist()
