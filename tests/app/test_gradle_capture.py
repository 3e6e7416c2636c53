"""The windowed-count example as Gradle would ship it (tests/gradle_layout.py), described by
the launcher: from its installDist folder the main is the start script's and Kafka's own jars
give way to the launcher's; from its shadow jar (Kafka Streams inside, META-INF/services
merged) the main is the manifest's and the Java agent still captures the KafkaStreams the
main builds. Slow: it builds the examples and the launcher (both cached)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradle_layout import EXAMPLE_MAIN, example_install, example_jars, example_spec, shadow_jar

from harness.app.guarantee import BY_APP, ChosenGuarantee
from harness.config.run import resolve
from harness.sut.app import UserApp

OWN_GUARANTEE = ChosenGuarantee("exactly_once_v2", BY_APP)  # WindowedCount's main sets it

pytestmark = [pytest.mark.slow, pytest.mark.needs("mvn")]


def described(app: Path, spec: Path) -> UserApp:
    user_app = UserApp.from_config(resolve({"sut": "app", "app": str(app),
                                            "input_spec": str(spec)}))
    user_app.prepare()
    return user_app


def test_an_install_folder_runs_the_main_its_start_script_names(tmp_path: Path) -> None:
    app = described(example_install(tmp_path), example_spec(tmp_path))
    assert app.entry.app_main == EXAMPLE_MAIN
    assert app.description.sources == ("clicks",) and app.description.sinks
    assert {"kafka-streams", "kafka-clients"} <= set(app.dropped)
    assert app.guarantee() == OWN_GUARANTEE  # its main's, captured
    assert not app.bundled


def test_a_shadow_jar_is_captured_with_kafka_streams_inside(tmp_path: Path) -> None:
    jar = shadow_jar(tmp_path / "windowed-count-all.jar", example_jars(tmp_path / "work"),
                     EXAMPLE_MAIN)
    app = described(jar, example_spec(tmp_path))
    assert app.entry.app_main == EXAMPLE_MAIN
    assert app.bundled == (jar.name,)
    assert app.description.sources == ("clicks",)
    assert app.guarantee() == OWN_GUARANTEE
