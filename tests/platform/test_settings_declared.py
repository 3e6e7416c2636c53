"""Every run setting is declared once (harness/config/settings.py, `RunConfig`'s fields) and
everything else reads that declaration: `kchaos run`'s options and their help, `--set`, the
refusal of a bad value (one line, exit 254), a nightly cell's check."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from refused_run import refused_run

from faults.plan import PROFILES
from harness.cli import build_parser
from harness.config.options import Parser, add_run_arguments
from harness.config.run import SETTINGS, RunConfig, validate
from harness.config.settings import setting, settings_of
from harness.config.suts import SUT_KINDS
from harness.errors import UsageError
from harness.nightly import parse_matrix

NO_KAFKA = "127.0.0.1:1"  # a value the rules let through stops here, with another line

# A value each setting's rule refuses, as typed on the command line.
BAD_VALUES = {
    "profile": "nosuch", "time_limit_s": "5", "pods": "0", "threads": "0", "standbys": "-1",
    "brokers": "2", "rate": "-1", "bugs": "KAFKA-7762", "guarantee": "exactly_once",
    "platform": "k8s", "restart": "sometimes", "partitions": "0", "duplicate_fraction": "1",
    "session_timeout_ms": "0", "transaction_timeout_ms": "-5", "max_poll_records": "0",
    "restore_max_poll_records": "0", "sut": "nosuch", "kafka_version": "3.6.2",
    "streams_config": "no-value", "group_protocol": "stream", "write_buffer_count": "0",
    "window_retention_ms": "5000", "window_segment_ms": "10",
}
RECORDED_ONLY = {"drawn_knobs"}  # written by the run, never typed: checked on reading


def _run_options() -> dict[str, argparse.Action]:
    run = Parser(prog="kchaos run")
    add_run_arguments(run)
    return {a.dest: a for a in run._actions}


def test_every_run_config_field_is_one_declared_setting() -> None:
    names = [f.name for f in dataclasses.fields(RunConfig)]
    assert list(SETTINGS) == names
    flags = [s.flag for s in SETTINGS.values() if s.flag is not None]
    assert len(flags) == len(set(flags))  # no option stands for two settings
    for declared in SETTINGS.values():
        assert declared.help.strip(), declared.name
        assert declared.default == getattr(RunConfig(), declared.name)


def test_a_field_declared_without_its_setting_is_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Undeclared:
        pods: int = setting(2, "worker pods")
        threads: int = 2

    with pytest.raises(TypeError, match=r"Undeclared\.threads is not declared"):
        settings_of(Undeclared)


def test_each_setting_with_a_flag_is_an_option_and_the_rest_are_listed_for_set() -> None:
    options = _run_options()
    for declared in SETTINGS.values():
        if declared.flag is not None:
            assert options[declared.name].option_strings == [declared.flag]
            assert options[declared.name].default is None  # not given: the run resolves it
        else:
            assert declared.name not in options
    run = Parser(prog="kchaos run")
    add_run_arguments(run)
    listed = " ".join(run.format_help().split())
    for declared in SETTINGS.values():
        if declared.flag is None and not declared.many:
            said = " ".join(declared.help_text().split())  # its SUTs first, if any
            assert f"{declared.name}: {said}" in listed, declared.name


def _shown(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def test_the_help_shows_the_declared_default() -> None:
    options = _run_options()
    defaults = RunConfig()
    for declared in SETTINGS.values():
        if declared.flag is None or declared.shown_default is not None:
            continue
        value = getattr(defaults, declared.name)
        help_text = str(options[declared.name].help)
        if value in (None, ()) or value is False:
            assert "default" not in help_text, declared.name
        else:
            assert f"default {_shown(value)})" in help_text, declared.name


def test_profile_help_names_every_profile() -> None:
    help_text = str(_run_options()["profile"].help)
    for profile in PROFILES:
        assert f" {profile}," in help_text or f" {profile};" in help_text, profile


def test_each_validated_setting_has_a_bad_value_here() -> None:
    """A setting given a rule must be given a bad value above, so that it is tried."""
    validated = {s.name for s in SETTINGS.values() if s.rule is not None}
    assert validated == set(BAD_VALUES) | RECORDED_ONLY


@pytest.mark.parametrize("name", sorted(BAD_VALUES))
def test_a_bad_value_is_one_line_and_254(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    declared = SETTINGS[name]
    given = ([declared.flag, BAD_VALUES[name]] if declared.flag
             else ["--set", f"{name}={BAD_VALUES[name]}"])
    err = refused_run(tmp_path / "r", ["--bootstrap", NO_KAFKA, *given], capsys)
    said = f"{declared.flag} " if declared.flag else f"{name}="
    assert err.startswith(f"kchaos: {said}"), err
    assert "no broker answers" not in err, err


def test_a_recorded_setting_is_checked_when_read_back() -> None:
    with pytest.raises(UsageError, match="drawn_knobs=podz: choose one of the knobs"):
        validate(dataclasses.replace(RunConfig(), drawn_knobs=("podz",)))


# A value for each setting that only some SUTs take.
SUT_VALUES: dict[str, Any] = {
    "bugs": ("KAFKA-7672",), "kstreams_version": "4.1.2", "streams_config": ("a=b",),
    "app": "app.jar", "app_class": "a.B", "app_main": "a.C", "app_args": "x",
    "input_spec": "spec.yaml", "oracle": True, "transactional_stores": True,
}


def test_a_setting_of_another_sut_is_refused_by_every_sut_that_lacks_it() -> None:
    assert {s.name for s in SETTINGS.values() if s.sut_needs} == set(SUT_VALUES)
    for name, value in SUT_VALUES.items():
        declared = SETTINGS[name]
        assert declared.sut_needs is not None
        lacking = [k for k in SUT_KINDS.values() if not getattr(k, declared.sut_needs)]
        assert lacking, name
        for sut in lacking:
            config = dataclasses.replace(RunConfig(), sut=sut.name, **{name: value})
            with pytest.raises(UsageError) as caught:
                validate(config)
            said = declared.flag or declared.name  # a --set setting by its name
            assert str(caught.value).startswith(f"{said} "), (name, caught.value)


@pytest.mark.parametrize(("cell", "says"), [
    ({"settings": {"pods": 0}}, "`include.0.settings`: --pods 0: must be at least 1"),
    ({"settings": {"partitions": 0}}, "partitions=0: must be at least 1"),
    ({"args": ["--guarantee", "exactly_once"]}, "--guarantee exactly_once: choose one of"),
])
def test_a_nightly_cell_with_a_refused_value_is_refused_when_loaded(
    cell: dict[str, Any], says: str
) -> None:
    with pytest.raises(UsageError) as caught:
        parse_matrix({"include": [{"profile": "kill", **cell}]}, "m.yaml")
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_kafka_up_reads_the_run_settings_of_its_options() -> None:
    up = build_parser().parse_args(["kafka", "up"])
    assert up.brokers == SETTINGS["brokers"].default
    with pytest.raises(UsageError, match="--brokers 2: kchaos runs clusters of 1 or 3"):
        refused = build_parser().parse_args(["kafka", "up", "--brokers", "2"])
        refused.handler(refused)
