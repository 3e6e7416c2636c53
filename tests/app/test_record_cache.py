"""An app runs with the record cache it is deployed with: its own setting, Kafka Streams'
default where it sets none, the run's only where --streams-config (or the spec's config)
says so; meta.json and the report's app table say the size and whose choice it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.report.app_page import app_facts
from harness.sut.app import KAFKA_STREAMS_CACHE_BYTES, TopologyDescription, UserApp


def described(streams_config: tuple[str, ...], app_config: dict[str, str]) -> UserApp:
    """A UserApp as `prepare` leaves it, without a build: its settings and description."""
    app = UserApp.__new__(UserApp)
    app.streams_config = streams_config
    app._app_config = app_config
    app._description = TopologyDescription((), (), ("out",), False, (), ("s",))
    return app


@pytest.mark.parametrize(("streams_config", "app_config", "cache"), [
    ((), {}, (KAFKA_STREAMS_CACHE_BYTES, "Kafka Streams' default")),
    ((), {"statestore.cache.max.bytes": "0"}, (0, "the app's")),
    ((), {"cache.max.bytes.buffering": "2048"}, (2048, "the app's")),
    (("statestore.cache.max.bytes = 4096",), {"statestore.cache.max.bytes": "0"},
     (4096, "the run's --streams-config")),
    (("a=1",), {"statestore.cache.max.bytes": "1", "cache.max.bytes.buffering": "9"},
     (1, "the app's")),
])
def test_the_cache_is_the_apps_unless_the_run_says(
        streams_config: tuple[str, ...], app_config: dict[str, str],
        cache: tuple[int, str]) -> None:
    assert described(streams_config, app_config).record_cache() == cache


def test_a_cache_size_that_is_no_number_is_refused() -> None:
    with pytest.raises(UsageError, match="a number of bytes"):
        described(("statestore.cache.max.bytes=ten",), {}).record_cache()


def test_the_report_says_the_cache_and_whose(tmp_path: Path) -> None:
    (tmp_path / "history").mkdir()
    run = {"config": {"sut": "app", "app": "app.jar", "guarantee": "exactly_once_v2"}}

    def cache_row(app: dict[str, object]) -> str:
        (tmp_path / "history" / "meta.json").write_text(json.dumps({"app": app}))
        facts = app_facts(tmp_path, run)
        assert facts is not None
        return dict(facts.rows)["record cache"]

    assert cache_row({"record_cache_bytes": 10485760,
                      "record_cache_chosen_by": "Kafka Streams' default"}) == \
        "10485760 bytes (Kafka Streams' default)"
    assert cache_row({"record_cache_bytes": 0, "record_cache_chosen_by": "the app's"}) == \
        "off (0 bytes) (the app's)"
    assert cache_row({}) == "off (0 bytes, the run's)"  # a run from before: forced off
