#!/usr/bin/env bash
# A Docker engine for kchaos: `up` uses the engine that answers, or (root on Linux only)
# installs docker.io and starts dockerd, recording its PID; `down` stops only a dockerd
# that `up` started; `status` says which. Idempotent: `up` twice starts one daemon.
# `with CMD...` runs CMD with an engine (make test): `up`, the images built, CMD, then
# whatever kchaos-labelled object CMD left removed and the dockerd stopped if `with` started
# it. Where no engine can be had (`up` says 254) CMD runs anyway: its docker tests skip.
#
#   scripts/docker-engine.sh up|down|status
#   scripts/docker-engine.sh with CMD [ARG...]
#
# KCHAOS_ENGINE_DIR   where the PID file and dockerd's log go (default /tmp/kchaos-engine)
# KCHAOS_DOCKERD_ARGS dockerd's flags (default: overlay2 storage where the kernel has
#                     overlayfs, else vfs, which works anywhere but copies every layer;
#                     no iptables: works in a VM or container without netfilter)
# KCHAOS_PYTHON       the Python that builds the images in `with` (default .venv/bin/python)
# Exit codes: 0 an engine answers (up/status) or ours is stopped (down); 3 none answers
# (status); 254 none can be had here (up), with one line saying what to do; `with`: CMD's,
# or 255 when an engine should start here and does not (CMD not run).
set -euo pipefail

STATE_DIR="${KCHAOS_ENGINE_DIR:-/tmp/kchaos-engine}"
PID_FILE="$STATE_DIR/dockerd.pid"
LOG_FILE="$STATE_DIR/dockerd.log"
NET_ARGS="--iptables=false --ip6tables=false"
if grep -qw overlay /proc/filesystems 2>/dev/null; then STORAGE=overlay2; else STORAGE=vfs; fi
DOCKERD_ARGS="${KCHAOS_DOCKERD_ARGS:---storage-driver=$STORAGE $NET_ARGS}"
START_TIMEOUT_S="${KCHAOS_ENGINE_TIMEOUT:-60}"

say() { echo "docker-engine: $*" >&2; }

answers() {
  # The CLI honours DOCKER_HOST and contexts; bounded, a hung engine is no engine.
  command -v docker >/dev/null 2>&1 && timeout 10 docker info >/dev/null 2>&1
}

our_pid() {
  # The recorded PID, if that process is still a dockerd (PIDs are reused).
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE")"
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q dockerd || return 1
  echo "$pid"
}

install_engine() {  # docker.io, from the declared list (scripts/system-packages.txt)
  command -v apt-get >/dev/null 2>&1 || { say "no dockerd and no apt-get: install Docker"; exit 254; }
  bash "$(dirname "$0")/install-system-packages.sh" docker
}

start_dockerd() {  # prints the PID, recorded in PID_FILE
  # shellcheck disable=SC2086  # a list of flags
  setsid dockerd $1 >>"$LOG_FILE" 2>&1 </dev/null &
  echo $! >"$PID_FILE"
  echo $!
}

up() {
  if answers; then
    if pid="$(our_pid)"; then say "up (dockerd $pid, started by this script)"
    else say "up (an engine that was already running; down will leave it)"; fi
    return 0
  fi
  if [[ "$(uname -s)" != Linux || "$(id -u)" != 0 ]]; then
    say "no Docker engine answers and only root on Linux may start one: start Docker (or Docker Desktop), or use --platform local"
    exit 254
  fi
  command -v dockerd >/dev/null 2>&1 || install_engine
  command -v docker >/dev/null 2>&1 || install_engine
  mkdir -p "$STATE_DIR"
  if pid="$(our_pid)"; then  # ours, but not answering (yet): give it the timeout below
    say "dockerd $pid is starting"
  else
    pid="$(start_dockerd "$DOCKERD_ARGS")"
  fi
  for _ in $(seq "$START_TIMEOUT_S"); do
    if answers; then say "up (dockerd $pid started, log $LOG_FILE)"; return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"
      if [[ -z "${KCHAOS_DOCKERD_ARGS:-}" && "$DOCKERD_ARGS" != *vfs* ]]; then
        say "dockerd exited at start with overlay2: again with vfs"
        DOCKERD_ARGS="--storage-driver=vfs $NET_ARGS"
        pid="$(start_dockerd "$DOCKERD_ARGS")"
        continue
      fi
      say "dockerd exited at start: $(tail -n 1 "$LOG_FILE")"
      exit 255
    fi
    sleep 1
  done
  say "dockerd $pid does not answer after ${START_TIMEOUT_S}s: see $LOG_FILE"
  exit 255
}

down() {
  local pid
  if ! pid="$(our_pid)"; then
    rm -f "$PID_FILE"
    say "nothing of ours to stop"
    return 0
  fi
  kill -TERM "$pid"
  for _ in $(seq 30); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "dockerd $pid ignored SIGTERM for 30 s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PID_FILE"
  say "down (dockerd $pid stopped)"
}

status() {
  if answers; then
    if pid="$(our_pid)"; then echo "up: dockerd $pid, started by this script"
    else echo "up: an engine this script did not start"; fi
    return 0
  fi
  echo "down"
  exit 3
}

sweep() {
  # What a crashed or killed run left on the engine (run labels): named, then removed.
  local kind ids
  for kind in container volume network; do
    case $kind in
      container) ids="$(docker ps -aq --filter label=kchaos.run)" ;;
      volume) ids="$(docker volume ls -q --filter label=kchaos.run)" ;;
      network) ids="$(docker network ls -q --filter label=kchaos.run)" ;;
    esac
    [[ -n "$ids" ]] || continue
    say "left behind, removed: $kind $(echo "$ids" | tr '\n' ' ')"
    # shellcheck disable=SC2086  # a list of ids
    case $kind in
      container) docker rm -f -v $ids >/dev/null ;;
      volume) docker volume rm -f $ids >/dev/null ;;
      network) docker network rm $ids >/dev/null ;;
    esac
  done
}

with_engine() {
  [[ $# -gt 0 ]] || { echo "usage: $0 with CMD [ARG...]" >&2; exit 254; }
  local ours_before=0 code=0
  if our_pid >/dev/null; then ours_before=1; fi  # a dockerd of ours already up stays up
  (up) || code=$?
  if [[ $code == 254 ]]; then
    say "no engine here: the docker tests skip"
    exec "$@"
  fi
  if [[ $ours_before == 0 ]] && our_pid >/dev/null; then  # started just now: stop it after
    trap 'sweep || true; down' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
  fi
  [[ $code == 0 ]] || exit 255
  # A failed build fails the docker tests that need its image (each says why); the rest
  # of CMD still runs.
  "${KCHAOS_PYTHON:-.venv/bin/python}" -m harness.platforms.docker_images \
    || say "the images could not be built: the docker tests will fail"
  "$@" || code=$?
  return "$code"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  with) shift; with_engine "$@" ;;
  *) echo "usage: $0 up|down|status|with CMD..." >&2; exit 254 ;;
esac
