#!/usr/bin/env bash
# The fault filesystem (faults/faultfs) needs Debian's fuse3 (fusermount3, libfuse3) and
# /dev/fuse. Installed when missing and we are root; otherwise say so and go on: only runs
# with storage faults need it (they refuse to start without it, exit 254).
set -euo pipefail
if command -v fusermount3 >/dev/null && ldconfig -p | grep -q 'libfuse3\.so'; then
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -q fuse3 >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q fuse3 >/dev/null; }
else
    echo "note: fuse3 is not installed (apt-get install fuse3 as root): storage faults unavailable" >&2
fi
