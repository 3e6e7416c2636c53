"""Formatted KRaft storage from a template: one `kafka-storage format` JVM per cluster shape.

For a combined broker+controller with static voters (`controller.quorum.voters`), Kafka
4.x `format` writes two files into the log dir: `bootstrap.checkpoint` (the metadata
version, feature levels and bootstrap config records, e.g. min.insync.replicas; no
cluster or node id, only a timestamp and CRCs differ between two formats of the same
config) and `meta.properties` (version, cluster.id, node.id and a directory.id that must
be unique per directory). So a template formatted once per (Kafka version, the config
without its per-node keys) is copied into each node, with a meta.properties of the
node's own ids. A template that holds anything else is not used: format as before.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

META = "meta.properties"
BOOTSTRAP = "bootstrap.checkpoint"
TEMPLATE_FILES = frozenset({META, BOOTSTRAP})
# Differ between the nodes of one cluster (and ports between clusters); the rest of the
# config is what `format` reads into bootstrap.checkpoint.
NODE_KEYS = frozenset({"node.id", "listeners", "advertised.listeners",
                       "controller.quorum.voters", "log.dirs"})
NODE_META_KEYS = ("cluster.id", "node.id", "directory.id")


def random_kafka_uuid() -> str:
    """A Kafka Uuid as its tools print it: URL-safe base64 of 16 random bytes without
    padding, and (as Kafka's Uuid.randomUuid) no leading '-' a command line would misread."""
    while True:
        raw = uuid.uuid4().bytes
        text = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
        # Kafka reserves the ids whose high 64 bits are 0 and low bits < 100.
        reserved = raw[:8] == bytes(8) and int.from_bytes(raw[8:], "big") < 100
        if not text.startswith("-") and not reserved:
            return text


def shared_config(properties: str) -> str:
    """The config lines every node of a cluster shares, in a stable order."""
    lines = []
    for line in properties.splitlines():
        key = line.split("=", 1)[0].strip()
        if line.strip() and not line.lstrip().startswith("#") and key not in NODE_KEYS:
            lines.append(line.strip())
    return "\n".join(sorted(lines))


def template_key(version: str, properties: str) -> str:
    digest = hashlib.sha256(f"{version}\n{shared_config(properties)}".encode()).hexdigest()
    return f"kafka-{version}-{digest[:16]}"


def with_log_dir(properties: str, log_dir: Path) -> str:
    """The same config with its data in `log_dir` (where the template is formatted)."""
    lines = [line for line in properties.splitlines() if not line.startswith("log.dirs=")]
    return "\n".join([*lines, f"log.dirs={log_dir}"]) + "\n"


def node_meta(template_meta: str, cluster_id: str, node_id: int, directory_id: str) -> str:
    """The template's meta.properties with this node's ids; raises ValueError if the
    template lacks one of them (a Kafka whose format writes something else)."""
    values = {"cluster.id": cluster_id, "node.id": str(node_id), "directory.id": directory_id}
    seen: set[str] = set()
    lines = []
    for line in template_meta.splitlines():
        key = line.split("=", 1)[0].strip()
        if key in values and not line.lstrip().startswith("#"):
            seen.add(key)
            line = f"{key}={values[key]}"
        lines.append(line)
    missing = set(NODE_META_KEYS) - seen
    if missing:
        raise ValueError(f"template meta.properties has no {', '.join(sorted(missing))}")
    return "\n".join(lines) + "\n"


def is_template(folder: Path) -> bool:
    try:
        return {p.name for p in folder.iterdir()} == TEMPLATE_FILES
    except OSError:
        return False


def ensure_template(templates: Path, key: str, format_into: Callable[[Path], None]) -> Path | None:
    """The template folder for `key`, formatted with `format_into(folder)` the first time
    (into a temporary folder renamed into place: concurrent starts never see half of
    one). None if what `format` wrote is not the expected two files."""
    folder = templates / key
    if is_template(folder):
        return folder
    templates.mkdir(parents=True, exist_ok=True)
    temporary = templates / f"{key}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        format_into(temporary)
        if not is_template(temporary):
            return None
        with contextlib.suppress(OSError):  # another start may have put one there first
            os.rename(temporary, folder)
        return folder if is_template(folder) else None
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def copy_template(template: Path, data_dir: Path, cluster_id: str, node_id: int) -> None:
    """A node's formatted log dir; meta.properties last (and atomically), so a dir that
    has it is a complete one."""
    meta = node_meta((template / META).read_text(), cluster_id, node_id, random_kafka_uuid())
    data_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template / BOOTSTRAP, data_dir / BOOTSTRAP)
    partial = data_dir / f".{META}.tmp"
    partial.write_text(meta)
    os.replace(partial, data_dir / META)
