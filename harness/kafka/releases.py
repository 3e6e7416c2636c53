"""The Kafka Streams releases Maven Central serves, oldest first, and ranges of them.

Read from the artifact's maven-metadata.xml (the list Maven itself resolves versions
from), kept in the cache folder so that a bisect started offline still knows the list
it saw last. Only final releases (X.Y.Z): release candidates are not published there.
"""

from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from pathlib import Path

from common.files import write_atomically
from harness.errors import UsageError
from harness.kafka.jars import cache_root

DEFAULT_REPOSITORY = "https://repo.maven.apache.org/maven2"
METADATA_PATH = "org/apache/kafka/kafka-streams/maven-metadata.xml"
RELEASE = re.compile(r"^\d+\.\d+\.\d+$")
# The oldest release the ledger app has a source tree for (harness/sut/kstreams.py: the
# legacy tree from 2.1 on; Kafka 4 brokers refuse older clients, KIP-896).
OLDEST_BUILDABLE = "2.1.0"


def release_key(version: str) -> tuple[int, ...]:
    """Orders releases as Maven Central names them (X.Y.Z); a suffix sorts by its numbers."""
    return tuple(int(part) for part in version.replace("-", ".").split(".") if part.isdigit())


def _cached_metadata() -> Path:
    return cache_root() / "kafka-streams-maven-metadata.xml"


def fetch_metadata() -> str:
    """The metadata from Maven Central (or KCHAOS_MAVEN_REPOSITORY), else the cached copy."""
    base = os.environ.get("KCHAOS_MAVEN_REPOSITORY", DEFAULT_REPOSITORY).rstrip("/")
    cached = _cached_metadata()
    try:
        with urllib.request.urlopen(f"{base}/{METADATA_PATH}", timeout=30) as reply:
            text = str(reply.read().decode())
    except (OSError, urllib.error.URLError) as exc:
        if cached.is_file():
            return cached.read_text()
        raise UsageError(f"cannot list Kafka Streams releases from {base} ({exc}) and no "
                         "copy is cached: connect to Maven Central, or set "
                         "KCHAOS_MAVEN_REPOSITORY to a mirror") from exc
    cached.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(cached, text)
    return text


def releases(metadata: str) -> list[str]:
    found = {v for v in re.findall(r"<version>([^<]+)</version>", metadata) if RELEASE.match(v)}
    return sorted(found, key=release_key)


def in_range(all_releases: list[str], spec: str, default_low: str) -> list[str]:
    """`A..B` (both inclusive; either may be left out: `A..`, `..B`) over the buildable
    releases; without a spec, from `default_low` (the failing run's release) to the newest."""
    low, sep, high = (spec or f"{default_low}..").partition("..")
    if not sep:
        raise UsageError(f"--versions {spec}: give a range A..B of releases, e.g. 4.1.0..4.2.2")
    for end in (low, high):
        if end and not RELEASE.match(end):
            raise UsageError(f"--versions {spec}: {end!r} is not a release like 4.1.2")
    low = max(low or OLDEST_BUILDABLE, OLDEST_BUILDABLE, key=release_key)
    chosen = [v for v in all_releases if release_key(low) <= release_key(v)
              and (not high or release_key(v) <= release_key(high))]
    if len(chosen) < 2:
        raise UsageError(f"--versions {spec or low + '..'}: Maven Central serves "
                         f"{len(chosen)} release(s) of Kafka Streams there from "
                         f"{OLDEST_BUILDABLE} on (the app's oldest): give a range with two "
                         "or more")
    return chosen
