#!/usr/bin/env bash
# Installs what is missing of the system packages of GROUP... (scripts/system-packages.txt,
# the one declared list), with apt-get, as root. Idempotent and quick when nothing is
# missing (probes only, no apt-get). Not root, or no apt-get: one line per missing package
# saying what needs it and how to install it, exit 0: the tests that need it skip and say
# why, the runs that need it refuse with one line (254).
#
#   scripts/install-system-packages.sh GROUP...        (given, core, test, docker)
#   scripts/install-system-packages.sh --check GROUP...   what is missing; installs nothing
#
# Exit codes: 0 nothing missing, installed, or not ours to install; 3 (--check) something
# is missing; 254 bad usage; 1 apt-get failed or a probe still fails after the install.
set -euo pipefail

LIST="$(cd "$(dirname "$0")" && pwd)/system-packages.txt"
say() { echo "system-packages: $*" >&2; }

check_only=0
if [[ "${1:-}" == --check ]]; then check_only=1; shift; fi
if [[ $# -eq 0 ]]; then
  say "name one or more groups (given, core, test, docker): see $LIST"
  exit 254
fi
groups=" $* "
for g in "$@"; do
  if ! grep -Eq "^$g[[:space:]]" "$LIST"; then
    say "no group '$g' in $LIST (groups: given, core, test, docker)"
    exit 254
  fi
done

probe_ok() {  # a command on PATH, or PYTHON:MODULE that PYTHON imports
  local probe="$1"
  if [[ "$probe" == *:* ]]; then
    command -v "${probe%%:*}" >/dev/null 2>&1 && "${probe%%:*}" -c "import ${probe#*:}" 2>/dev/null
  else
    command -v "$probe" >/dev/null 2>&1
  fi
}

missing_lines() {  # "package probe purpose" of each failing probe in the groups asked for
  local group package probe purpose
  while read -r group package probe purpose; do
    [[ -z "$group" || "$group" == \#* ]] && continue
    [[ "$groups" == *" $group "* ]] || continue
    probe_ok "$probe" || echo "$package $probe $purpose"
  done <"$LIST"
}

mapfile -t missing < <(missing_lines)
[[ ${#missing[@]} -eq 0 ]] && exit 0

packages=()
for line in "${missing[@]}"; do
  package="${line%% *}"
  [[ " ${packages[*]:-} " == *" $package "* ]] || packages+=("$package")
done

if [[ $check_only == 1 ]]; then
  for line in "${missing[@]}"; do read -r package probe purpose <<<"$line"
    say "missing $probe (package $package): $purpose"; done
  exit 3
fi

if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  for line in "${missing[@]}"; do read -r package probe purpose <<<"$line"
    say "note: $probe is missing, so $purpose is unavailable (as root: apt-get install $package)"
  done
  exit 0
fi

say "installing ${packages[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# No recommends: what a package merely recommends must not hide a missing line above.
if ! apt-get install -y -qq --no-install-recommends "${packages[@]}" >/tmp/kchaos-apt.log 2>&1; then
  say "apt-get install ${packages[*]} failed: see /tmp/kchaos-apt.log"
  exit 1
fi
mapfile -t still < <(missing_lines)
if [[ ${#still[@]} -gt 0 ]]; then
  say "still missing after the install: ${still[*]} (fix scripts/system-packages.txt)"
  exit 1
fi
