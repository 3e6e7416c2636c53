"""An app runs with the guarantee it is deployed with (issue 52, item 3): its own
`processing.guarantee`, else Kafka Streams' default (at-least-once), unless the run's
`--guarantee` (or `--streams-config`, or the input spec's config) says otherwise; the pods
are given that one, and run.json, meta.json, results.json, the console and the report say
it and whose it was. The worker and the ledger app keep exactly-once by default. Pure logic:
no build, no broker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.check import ran_with, results_document
from checker.meta import Meta
from checker.model import CheckResult
from faults.windows import PlanSettings
from harness.app.entry import Entry
from harness.app.guarantee import ChosenGuarantee, choose_guarantee
from harness.app.spec import InputSpec
from harness.config.run import RunConfig, resolve
from harness.errors import UsageError
from harness.report.app_page import app_config_rows, app_facts
from harness.report.summary import summarize_dir
from harness.run.command import ran_with_line
from harness.sut.app import TopologyDescription, UserApp
from harness.sut.base import PodPaths, PodSettings

EXAMPLES = Path(__file__).resolve().parents[2] / "workloads" / "app-examples"
PG = "processing.guarantee"
EOS, ALOS = "exactly_once_v2", "at_least_once"


@pytest.mark.parametrize(("given", "run", "spec", "app", "chosen"), [
    (None, (), (), {}, (ALOS, "kafka-streams default")),
    (None, ("a=1",), ("b=2",), {"commit.interval.ms": "100"}, (ALOS, "kafka-streams default")),
    (None, (), (), {PG: EOS}, (EOS, "app")),
    (ALOS, (), (), {PG: EOS}, (ALOS, "--guarantee")),
    (EOS, (), (), {}, (EOS, "--guarantee")),
    (None, (), (f"{PG}={EOS}",), {PG: ALOS}, (EOS, "input spec")),
    (ALOS, (), (f"{PG}={EOS}",), {}, (ALOS, "--guarantee")),
    (None, (f"{PG} = {ALOS}",), (f"{PG}={EOS}",), {PG: EOS}, (ALOS, "--streams-config")),
    (ALOS, (f"{PG}={EOS}", f"{PG}={ALOS}"), (), {}, (ALOS, "--streams-config")),  # last wins
])
def test_the_guarantee_is_the_apps_unless_the_run_says(
        given: str | None, run: tuple[str, ...], spec: tuple[str, ...], app: dict[str, str],
        chosen: tuple[str, str]) -> None:
    assert choose_guarantee(given, run, spec, app) == ChosenGuarantee(*chosen)  # type: ignore[arg-type]


def test_a_guarantee_given_twice_differently_is_refused() -> None:
    with pytest.raises(UsageError, match="disagree: give one of them"):
        choose_guarantee(EOS, (f"{PG}={ALOS}",), (), {})


def app_config(sut: str = "app", **given: object) -> dict[str, object]:
    if sut != "app":
        return {"sut": sut, **given}
    return {"sut": sut, "app": str(EXAMPLES), "input_spec": str(EXAMPLES / "wordcount.yaml"),
            **given}


@pytest.mark.parametrize("sut", ["python", "kstreams"])
def test_the_worker_and_the_ledger_app_keep_exactly_once_by_default(sut: str) -> None:
    config = resolve(app_config(sut, profile="kill"))
    assert config.guarantee == EOS and config.pod_guarantee == EOS
    assert PodSettings.from_run(config, "b:1").guarantee == EOS
    assert resolve(app_config(sut, profile="kill", guarantee=ALOS)).pod_guarantee == ALOS


def test_an_app_given_no_guarantee_keeps_not_given_through_run_json() -> None:
    """A repro chooses again from the app (run.json keeps None, not the choice), and one
    given stays given: the repro runs the same guarantee."""
    for given in (None, ALOS):
        config = resolve(app_config(profile="kill", **({"guarantee": given} if given else {})))
        assert config.guarantee == given
        back = RunConfig.from_json(json.loads(json.dumps(config.to_json())))
        assert back.guarantee == given and back == config


def test_a_plan_for_a_guarantee_not_given_counts_on_transactions() -> None:
    assert PlanSettings(guarantee=None).exactly_once and PlanSettings().exactly_once
    assert not PlanSettings(guarantee=ALOS).exactly_once


def described(given: str | None, app: dict[str, str], spec: tuple[str, ...] = (),
              run: tuple[str, ...] = ()) -> UserApp:
    """A UserApp of a topology method as `prepare` leaves it, without a build."""
    user = UserApp.__new__(UserApp)
    user.app, user.version, user.entry = "app.jar", "4.2.2", Entry(app_class="example.App")
    user.dropped, user.bundled, user.logging = (), (), ()
    user.spec = InputSpec(path=Path("spec.yaml"), topics=(), config=spec)
    user.run_config, user.streams_config = run, (*spec, *run)
    user.given_guarantee = given
    user._app_config = app
    user._description = TopologyDescription(("in",), (), ("out",), False, (), ("s",))
    user._classpath = ("launcher.jar",)
    return user


def pod_flags(user: UserApp) -> tuple[str, list[str]]:
    """The pod's --guarantee and its --streams-config values."""
    argv = user.command(PodSettings(bootstrap="b:1", guarantee=EOS), "pod-0",
                        PodPaths("/s", "/t", "/c"))
    guarantee = argv[argv.index("--guarantee") + 1]
    configs = [argv[i + 1] for i, a in enumerate(argv) if a == "--streams-config"]
    return guarantee, configs


def test_the_pods_run_the_chosen_guarantee() -> None:
    # none set anywhere: Kafka Streams' default, not the run's exactly-once
    assert pod_flags(described(None, {})) == (ALOS, [])
    # the app's own: given as the default, the app's setting goes over it (the same)
    assert pod_flags(described(None, {PG: EOS})) == (EOS, [])
    # the run's --guarantee: also last, over the app's and the spec's
    assert pod_flags(described(ALOS, {PG: EOS}, spec=(f"{PG}={EOS}",))) == \
        (ALOS, [f"{PG}={EOS}", f"{PG}={ALOS}"])


def test_meta_results_console_and_report_say_the_guarantee_and_whose(tmp_path: Path) -> None:
    user = described(None, {"statestore.cache.max.bytes": "2048"})
    summary = user.summary()
    assert (summary["guarantee"], summary["guarantee_chosen_by"]) == \
        (ALOS, "kafka-streams default")
    meta = Meta.from_json({"workload": "app", "guarantee": user.guarantee().guarantee,
                           "app": summary})
    doc = results_document({"oracle": CheckResult(valid=True)}, {}, ran_with=ran_with(meta))
    assert doc["ran_with"] == {"guarantee": ALOS, "guarantee_chosen_by": "kafka-streams default",
                               "record_cache_bytes": 2048, "record_cache_chosen_by": "the app's"}
    assert ran_with_line(doc) == ("ran with: guarantee at_least_once (kafka-streams default), "
                                  "record cache 2048 bytes (the app's)")
    assert ran_with_line(results_document({}, {})) == ""  # a ledger run: nothing to add
    # the report's app table and the run's summary (index, junit)
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "meta.json").write_text(json.dumps(meta.raw))
    config = RunConfig(sut="app", app="app.jar", input_spec="spec.yaml").to_json()
    run = {"config": config, "ran_with": summary}
    (tmp_path / "run.json").write_text(json.dumps(run))
    facts = app_facts(tmp_path, run)
    assert facts is not None
    assert dict(facts.rows)["guarantee"] == "at_least_once (kafka-streams default)"
    assert app_config_rows(config)["guarantee"] == "not given"
    assert summarize_dir(tmp_path).guarantee == ALOS
