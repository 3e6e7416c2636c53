"""Maven, the one way kchaos gets Java from Maven Central: Kafka's jars, the Kafka Streams
apps it builds, a user's app. One call shape, so that every failure reads the same: the
first ERROR line of Maven's output, and the full log kept beside what it was making."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Sequence
from pathlib import Path

from harness.errors import UsageError
from harness.kafka.jars import require_tool

MVN_HINT = "install Maven (e.g. `apt-get install maven`)"


def run_maven(args: Sequence[str], log: Path, what: str, hint: str = "") -> None:
    """`mvn -q -B ARGS`, its output kept in `log`; UsageError "could not WHAT (first ERROR
    line)[; HINT]; log: LOG" when it fails."""
    mvn = require_tool("mvn", f"{MVN_HINT} to {what}")
    # -B alone still colours the ERROR lines quoted in the one-line message.
    result = subprocess.run([mvn, "-q", "-B", "-Dstyle.color=never", *args],
                            capture_output=True, text=True)
    output = result.stdout + result.stderr
    log.write_text(output)
    if result.returncode != 0:
        errors = [line for line in output.splitlines() if "ERROR" in line]
        first = (errors or ["no output"])[0].strip()[:300]
        raise UsageError(f"could not {what} ({first}){'; ' + hint if hint else ''}; "
                         f"log: {log}")


def sources_digest(app_dir: Path, *shared: Path) -> str:
    """Of an app tree's pom and sources, and the `shared` source trees it compiles too: an
    edited app is never run from a stale build."""
    digest = hashlib.sha256()
    for root in (app_dir, *shared):
        for path in sorted([root / "pom.xml", *(root / "src").rglob("*")]):
            if path.is_file():
                digest.update(str(path.relative_to(root.parent)).encode() + b"\0"
                              + path.read_bytes())
    return digest.hexdigest()[:12]
