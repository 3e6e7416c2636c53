"""Zeller's ddmin: a 1-minimal subset of `items` for which `reproduces` still holds.

Pure: `reproduces` is whatever oracle the caller gives (the shrink reruns a plan K times;
tests give a fake). The order of `items` is kept in every subset tried. At each
granularity the complements (the plan less one chunk) come before the chunks alone: a
failing fault plan usually needs most of its steps, so removals pay off first and every
rerun is minutes. The result is 1-minimal either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def _split(items: Sequence[T], n: int) -> list[list[T]]:
    """`items` in `n` contiguous chunks whose sizes differ by at most one."""
    size, extra = divmod(len(items), n)
    chunks, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        chunks.append(list(items[start:end]))
        start = end
    return [c for c in chunks if c]


def ddmin(items: Sequence[T], reproduces: Callable[[list[T]], bool]) -> list[T]:
    """The smallest subset found such that removing any single item of it no longer
    reproduces (1-minimal). `items` itself is assumed to reproduce (not tested here: the
    caller measures the original first). The empty set is tried first: a failure that
    needs no step at all is the smallest plan there is."""
    current = list(items)
    if current and reproduces([]):
        return []
    n = 2
    while len(current) >= 2:
        chunks = _split(current, n)
        reduced = False
        if n > 2:  # n == 2: each complement is the other chunk, tried below
            for i in range(len(chunks)):  # the rest without one chunk reproduces
                complement = [x for j, c in enumerate(chunks) if j != i for x in c]
                if reproduces(complement):
                    current, n, reduced = complement, max(n - 1, 2), True
                    break
        if not reduced:
            for chunk in chunks:  # a chunk alone reproduces: keep only it
                if len(chunk) < len(current) and reproduces(chunk):
                    current, n, reduced = chunk, 2, True
                    break
        if not reduced:
            if n >= len(current):
                break  # every single item is needed: 1-minimal
            n = min(len(current), 2 * n)
    return current
