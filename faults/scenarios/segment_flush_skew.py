"""The `segment-flush-skew` scenario, aimed at the real Kafka Streams releases (`--sut
kstreams`): issue 49's hypothesis about segmented (windowed and session) stores. No
switch: whatever it finds is in the release (docs/windows.md)."""

from __future__ import annotations

from faults.builder import Builder
from faults.model import ProfileSettings, Trigger, pod_name
from faults.scenarios.scenario import KAFKA_STREAMS, Scenario

# A crashed pod's JVM restarts, rejoins and restores in 10-20 s on a busy machine: each
# step waits that long for its moment, so that it crashes a pod that is running again
# (a step whose moment does not come fires at its timeout, on a pod maybe still down).
RESTART_S = 20.0


def plan(b: Builder) -> ProfileSettings:
    """From 4.3 (KIP-1035) a segmented store writes its changelog offsets into every
    segment at a commit and reads them back from the newest segment that has them; each
    segment is its own RocksDB, write-ahead log off, flushed when its memtable fills. So
    pod-0 is crashed (SIGKILL, every third time power loss) right after the newest segment of
    a windowed store flushed by itself while an older, still written segment had not
    (`newest-segment-flushed`, from the app's `store-flush` trace): if the restart trusts
    the newest segment's offset, the older one's writes since its own flush are never
    restored, and the windows in it that keep growing come out low (window-lost-history).
    One task takes the whole rate, so its segments (2 s each, several written at once:
    a window is 4 s long) fill and flush within seconds; the guarantee is the run's, as is
    whether the stores are transactional (4.4: `--set transactional_stores=true`).

    A windowed changelog record holds its window's whole value, so a restore from a later
    offset still brings back every window updated after that offset: only a window whose
    last update came before it, and none after until the crash, is lost. Hence 400
    accounts: each gets a record every 1.3 s on average, a window three or so, and many
    windows are quiet for the second between a commit and a crash."""
    for i, at in enumerate(b.times(RESTART_S, RESTART_S + 4)):
        b.add("power-loss" if i % 3 == 2 else "kill", pod_name(0),
              Trigger(at, "newest-segment-flushed", timeout_s=RESTART_S),
              heal_after_s=b.r(1, 2))
    return {"pods": 1, "threads": 1, "partitions": 1, "rate": 300.0, "accounts": 400,
            "time_limit_s": 120.0,
            "write_buffer_bytes": 8192, "window_segment_ms": 2000,
            "window_retention_ms": 20_000}


SCENARIO = Scenario("segment-flush-skew", plan, switches=(), order=13, sut=KAFKA_STREAMS)
