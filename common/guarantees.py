"""The processing guarantees a run may ask of its system under test, spelt as Kafka
Streams' `processing.guarantee` takes them, for the harness, the profiles and the checker
(the worker, which imports nothing of kchaos, declares its own: workloads/worker/config.py)."""

from __future__ import annotations

EXACTLY_ONCE_V2 = "exactly_once_v2"
AT_LEAST_ONCE = "at_least_once"
GUARANTEES = (EXACTLY_ONCE_V2, AT_LEAST_ONCE)
# What Kafka Streams runs an app under that sets no `processing.guarantee` (StreamsConfig).
KAFKA_STREAMS_DEFAULT = AT_LEAST_ONCE
