"""ddmin as a pure function, against fake oracles whose minimal answer is known."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.shrink.ddmin import ddmin


def needs(*required: int):  # type: ignore[no-untyped-def]
    calls: list[list[int]] = []

    def reproduces(subset: list[int]) -> bool:
        calls.append(subset)
        return set(required) <= set(subset)

    return reproduces, calls


def test_finds_the_two_steps_a_failure_needs() -> None:
    reproduces, _ = needs(2, 5)
    assert ddmin(list(range(8)), reproduces) == [2, 5]


def test_a_failure_without_any_step_shrinks_to_nothing() -> None:
    reproduces, calls = needs()
    assert ddmin([1, 2, 3], reproduces) == []
    assert calls == [[]]


def test_every_step_needed_stays_whole_and_order_is_kept() -> None:
    reproduces, calls = needs(3, 1, 2)
    assert ddmin([3, 1, 2], reproduces) == [3, 1, 2]
    assert all(c == [x for x in [3, 1, 2] if x in c] for c in calls)


def test_a_flaky_oracle_still_ends_with_a_subset_that_passed() -> None:
    passed: list[list[int]] = []

    def reproduces(subset: list[int]) -> bool:  # only even-sized sets with 4 "fail"
        ok = 4 in subset and len(subset) % 2 == 0
        if ok:
            passed.append(subset)
        return ok

    result = ddmin(list(range(10)), reproduces)
    assert result in passed


@given(st.lists(st.integers(0, 15), unique=True, min_size=1, max_size=16), st.data())
def test_result_is_one_minimal(items: list[int], data: st.DataObject) -> None:
    required = data.draw(st.lists(st.sampled_from(items), unique=True, max_size=4))
    reproduces, _ = needs(*required)
    result = ddmin(items, reproduces)
    assert reproduces(result)
    assert sorted(result) == sorted(required)  # monotone oracle: exactly what is needed
    for i in range(len(result)):  # removing any single item breaks it
        assert not reproduces(result[:i] + result[i + 1:])
