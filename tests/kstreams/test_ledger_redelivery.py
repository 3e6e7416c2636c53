"""The Kafka Streams ledger app under at_least_once, after crashes that kept some of one
record's writes (a SIGKILL keeps any subset of the dedup record, the balance record and
the output: three partitions, no transaction). Found by the matrix cell `all` seed 1 on
4.2.2 at_least_once: the dedup record kept, the balance record lost, the event then
skipped for good (lost-history). A Java check against the built app, with Kafka Streams'
MockProcessorContext and in-memory stores: no broker."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.sut.kstreams import build, default_version

CHECK = Path(__file__).parent / "java/dev/kchaos/kstreams/LedgerRedeliveryCheck.java"

pytestmark = pytest.mark.slow  # builds the app with Maven the first time


@pytest.mark.needs("javac", "java")  # scripts/system-packages.txt: openjdk-17-jdk-headless
def test_a_redelivery_applies_what_the_crash_lost_and_nothing_twice(tmp_path: Path) -> None:
    classpath = build(default_version()).classpath
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", classpath, str(CHECK)], check=True,
                   capture_output=True, text=True)
    done = subprocess.run(["java", "-cp", f"{tmp_path}:{classpath}",
                           "dev.kchaos.kstreams.LedgerRedeliveryCheck"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:4] == [
        "ok dedup-kept-balance-lost", "ok balance-kept-dedup-lost", "ok resend-skipped",
        "ok exactly-once-unchanged"]
