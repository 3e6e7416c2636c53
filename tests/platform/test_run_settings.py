"""`kchaos run --set KEY=VALUE` pins any run setting a broad profile would draw, typed by
its field; `--knobs default` turns the draw off; bad input is one line and 254."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import assert_bad_input, kchaos

from harness.config.run import parse_setting, resolve
from harness.errors import UsageError


def test_set_pins_a_drawn_knob_and_the_rest_still_draw() -> None:
    drawn = resolve({"profile": "all", "seed": 4})
    assert "session_timeout_ms" in drawn.drawn_knobs
    key, value = parse_setting("session-timeout-ms=6000")
    pinned = resolve({"profile": "all", "seed": 4, key: value})
    assert pinned.session_timeout_ms == 6000
    assert "session_timeout_ms" not in pinned.drawn_knobs and pinned.drawn_knobs


def test_knobs_default_draws_nothing() -> None:
    config = resolve({"profile": "all", "seed": 4}, draw_knobs=False)
    assert config.drawn_knobs == ()
    assert config == resolve({"profile": "all", "seed": 4, "guarantee": config.guarantee},
                             draw_knobs=False)


@pytest.mark.parametrize(("text", "says"), [
    ("session_timout_ms=6000", "did you mean 'session_timeout_ms'"),
    ("partitions=four", "takes a whole number"),
    ("bugs=KAFKA-7672", "not a single value"),
    ("partitions", "KEY=VALUE"),
])
def test_bad_settings_are_refused(text: str, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        parse_setting(text)


def test_a_misspelt_setting_on_the_command_line_is_one_line(tmp_path: Path) -> None:
    result = kchaos("run", "--set", "max_pol_records=10", cwd=tmp_path)
    assert_bad_input(result, "--set max_pol_records=10", "max_poll_records")
    assert not (tmp_path / "results").exists()
