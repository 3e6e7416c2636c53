"""`--sut app` and `--oracle`: bad input is one line, exit 254, before a run folder exists;
faults that need the ledger are refused for an app."""

from __future__ import annotations

from pathlib import Path

import pytest
from refused_run import refused_run

from faults.plan import plan

EXAMPLES = Path(__file__).resolve().parents[2] / "workloads" / "app-examples"
SPEC = str(EXAMPLES / "wordcount.yaml")


@pytest.mark.parametrize(("args", "says"), [
    (["--app", str(EXAMPLES)], "--app needs --sut app"),
    (["--input", SPEC], "--input needs --sut app"),
    (["--sut", "app", "--app", str(EXAMPLES)], "needs --app"),
    (["--sut", "app", "--input", SPEC], "needs --app"),
    (["--sut", "app", "--app", "no/such/app", "--input", SPEC], "no such file or folder"),
    (["--sut", "app", "--app", SPEC, "--input", SPEC], "not a jar"),
    (["--sut", "app", "--app", str(EXAMPLES / "src"), "--input", SPEC], "no pom.xml"),
    (["--sut", "app", "--app", str(EXAMPLES), "--input", "no-spec.yaml"], "input spec"),
    (["--sut", "app", "--app", str(EXAMPLES), "--input", SPEC, "--kstreams-version", "3.6.2"],
     "3.7 or later"),
    (["--sut", "app", "--app", str(EXAMPLES), "--input", SPEC, "--bugs", "KAFKA-7672"],
     "switches of the Python worker"),
    (["--oracle"], "--oracle judges the ledger app on Kafka Streams"),
    (["--sut", "kstreams", "--oracle", "--kstreams-version", "3.6.2"], "3.7.0 or newer"),
])
def test_bad_app_options_are_one_line_254_and_no_run_folder(
    tmp_path: Path, args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused_run(tmp_path, ["--time-limit", "10", *args], capsys)
    assert says in err, err


def test_a_fault_on_the_ledgers_accounts_topic_is_refused_for_an_app(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def truncates(seed: int) -> bool:
        return any(s.fault == "truncate-global" for s in plan(seed, "global", 2, 1, 60).steps)

    seed = next(s for s in range(100) if truncates(s))
    err = refused_run(tmp_path, ["--sut", "app", "--app", str(EXAMPLES), "--input", SPEC,
                                 "--profile", "global", "--seed", str(seed)], capsys)
    assert "truncate-global" in err and "accounts topic" in err


def test_an_app_run_keeps_its_guarantee_where_all_would_draw_one() -> None:
    """An app runs with its own guarantee: `all` draws none for it, and none is set for it
    (not given: the app's own, or Kafka Streams' default, chosen once it is described)."""
    from harness.config.run import resolve

    app = {"sut": "app", "app": str(EXAMPLES), "input_spec": SPEC, "profile": "all"}
    worker_draws = [s for s in range(1, 40)
                    if resolve({"profile": "all", "seed": s}).guarantee == "at_least_once"]
    assert worker_draws, "no seed of 40 draws at_least_once for the worker"
    for seed in worker_draws[:5]:
        config = resolve({**app, "seed": seed})
        assert config.guarantee is None and "guarantee" not in config.drawn_knobs
        assert resolve({**app, "seed": seed, "guarantee": "exactly_once_v2"}).guarantee \
            == "exactly_once_v2"
        assert config.application_id == "kchaos-app"
