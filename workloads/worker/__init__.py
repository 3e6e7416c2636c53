"""The streams worker: a small Kafka-Streams-like runtime (the system under test).

Run it with `python -m workloads.worker --help`. See README.md beside this file for the
state layout, the behaviour it reproduces, and the fault-injection hook:

`--control-file FILE` is a JSON object written by the nemesis, re-read whenever its mtime
changes; `{"checkpoint_delay_ms": N}` makes every checkpoint write sleep N ms first
(traced as `checkpoint-delay`), or only those for the reasons listed in
`checkpoint_delay_reasons`. Nothing else of the harness reaches the worker.

Bug switches (`--bugs`) are documented in one place, `bugs.py`.
"""
