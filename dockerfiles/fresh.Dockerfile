# `make test-fresh` (scripts/test-fresh.sh): a fresh machine as the README describes one,
# the project's own Debian base image plus the prerequisites a fresh machine has (the
# `given` group of scripts/system-packages.txt: Python, a JDK, Maven, make, git) and
# nothing else, so that whatever else the suite needs must come from the project's set-up.
ARG BASE_IMAGE=kchaos-base:bookworm
FROM ${BASE_IMAGE}
# The machine's trust, as a fresh machine of this workplace has it: its extra CA
# certificates (a TLS-inspecting proxy before the registries; usually none) and the
# variables that point Python's clients at Debian's bundle. Not a package of ours.
COPY certs/ /usr/local/share/ca-certificates/
COPY system-packages.txt install-system-packages.sh /opt/kchaos-fresh/
RUN bash /opt/kchaos-fresh/install-system-packages.sh given \
    && update-ca-certificates >/dev/null \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 LANG=C.UTF-8 \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
