"""The knobs (faults/knobs.py): a pure function of (seed, profile), every value within its
range, options given explicitly win, the fault plan a seed draws is the same, profiles
that do not draw run as before, and a pod is started with what was drawn."""

from __future__ import annotations

import subprocess
import sys
import typing
from dataclasses import fields, replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from faults import knobs
from faults.params import ProfileSettings
from faults.plan import PROFILES, REGISTRY, plan
from faults.windows import longest_session_s, newcomer_takes_a_task
from harness.config.drawn import knob_default, undrawn
from harness.config.run import RunConfig, plan_settings, profile_settings, resolve
from harness.errors import UsageError
from harness.sut.base import ONLY_WHEN_SET, PodPaths, PodSettings
from workloads.worker.config import parse_args

seeds = st.integers(min_value=0, max_value=2**31)
BROAD = frozenset(name for name, p in REGISTRY.items() if p.draws_knobs)
broad = st.sampled_from(sorted(BROAD))
PATHS = PodPaths("/v/state", "/p/trace.jsonl", "/p/control.json")


def _explicit(profile: str, seed: int) -> dict[str, object]:
    return {"profile": profile, "seed": seed, **({"brokers": 3} if profile == "broker" else {})}


def test_every_knob_is_a_run_setting_a_profile_may_set() -> None:
    run_fields = {f.name for f in fields(RunConfig)}
    settable = set(typing.get_type_hints(ProfileSettings))
    for knob in knobs.KNOBS:
        assert knob.name in run_fields and knob.name in settable, knob.name
        assert knob.values and knob.why
        assert knob.name not in ("pods", "brokers", "time_limit_s")  # the plan's inputs
    assert {"all", "checkpoint", "global", "broker", "power-loss", "storage"} == BROAD


@given(seeds, broad)
@settings(max_examples=300, deadline=None)
def test_same_seed_same_knobs_each_within_its_range(seed: int, profile: str) -> None:
    drawn = knobs.draw(seed, profile)
    assert drawn == knobs.draw(seed, profile)
    assert set(drawn) == set(knobs.BY_NAME)  # a broad profile draws every knob
    for name, value in drawn.items():
        assert value in knobs.BY_NAME[name].values, (name, value)
    eos = drawn["guarantee"] == knobs.EXACTLY_ONCE_V2
    commit = drawn["commit_interval_ms"]
    assert commit in (knobs.EOS_COMMIT_MS if eos else knobs.ALOS_COMMIT_MS)
    assert drawn["transaction_timeout_ms"] >= knobs.TXN_OVER_COMMIT * commit
    assert drawn["restore_max_poll_records"] == drawn["max_poll_records"]
    assert drawn["cleaner_interval_ms"] == drawn["cleaner_delay_ms"]


def test_a_draw_is_the_same_in_another_process() -> None:
    """A string-seeded Random is stable across processes and hash seeds (as the plans)."""
    code = "from faults.knobs import draw; print(sorted(draw(7, 'all').items()))"
    for hash_seed in ("0", "4242"):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).parents[2],
                              env={"PYTHONHASHSEED": hash_seed, "PATH": ""})
        assert done.stdout.strip() == str(sorted(knobs.draw(7, "all").items()))


def test_the_knobs_stream_is_not_the_plans() -> None:
    # Seed 1 of `all` as recorded when the knobs came (issue 33): a changed range or order
    # of draws shows up here, as a changed plan does in golden_plans.json.
    assert knobs.draw(1, "all") == {
        "guarantee": "at_least_once", "commit_interval_ms": 1000, "session_timeout_ms": 10000,
        "transaction_timeout_ms": 60000, "threads": 2, "standbys": 1, "partitions": 8,
        "write_buffer_bytes": 8192, "max_poll_records": 1, "restore_max_poll_records": 1,
        "cleaner_delay_ms": 600000, "cleaner_interval_ms": 600000, "rate": 200.0,
        # drawn after the others when the windows came (issue 49): the values above stay
        "write_buffer_count": 6, "window_retention_ms": 10000, "window_segment_ms": 5000}


@given(seeds, st.sampled_from(sorted(set(PROFILES) - BROAD)))
@settings(max_examples=100, deadline=None)
def test_other_profiles_draw_nothing_and_run_as_before(seed: int, profile: str) -> None:
    assert knobs.draw(seed, profile) == {}
    config = resolve({"profile": profile, "seed": seed})
    assert config.drawn_knobs == ()
    # the worker's guarantee where none is given: recorded as exactly-once, as before
    assert config == replace(RunConfig(), profile=profile, seed=seed,
                             **{"guarantee": "exactly_once_v2", **profile_settings(profile)})
    argv = PodSettings.from_run(config, "b:1").argv("pod-0", PATHS)
    assert not any(a.lstrip("-").replace("-", "_") in ONLY_WHEN_SET for a in argv)


@given(seeds, broad)
@settings(max_examples=100, deadline=None)
def test_a_broad_run_takes_the_bounded_draw_and_its_plan_follows_it(seed: int,
                                                                    profile: str) -> None:
    config = resolve(_explicit(profile, seed))  # valid: validate() ran
    drawn = knobs.bounded(knobs.draw(seed, profile), config.pods, config.time_limit_s)
    assert config.drawn_knobs == tuple(k.name for k in knobs.KNOBS)
    assert {name: getattr(config, name) for name in config.drawn_knobs} == drawn
    before = undrawn(config)
    assert before.drawn_knobs == ()
    for name in drawn:
        assert getattr(before, name) == knob_default(profile, name)
    # The plan's windows follow the drawn settings (faults/windows.py); the plan's own
    # random stream is not the knobs': undrawn, it is the plan of a run that draws nothing.
    assert plan(seed, profile, before.pods, before.brokers, before.time_limit_s,
                settings=plan_settings(before)) == plan(seed, profile, before.pods,
                                                        before.brokers, before.time_limit_s)


@given(seeds, broad, st.integers(1, 4), st.sampled_from([10.0, 30.0, 60.0, 300.0]))
@settings(max_examples=200, deadline=None)
def test_a_draw_is_bounded_to_what_the_run_can_reach(seed: int, profile: str, pods: int,
                                                     time_limit_s: float) -> None:
    """Enough partitions for a scaled-out pod to take a task where the range has them, and
    no session longer than the run can outwait (a 45 s session in a 60 s run it can)."""
    drawn = knobs.draw(seed, profile)
    bounded = knobs.bounded(drawn, pods, time_limit_s)
    assert set(bounded) == set(drawn)
    for name, value in bounded.items():
        assert value in knobs.BY_NAME[name].values, (name, value)
        if name not in ("partitions", "session_timeout_ms"):
            assert value == drawn[name], name  # nothing else moves
    can_take = [v for v in knobs.BY_NAME["partitions"].values
                if newcomer_takes_a_task(int(v), pods)]
    if can_take:
        assert newcomer_takes_a_task(bounded["partitions"], pods)
    assert bounded["partitions"] >= drawn["partitions"] or not can_take or max(
        int(v) for v in can_take) < drawn["partitions"]
    session_s = bounded["session_timeout_ms"] / 1000
    assert session_s <= max(longest_session_s(time_limit_s), 6.0)
    assert bounded["session_timeout_ms"] <= drawn["session_timeout_ms"]
    if time_limit_s >= 60:
        assert bounded["session_timeout_ms"] == drawn["session_timeout_ms"]


knob_values = st.sampled_from([(k.name, v) for k in knobs.KNOBS for v in k.values])


@given(seeds, broad, st.lists(knob_values, max_size=5, unique_by=lambda kv: kv[0]),
       st.integers(1, 4))
@settings(max_examples=300, deadline=None)
def test_explicit_options_win_over_the_draw(seed: int, profile: str,
                                            given_values: list[tuple[str, object]],
                                            pods: int) -> None:
    explicit = {**_explicit(profile, seed), **dict(given_values), "pods": pods}
    try:
        config = resolve(explicit)
    except UsageError:
        # Only options that contradict each other are refused, whatever the draw.
        assert _contradict(explicit, knobs.draw(seed, profile)), explicit
        return
    for name, value in given_values:
        assert getattr(config, name) == value, name
        assert name not in config.drawn_knobs
    drawn = knobs.draw(seed, profile)
    for name in config.drawn_knobs:  # the rest is the draw, unless it had to give way
        if getattr(config, name) != drawn[name]:
            assert name in GIVE_WAY, name
    assert config.standbys <= config.pods


GIVE_WAY = ("standbys", "transaction_timeout_ms", "commit_interval_ms",
            "restore_max_poll_records", "cleaner_interval_ms",
            "partitions", "session_timeout_ms")  # bounded to the run (knobs.bounded)


def _contradict(explicit: dict[str, object], drawn: ProfileSettings) -> bool:
    """Kafka Streams' transaction timeout below the commit interval, both given, under
    exactly-once; more standbys than pods, both given."""
    merged: dict[str, object] = {**drawn, **explicit}
    both_given = "transaction_timeout_ms" in explicit and "commit_interval_ms" in explicit
    txn, commit = merged["transaction_timeout_ms"], merged["commit_interval_ms"]
    assert isinstance(txn, int) and isinstance(commit, int)
    if both_given and merged["guarantee"] == knobs.EXACTLY_ONCE_V2 and txn < commit:
        return True
    return "standbys" in explicit and int(str(explicit["standbys"])) > int(str(merged["pods"]))


@given(seeds, broad)
@settings(max_examples=50, deadline=None)
def test_a_pod_runs_what_was_drawn(seed: int, profile: str) -> None:
    config = resolve(_explicit(profile, seed))
    worker = parse_args(PodSettings.from_run(config, "b:1").argv("pod-0", PATHS))
    for name in config.drawn_knobs:
        if hasattr(worker, name):
            assert getattr(worker, name) == getattr(config, name), name
    assert worker.eos == (config.guarantee == knobs.EXACTLY_ONCE_V2)
