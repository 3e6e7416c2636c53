"""The soak profile (faults/soak.py, the nightly's long cell): its plan is a pure function
of the seed and the sizes, and it keeps meeting faults over the whole time limit, window
after window, each window `all`'s mix drawn from its own stream (Hypothesis)."""

from __future__ import annotations

import json
from itertools import pairwise

from hypothesis import example, given, settings
from hypothesis import strategies as st

from faults.builder import QUIET_TAIL_S
from faults.model import FIRST_FAULT_S
from faults.plan import plan, profile_config
from faults.soak import SOAK, WINDOW_S, windows
from harness.nightly import load_matrix
from harness.nightly.matrix import run_timeout, time_limits

seeds = st.integers(min_value=0, max_value=2**31)
pods = st.integers(1, 4)
brokers = st.sampled_from([1, 3])
limits = st.floats(min_value=10, max_value=3000, allow_nan=False)
# Long enough for a fault: `all` (and so each window) starts at 6 s and stops 8 s early.
with_faults = st.floats(min_value=FIRST_FAULT_S + QUIET_TAIL_S + 1, max_value=3000,
                        allow_nan=False)
# The longest stretch without a new fault: a crash's quiet (16 s) after a bag gap, or a
# window's quiet tail and the next window's first fault (8 + 6 s) after a gap of 6 s, or
# a zombie pause's takeover (no fault up to 18 s after it at the soak's 10 s session,
# faults/windows.py) reaching past the quiet tail: 18 + 8 + 6 s.
MAX_GAP_S = 32.0


def _json(seed: int, n_pods: int, n_brokers: int, limit: float) -> str:
    return json.dumps(plan(seed, SOAK, n_pods, n_brokers, limit).to_json(), sort_keys=True)


@given(seeds, pods, brokers, limits)
@settings(max_examples=60, deadline=None)
@example(1, 2, 1, 1500.0)  # the default matrix's soak cell
def test_the_soak_plan_is_a_pure_function_of_its_inputs(
    seed: int, n_pods: int, n_brokers: int, limit: float
) -> None:
    assert _json(seed, n_pods, n_brokers, limit) == _json(seed, n_pods, n_brokers, limit)


@given(limits)
@settings(max_examples=200, deadline=None)
@example(1500.0)
@example(449.9)
@example(450.0)
def test_the_windows_cover_the_time_limit(limit: float) -> None:
    spans = windows(limit)
    assert spans[0][0] == 0 and spans[-1][1] == limit
    assert all(a[1] == b[0] for a, b in pairwise(spans))  # no gap
    assert all(end - start == WINDOW_S for start, end in spans[:-1])
    if len(spans) > 1:  # the last takes the rest: between half a window and one and a half
        assert WINDOW_S / 2 <= spans[-1][1] - spans[-1][0] < 1.5 * WINDOW_S


@given(seeds, pods, brokers, with_faults)
@settings(max_examples=60, deadline=None)
@example(1, 2, 1, 1500.0)
def test_faults_keep_coming_over_the_whole_time_limit(
    seed: int, n_pods: int, n_brokers: int, limit: float
) -> None:
    drawn = plan(seed, SOAK, n_pods, n_brokers, limit)
    assert drawn.profile == SOAK and not drawn.ordered  # a bag, as `all`
    assert drawn.config == profile_config("all") == profile_config(SOAK)
    assert [s.id for s in drawn.steps] == list(range(len(drawn.steps)))
    times = sorted(s.trigger.at_s for s in drawn.steps)
    assert times and all(0 <= t < limit for t in times)
    # Never a long stretch without a fault: from the start, between faults, to the end of
    # the load (bar the quiet tail).
    edges = [0.0, *times, limit - QUIET_TAIL_S]
    assert max(b - a for a, b in pairwise(edges)) <= MAX_GAP_S
    # Every window of the load has faults of its own, from FIRST_FAULT_S on.
    for start, end in windows(limit):
        inside = [t for t in times if start <= t < end]
        assert inside and min(inside) == start + FIRST_FAULT_S
        # Plans keep times to 0.1 s: a fractional limit's last draw may round up 0.05 s.
        assert max(inside) <= end - QUIET_TAIL_S + 0.05 + 1e-6
    # Scaled-out pods never share a name (numbered on across windows).
    spares = [s.target for s in drawn.steps if s.fault == "scale-out"]
    assert len(spares) == len(set(spares))


@given(seeds, pods, brokers, st.integers(2, 8), st.integers(1, 4))
@settings(max_examples=40, deadline=None)
def test_a_longer_soak_keeps_the_windows_before_it(
    seed: int, n_pods: int, n_brokers: int, count: int, more: int
) -> None:
    """Window k is drawn from (seed, k) alone: a longer time limit adds windows and leaves
    the complete windows before them as they were."""
    short = plan(seed, SOAK, n_pods, n_brokers, count * WINDOW_S)
    longer = plan(seed, SOAK, n_pods, n_brokers, (count + more) * WINDOW_S)
    cut = (count - 1) * WINDOW_S  # the last window of `short` is complete in both too
    assert [s for s in short.steps if s.trigger.at_s < cut] == [
        s for s in longer.steps if s.trigger.at_s < cut]
    assert len(longer.steps) > len(short.steps)


def test_windows_differ_and_seeds_differ() -> None:
    """Not one mix repeated: each window its own draw, each seed its own plan."""
    drawn = plan(1, SOAK, 2, 1, 1500.0)

    def window(k: int) -> list[tuple[str, float]]:
        return [(s.fault, round(s.trigger.at_s - k * WINDOW_S, 1)) for s in drawn.steps
                if k * WINDOW_S <= s.trigger.at_s < (k + 1) * WINDOW_S]

    assert len({json.dumps(window(k)) for k in range(5)}) == 5
    assert _json(1, 2, 1, 1500.0) != _json(2, 2, 1, 1500.0)


def test_the_default_matrix_has_one_soak_cell_with_time_for_it() -> None:
    matrix = load_matrix(None)
    soaks = [(n, c) for n, c in enumerate(matrix.cells) if c.profile == SOAK]
    assert len(soaks) == 1
    (n, cell), limits_s = soaks[0], time_limits(matrix)
    assert cell.bugs == () and 1200 <= limits_s[n] <= 1800  # 20-30 minutes
    # Stopped only well after its load and check: not at the 60 s runs' timeout.
    assert run_timeout(matrix, limits_s[n]) >= 3 * limits_s[n]
