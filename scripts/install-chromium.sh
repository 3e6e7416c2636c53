#!/bin/sh
# Install Debian's headless-capable Chromium for the report tests (tests/report).
# Idempotent: does nothing when /usr/bin/chromium is already there, so `make test` can
# call it every time. Needs root (apt); without it, say what to run instead of failing
# half-way, and let the browser tests skip with their own reason.
set -eu

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    # not fatal: the browser tests skip with the reason, the rest of the suite runs
    echo "install-chromium: $CHROMIUM is missing and this is not root; the browser tests" \
         "will skip (to run them: sudo apt-get update && sudo apt-get install -y chromium)" >&2
    exit 0
fi

# Non-interactive so a CI image without a TTY never stops at a debconf prompt.
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y chromium
"$CHROMIUM" --version
