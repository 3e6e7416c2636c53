"""A run's settings and the registries they choose from, below every part of the harness
that reads them: `RunConfig` and its table of settings (`run.py`, declared with
`settings.py`'s `setting`), the rules of single settings (`rules.py`), the systems under
test and platforms as data (`suts.py`, `platforms.py`), the rebalance protocols
(`protocol.py`) and `kchaos run`'s options made from the settings (`options.py`).

Nothing here imports the SUTs, platforms, run lifecycle or reports, which import it
(tests/test_import_cycles.py holds harness's folders to that)."""
