"""Errors the CLI turns into one line and an exit code (Jepsen's codes; docs/architecture.md)."""

from __future__ import annotations

import errno

# The verdict codes are the checker's (checker.model), re-exported: one source.
from checker.model import EXIT_INVALID as EXIT_INVALID
from checker.model import EXIT_UNKNOWN as EXIT_UNKNOWN
from checker.model import EXIT_VALID as EXIT_VALID

EXIT_BAD_INPUT = 254
EXIT_HARNESS_FAILED = 255


class UsageError(Exception):
    """Bad input from the user (options, config, results folder, missing tool): exit 254.

    The message is one line that says what to do."""


class HarnessError(Exception):
    """The harness itself failed (a broker that never became ready, ...): exit 255."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM (or SIGHUP) raised as Ctrl-C is, so every `except KeyboardInterrupt` and
    `finally` stops what was started; the exit code is the shell's 128 + signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


class StopSignal:
    """The stop signal this process received (set by the CLI's handler beside the
    Interrupted it raises). A library can swallow that exception: kafka-python's
    bootstrap retried past it and ended in a KafkaTimeoutError, and the run was reported
    as a harness failure (255) instead of stopped (143)."""

    received: int | None = None


# The machine, not the harness: a full disk or a read-only folder is for the user to fix.
ENVIRONMENT_ERRNOS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
}


def environment_problem(exc: BaseException) -> str | None:
    """One line saying what to fix, if `exc` is the machine's (full disk, read-only)."""
    if isinstance(exc, OSError) and exc.errno in ENVIRONMENT_ERRNOS:
        where = f" writing {exc.filename}" if exc.filename else ""
        return (f"{ENVIRONMENT_ERRNOS[exc.errno]}{where}: free some space or pass a "
                "writable --results-dir; what was written so far stays")
    return None


def exit_code_for_exception(exc: BaseException) -> int:
    """The exit code `kchaos` ends with for an exception; run.json records the same."""
    if isinstance(exc, Interrupted):
        return 128 + exc.signum
    if isinstance(exc, KeyboardInterrupt):
        return 130  # 128 + SIGINT
    if StopSignal.received is not None:  # whatever ended the run, the signal stopped it
        return 128 + StopSignal.received
    if isinstance(exc, UsageError) or environment_problem(exc) is not None:
        return EXIT_BAD_INPUT
    return EXIT_HARNESS_FAILED
