"""Errors the CLI turns into one line and an exit code (Jepsen's codes; docs/architecture.md)."""

from __future__ import annotations

EXIT_VALID = 0
EXIT_INVALID = 1
EXIT_UNKNOWN = 2
EXIT_BAD_INPUT = 254
EXIT_HARNESS_FAILED = 255


class UsageError(Exception):
    """Bad input from the user (options, config, results folder, missing tool): exit 254.

    The message is one line that says what to do."""


class HarnessError(Exception):
    """The harness itself failed (a broker that never became ready, ...): exit 255."""
