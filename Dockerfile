# The kchaos worker image: the streams worker (the system under test) and only its
# dependencies; entrypoint `python -m workloads.worker`, the harness and compose pass
# WorkerConfig.argv. BASE_IMAGE is any Debian bookworm image: kchaos-base:bookworm is made
# by scripts/docker-base.sh where no registry answers; with one, debian:bookworm-slim.
ARG BASE_IMAGE=kchaos-base:bookworm
FROM ${BASE_IMAGE} AS python

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    HOME=/tmp \
    PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONPATH=/opt/kchaos

# dockerfiles/certs/*.crt: extra CA certificates the build trusts (a TLS-inspecting proxy
# between pip and PyPI); `make images` copies the host's there, usually there are none.
COPY dockerfiles/certs/ /usr/local/share/ca-certificates/
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       python3 python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && update-ca-certificates \
    && python3 -m venv /opt/venv

# The worker imports kafka-python (+ crc32c, its fast checksums) and rocksdict, nothing
# else: their pins are read from pyproject.toml (one pin for harness and image), so the
# image has neither pyspark nor plotly. In a stage of its own: an edit elsewhere in
# pyproject.toml leaves the same requirements, and pip's layer stays cached.
FROM python AS pins
ARG WORKER_PACKAGES="kafka-python crc32c rocksdict"
COPY pyproject.toml dockerfiles/pins.py /tmp/
RUN python /tmp/pins.py /tmp/pyproject.toml ${WORKER_PACKAGES} > /tmp/requirements.txt

FROM python
COPY --from=pins /tmp/requirements.txt /tmp/requirements.txt
RUN pip install -r /tmp/requirements.txt

COPY workloads /opt/kchaos/workloads
# Byte-compiled now: pods cannot write here (they run as the harness's uid), so without
# this every container start compiles the worker again.
RUN python -m compileall -q /opt/kchaos/workloads

# Mount points. World-writable (sticky) because the harness runs pods as its own uid:
# a fresh named volume copies this directory's mode, so any uid can write its state.
RUN mkdir -p /kchaos/state /kchaos/pod && chmod 1777 /kchaos/state /kchaos/pod
VOLUME ["/kchaos/state"]
WORKDIR /opt/kchaos

# The worker closes cleanly (writes its checkpoints) on SIGTERM, docker stop's signal.
STOPSIGNAL SIGTERM
ENTRYPOINT ["python", "-m", "workloads.worker"]
