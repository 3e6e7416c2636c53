"""The images the docker platform runs, built on this engine from the repo:

- base: `KCHAOS_BASE_IMAGE` if set (any Debian bookworm image a registry gives, e.g.
  debian:bookworm-slim), else `kchaos-base:bookworm`, made by scripts/docker-base.sh
  (pulled, or debootstrapped where no registry answers);
- broker `kchaos-kafka:<kafka version>`: dockerfiles/kafka.Dockerfile with the jars the harness
  fetched from Maven (one version pin); rebuilt when its inputs change (a label holds
  their hash);
- worker `kchaos-worker:<hash of its inputs>`: the repo's Dockerfile, the worker's
  dependencies only;
- a Java pod `kchaos-jvm-app:<hash of its inputs>` (Kafka Streams SUTs): the broker image's
  Java runtime and the jars of the app's build (dockerfiles/jvm-app.Dockerfile), built the
  first time a run needs it.

`python -m harness.platforms.docker_images` (make images) builds all three and prints how
long each took. A failed build is one line naming its log (HarnessError, exit 255).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

import docker
from docker.errors import BuildError, DockerException, ImageNotFound

from harness.errors import HarnessError, UsageError
from harness.kafka.jars import LOG4J_CONFIG, kafka_libs, kafka_version
from harness.platforms import docker_specs as specs
from harness.sut.base import PodImage

DEFAULT_BASE = "kchaos-base:bookworm"
BASE_SCRIPT = specs.REPO_ROOT / "scripts" / "docker-base.sh"
KAFKA_DOCKERFILE = specs.REPO_ROOT / "dockerfiles" / "kafka.Dockerfile"
KAFKA_RUN = specs.REPO_ROOT / "dockerfiles" / "kafka-run.sh"
JVM_APP_DOCKERFILE = specs.REPO_ROOT / "dockerfiles" / "jvm-app.Dockerfile"
JVM_APP_IMAGE_REPO = "kchaos-jvm-app"
CERTS_DIR = specs.REPO_ROOT / "dockerfiles" / "certs"
HOST_CA_DIR = Path("/usr/local/share/ca-certificates")  # Debian's extra CAs
LABEL_INPUTS = "kchaos.inputs"
BUILD_TIMEOUT_S = 900  # per engine call; a build streams its steps within it


def base_image() -> str:
    return os.environ.get("KCHAOS_BASE_IMAGE") or DEFAULT_BASE


def build_client() -> docker.DockerClient:
    """A client whose calls may last a whole build step (apt-get, pip)."""
    return docker.from_env(timeout=BUILD_TIMEOUT_S)


def ensure_base_image(client: docker.DockerClient) -> str:
    """The base image's name; made locally (scripts/docker-base.sh) when it is ours and
    missing. A registry base (KCHAOS_BASE_IMAGE) is pulled by the build itself."""
    name = base_image()
    if name != DEFAULT_BASE or _exists(client, name):
        return name
    result = subprocess.run(["bash", str(BASE_SCRIPT), name], capture_output=True, text=True)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"no base image {name}: {last.removeprefix('docker-base: ')}")
    return name


def ensure_kafka_image(client: docker.DockerClient, tag: str | None = None,
                       nocache: bool = False, version: str | None = None) -> str:
    """`kchaos-kafka:<version>` with that release's jars (default: the pinned one); built
    when missing or stale."""
    version = version or kafka_version()
    tag = tag or f"{specs.KAFKA_IMAGE_REPO}:{version}"
    libs = kafka_libs(version)
    jars = sorted(libs.glob("*.jar"))
    inputs = _digest([KAFKA_DOCKERFILE, KAFKA_RUN, LOG4J_CONFIG],
                     extra=[base_image(), *(j.name for j in jars)])
    if not nocache and _label(client, tag) == inputs:
        return tag
    base = ensure_base_image(client)
    with tempfile.TemporaryDirectory(prefix="kchaos-kafka-image-") as tmp:
        context = Path(tmp)
        shutil.copy(KAFKA_DOCKERFILE, context / "Dockerfile")
        shutil.copy(KAFKA_RUN, context / "kafka-run.sh")
        shutil.copy(LOG4J_CONFIG, context / "log4j2.properties")
        (context / "libs").mkdir()
        for jar in jars:
            shutil.copy(jar, context / "libs" / jar.name)
        _build(client, context, "Dockerfile", tag, base,
               {LABEL_INPUTS: inputs, specs.LABEL_ROLE: "kafka-image"}, nocache)
    return tag


def ensure_worker_image(client: docker.DockerClient, tag: str | None = None,
                        nocache: bool = False) -> str:
    """The worker image of the current sources, built from the repo's Dockerfile once."""
    tag = tag or specs.worker_image_tag(base=base_image())
    if not nocache and _exists(client, tag):
        return tag
    base = ensure_base_image(client)
    copy_host_certificates()
    _build(client, specs.REPO_ROOT, "Dockerfile", tag, base,
           {specs.LABEL_ROLE: "worker-image"}, nocache)
    return tag


def ensure_pod_image(client: docker.DockerClient, image: PodImage) -> str:
    """The image of a SUT's pods: the worker's, or a Java runtime with the SUT's jars."""
    if image.runtime == "worker":
        return ensure_worker_image(client)
    runtime = ensure_kafka_image(client)
    inputs = _digest([JVM_APP_DOCKERFILE, *image.jars], extra=[runtime])
    tag = f"{JVM_APP_IMAGE_REPO}:{inputs}"
    if _exists(client, tag):
        return tag
    with tempfile.TemporaryDirectory(prefix="kchaos-jvm-app-image-") as tmp:
        context = Path(tmp)
        shutil.copy(JVM_APP_DOCKERFILE, context / "Dockerfile")
        (context / "app").mkdir()
        for jar in image.jars:
            shutil.copy(jar, context / "app" / jar.name)
        _build(client, context, "Dockerfile", tag, runtime,
               {LABEL_INPUTS: inputs, specs.LABEL_ROLE: "jvm-app-image"})
    return tag


def copy_host_certificates() -> list[str]:
    """The host's extra CAs into dockerfiles/certs/: the build's pip trusts what the host's
    does (a TLS-inspecting proxy's CA, if any)."""
    source = Path(os.environ.get("KCHAOS_BUILD_CA_DIR") or HOST_CA_DIR)
    CERTS_DIR.mkdir(parents=True, exist_ok=True)
    copied = []
    for cert in sorted(source.glob("*.crt")) if source.is_dir() else []:
        shutil.copy(cert, CERTS_DIR / cert.name)
        copied.append(cert.name)
    return copied


def _build(client: docker.DockerClient, context: Path, dockerfile: str, tag: str, base: str,
           labels: dict[str, str], nocache: bool = False) -> None:
    log = Path(tempfile.gettempdir()) / f"kchaos-build-{tag.replace(':', '-')}.log"
    lines: list[str] = []
    try:
        # network_mode host: the build's apt-get and pip reach the mirrors as the host
        # does, with or without the engine's NAT (dockerd --iptables=false has none).
        _, stream = client.images.build(
            path=str(context), dockerfile=dockerfile, tag=tag, rm=True, forcerm=True,
            buildargs={"BASE_IMAGE": base}, network_mode="host", labels=labels,
            nocache=nocache,
        )
        lines = [_text(chunk) for chunk in stream]
    except BuildError as exc:
        lines = [_text(chunk) for chunk in exc.build_log]
        log.write_text("".join(lines))
        last = [line.strip() for line in lines if line.strip()][-1:] or [str(exc.msg)]
        raise HarnessError(f"building {tag} failed ({last[0][:160]}): see {log}") from None
    except (DockerException, OSError) as exc:
        raise HarnessError(f"building {tag}: the engine failed ({_first_line(exc)}); "
                           "check `scripts/docker-engine.sh status`") from None
    log.write_text("".join(lines))


def _text(chunk: object) -> str:
    """One chunk of the engine's build output: {"stream": ...} or {"error": ...}."""
    if isinstance(chunk, dict):
        return str(chunk.get("stream", chunk.get("error", "")))
    return ""


def _exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
    except ImageNotFound:
        return False
    return True


def _label(client: docker.DockerClient, tag: str) -> str | None:
    try:
        labels = client.images.get(tag).labels or {}
    except ImageNotFound:
        return None
    return labels.get(LABEL_INPUTS)


def _digest(files: Iterable[Path], extra: Iterable[str] = ()) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    for item in extra:
        digest.update(item.encode() + b"\0")
    return digest.hexdigest()[:12]


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def main() -> int:
    """Build (or find) the three images and print how long each took."""
    from rich.console import Console

    from harness.platforms.docker_engine import require_engine

    console = Console(stderr=True)
    try:
        require_engine()
        client = build_client()
        for what, ensure in (("base", ensure_base_image), ("kafka", ensure_kafka_image),
                             ("worker", ensure_worker_image)):
            started = time.monotonic()
            with console.status(f"image {what} ..."):
                tag = ensure(client)
            console.print(f"{what:7} {tag:40} {time.monotonic() - started:6.1f} s")
    except UsageError as exc:
        console.print(f"error: {exc}")
        return 254
    except HarnessError as exc:
        console.print(f"error: {exc}")
        return 255
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
