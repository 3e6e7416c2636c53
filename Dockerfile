# The kchaos worker image: the streams worker (the system under test), entrypoint
# `python -m workloads.worker`; the harness and `docker compose` pass WorkerConfig.argv.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HOME=/tmp

WORKDIR /opt/kchaos

# Dependencies first, from pyproject.toml alone (empty packages stand in for the sources),
# so an edit to the sources rebuilds only the last layers.
COPY pyproject.toml ./
RUN mkdir harness workloads faults checker \
    && touch README.md harness/__init__.py workloads/__init__.py faults/__init__.py \
       checker/__init__.py \
    && pip install . \
    && pip uninstall -y kchaos

COPY README.md ./
COPY harness ./harness
COPY workloads ./workloads
COPY faults ./faults
COPY checker ./checker
RUN pip install --no-deps . \
    && rm -rf build *.egg-info

# Mount points. World-writable (sticky) because the harness runs pods as its own uid:
# a fresh named volume copies this directory's mode, so any uid can write its state.
RUN mkdir -p /kchaos/state /kchaos/pod && chmod 1777 /kchaos/state /kchaos/pod
VOLUME ["/kchaos/state"]

# The worker closes cleanly (writes its checkpoints) on SIGTERM, docker stop's signal.
STOPSIGNAL SIGTERM
ENTRYPOINT ["python", "-m", "workloads.worker"]
