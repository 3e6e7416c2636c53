"""The `KIP-406-kstreams` scenario, aimed at the real Kafka Streams releases (`--sut
kstreams`), whose app traces less than the worker: its plan waits only for what the app
traces (`commits` of a given pod) and takes no fault the kstreams system under test
refuses (no worker hook: slowed checkpoint writes come from the fault filesystem, `io-
delay`). No switch: the bug is in the release (docs/releases.md)."""

from __future__ import annotations

from faults.builder import Builder
from faults.model import FIRST_FAULT_S, ProfileSettings, Trigger, pod_name
from faults.scenarios.scenario import KAFKA_STREAMS, Scenario
from faults.windows import commits_wait_s


def plan(b: Builder) -> ProfileSettings:
    """KIP-406 (a proposal, never adopted): the global thread recovering by itself from
    an InvalidOffsetException. The global topic is cut past the position of pod-0's
    *running* global consumer (`truncate-global` with `live`: the pod is paused, every
    account written twice, everything before the second copy deleted, the pod resumed).

    Twice in a row, each pair once pod-0 has committed 4 times: a single live cut leaves
    the real consumer valid (seen on 2.1.1, seed 1): the fetch it had in flight when it was
    paused is answered by the broker with the first copy (a long poll waits up to
    fetch.max.wait.ms for data), so its position lands on the cut itself, the new log
    start. The second cut comes within milliseconds of the resume, before the consumer can
    send another fetch: the records it holds end at the first cut's end, below the
    second cut, and its next fetch is out of range (auto.offset.reset is "none" for the
    global consumer). The releases' answer is in the traces (`fatal`, client-state ERROR),
    the pod's exits and restarts (history.jsonl) and the global store's restores
    (`global-restore-start`)."""
    for at in (FIRST_FAULT_S + 4, FIRST_FAULT_S + 22):
        if at > FIRST_FAULT_S + 4 and at >= b.time_limit_s - 8.0:
            break  # no second pair in a run too short for it (8 s: faults.plan's tail)
        b.add("truncate-global", pod_name(0),
              Trigger(at, "commits", count=4, timeout_s=commits_wait_s(b.settings, 4, 20)),
              live=True)
        b.add("truncate-global", pod_name(0), Trigger(at), live=True)  # right after
    return {"pods": 1}


SCENARIO = Scenario("KIP-406-kstreams", plan, switches=(), order=10, sut=KAFKA_STREAMS)
