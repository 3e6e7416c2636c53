#!/usr/bin/env bash
# The base image kchaos's Dockerfiles build FROM (their BASE_IMAGE build argument), made
# here when no registry can give one: `debian:bookworm-slim` pulled if it can be, otherwise
# a Debian bookworm root filesystem from Debian's packages (debootstrap), imported.
#
#   scripts/docker-base.sh [TAG]      (default kchaos-base:bookworm; nothing to do if present)
#
# With a registry you need none of this: KCHAOS_BASE_IMAGE=debian:bookworm-slim (or
# `--build-arg BASE_IMAGE=...`) and the Dockerfiles pull it as usual.
# KCHAOS_DEBIAN_MIRROR  the mirror debootstrap uses (default deb.debian.org)
# Exit codes: 0 the image is there; 254 it cannot be made here (one line says why).
set -euo pipefail

TAG="${1:-kchaos-base:bookworm}"
UPSTREAM="debian:bookworm-slim"
MIRROR="${KCHAOS_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

say() { echo "docker-base: $*" >&2; }

if ! timeout 10 docker info >/dev/null 2>&1; then
  say "no Docker engine answers: run scripts/docker-engine.sh up first"
  exit 254
fi
if docker image inspect "$TAG" >/dev/null 2>&1; then
  exit 0
fi
if timeout 60 docker pull -q "$UPSTREAM" >/dev/null 2>&1; then
  docker tag "$UPSTREAM" "$TAG"
  say "$TAG is $UPSTREAM (pulled)"
  exit 0
fi
if [[ "$(id -u)" != 0 ]]; then
  say "cannot pull $UPSTREAM and debootstrap needs root: run this as root, or set KCHAOS_BASE_IMAGE to an image you can pull"
  exit 254
fi
bash "$(dirname "$0")/install-system-packages.sh" docker  # debootstrap, from the one list
command -v debootstrap >/dev/null 2>&1 || { say "debootstrap is missing: apt-get install debootstrap"; exit 254; }
ROOTFS="$(mktemp -d /tmp/kchaos-base.XXXXXX)"
trap 'rm -rf "$ROOTFS"' EXIT
say "cannot pull $UPSTREAM: building $TAG with debootstrap (about a minute)"
if ! debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1; then
  say "debootstrap failed ($(tail -n 1 "$ROOTFS.log")): see $ROOTFS.log"
  exit 254
fi
rm -f "$ROOTFS.log"
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
tar -C "$ROOTFS" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["bash"]' - "$TAG" >/dev/null
say "$TAG built from Debian bookworm packages"
