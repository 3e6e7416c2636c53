#!/usr/bin/env bash
# `make test-fresh`: set-up and the fast tier (`make setup test-fast`) in a fresh container,
# to catch a missing install step before CI does (CI runs on a machine that keeps what
# earlier work installed by hand). The container is the project's own base image
# (scripts/docker-base.sh: debootstrap where no registry answers) plus a fresh machine's
# prerequisites (dockerfiles/fresh.Dockerfile), and a clone of the committed HEAD, as CI
# clones main; everything else must come from the project's own set-up.
#
# It runs with what root on a machine has for the suite (network and mount namespaces,
# FUSE: the capabilities below, not --privileged, which asks for every capability and is
# refused where the engine itself runs with fewer) on the host's network (apt, PyPI and
# Maven Central; the namespace tests clean up what they make, as on the host). A Docker
# engine it had to start is stopped again.
#
#   scripts/test-fresh.sh [MAKE TARGET...]     (default: setup test-fast)
#
# KCHAOS_FRESH_CACHE  pip's download cache across checks (default ~/.cache/kchaos/fresh-pip):
#                     downloads only, nothing installed, so it hides no install step.
# Exit codes: the container's make's; 254 no engine can be had (one line says why).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
IMAGE=kchaos-fresh:bookworm
if [[ $# -gt 0 ]]; then TARGETS=("$@"); else TARGETS=(setup test-fast); fi
CACHE="${KCHAOS_FRESH_CACHE:-$HOME/.cache/kchaos/fresh-pip}"
say() { echo "test-fresh: $*" >&2; }

started_engine=0
if ! bash scripts/docker-engine.sh status >/dev/null 2>&1; then
  bash scripts/docker-engine.sh up
  started_engine=1
fi
WORK="$(mktemp -d /tmp/kchaos-fresh.XXXXXX)"
NAME="kchaos-fresh-$$"
cleanup() {
  docker rm -f "$NAME" >/dev/null 2>&1 || true
  rm -rf "$WORK"
  if [[ $started_engine == 1 ]]; then bash scripts/docker-engine.sh down; fi
}
trap cleanup EXIT

bash scripts/docker-base.sh
mkdir -p "$WORK/context/certs" "$CACHE"
cp scripts/system-packages.txt scripts/install-system-packages.sh "$WORK/context/"
# The host's extra CAs (Debian's place for them): the registries may sit behind a proxy
# that the machine trusts and a bare image does not.
cp /usr/local/share/ca-certificates/*.crt "$WORK/context/certs/" 2>/dev/null || true
say "building $IMAGE (the base image and a fresh machine's prerequisites)"
docker build --force-rm --network host -q -t "$IMAGE" -f dockerfiles/fresh.Dockerfile "$WORK/context" >/dev/null

git clone -q "$REPO" "$WORK/kchaos"
say "make ${TARGETS[*]} in a fresh container, on $(git -C "$WORK/kchaos" log -1 --format='%h %s')"
start=$SECONDS
status=0
docker run --name "$NAME" --label kchaos.run=fresh --network host \
  --cap-add SYS_ADMIN --cap-add NET_ADMIN --cap-add NET_RAW --device /dev/fuse \
  --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
  -v "$WORK/kchaos:/kchaos" -v "$CACHE:/root/.cache/pip" -w /kchaos -e CI=true \
  -e http_proxy -e https_proxy -e no_proxy -e HTTP_PROXY -e HTTPS_PROXY -e NO_PROXY \
  "$IMAGE" make "${TARGETS[@]}" || status=$?
say "make ${TARGETS[*]} exited $status after $((SECONDS - start)) s in the container"
exit "$status"
