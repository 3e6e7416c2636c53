"""The Spring Boot word count (workloads/app-examples-spring) as it is deployed: built with
Maven into its executable jar (spring-boot-maven-plugin, Boot 4.0.7 from Maven Central),
given as that jar, run under SIGKILLs, seed 1. kchaos unpacks the jar, runs its Start-Class
with the app's Logback in place of the launcher's logging, takes over the KafkaStreams that
spring-kafka's StreamsBuilderFactoryBean constructs, and the oracle finds it valid. The real
thing: Maven, a broker, the pods, the nemesis, the reference, Spark."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.runs import app_valid_under_kills

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow, pytest.mark.needs("mvn")]

EXAMPLE = Path(__file__).resolve().parents[2] / "workloads" / "app-examples-spring"
START_CLASS = "dev.kchaos.examples.spring.SpringWordCount"


def executable_jar(tmp_path: Path) -> Path:
    """`mvn package` of a copy of the example (its target/ in the copy)."""
    project = tmp_path / "spring-word-count"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("target"))
    built = subprocess.run(["mvn", "-q", "-B", "-f", str(project / "pom.xml"), "package",
                            "-DskipTests"], capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return project / "target" / "spring-word-count-1.jar"


@pytest.mark.timeout(1800)
def test_the_spring_boot_jar_is_valid_under_kills(tmp_path: Path, spark_url: str) -> None:
    jar = executable_jar(tmp_path)
    run_dir, app = app_valid_under_kills(tmp_path / "results", jar,
                                         EXAMPLE / "word-count.yaml", spark_url)
    assert app["entry"]["app_main"] == START_CLASS  # the Start-Class, not the JarLauncher
    assert app["logging_binding"] == ["logback-classic"], app
    assert app["app_config"]["application.id"] == "spring-word-count", app  # its properties
    assert "kafka-streams" in app["dropped_dependencies"], app
    logs = [p.read_text(errors="replace") for p in run_dir.glob("pods/*/worker.log")]
    assert any(":: Spring Boot ::" in log and "Started SpringWordCount" in log
               for log in logs), "no pod log shows Spring Boot starting the app"
