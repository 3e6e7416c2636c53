"""Fakes for the worker's pure-logic tests (no broker): what a task asks of its thread."""

from __future__ import annotations

from typing import Any

from kafka import TopicPartition


class RecordingReader:
    """The ChangelogReader calls a task makes, recorded; every restore is complete."""

    def __init__(self) -> None:
        self.registered: list[tuple[TopicPartition, int]] = []
        self.unregistered: list[TopicPartition] = []

    def register(self, task: str, store: str, tp: TopicPartition, start: int, *_: Any,
                 **__: Any) -> None:
        self.registered.append((tp, start))

    def unregister(self, tps: list[TopicPartition]) -> None:
        self.unregistered.extend(tps)

    def position(self, tp: TopicPartition) -> int:
        return 0
