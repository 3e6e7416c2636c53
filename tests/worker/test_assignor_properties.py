"""Properties of the streams assignor over random groups: every task has one active, the
standbys sit on other processes, shares stay fair, the answer does not depend on the order
members arrive in, and an unchanged group keeps its assignment."""

from __future__ import annotations

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from workloads.worker.assignor import MemberInfo, TaskAssignment, compute_assignment

PROCESSES = ["pod-0", "pod-1", "pod-2", "pod-3"]


@st.composite
def groups(draw: st.DrawFn) -> tuple[list[str], list[MemberInfo], int]:
    """Tasks, members (threads of processes, with random previous tasks and local state)
    and the standby count."""
    tasks = [f"0_{p}" for p in range(draw(st.integers(0, 12)))]
    some_tasks = st.frozensets(st.sampled_from(tasks)) if tasks else st.just(frozenset[str]())
    members = []
    for process in draw(st.lists(st.sampled_from(PROCESSES), min_size=1, unique=True)):
        for thread in range(1, draw(st.integers(1, 3)) + 1):
            members.append(MemberInfo(
                f"{process}-T{thread}-id", process, f"StreamThread-{thread}",
                prev_active=draw(some_tasks), prev_standby=draw(some_tasks),
                local=draw(some_tasks),
            ))
    return tasks, members, draw(st.integers(0, 2))


def _owners(result: dict[str, TaskAssignment], kind: str) -> dict[str, list[str]]:
    owners: dict[str, list[str]] = {}
    for member, assignment in result.items():
        for task in getattr(assignment, kind):
            owners.setdefault(task, []).append(member)
    return owners


def _process(members: list[MemberInfo]) -> dict[str, str]:
    return {m.member_id: m.process for m in members}


@given(groups())
@settings(max_examples=100, deadline=None)
def test_every_task_has_exactly_one_active(group: tuple[list[str], list[MemberInfo], int]) -> None:
    tasks, members, standbys = group
    result = compute_assignment(tasks, members, standbys)
    assert set(result) == {m.member_id for m in members}
    actives = _owners(result, "active")
    assert sorted(actives) == sorted(tasks)
    assert all(len(holders) == 1 for holders in actives.values())


@given(groups())
@settings(max_examples=100, deadline=None)
def test_standbys_sit_on_distinct_other_processes(
    group: tuple[list[str], list[MemberInfo], int],
) -> None:
    tasks, members, standbys = group
    result = compute_assignment(tasks, members, standbys)
    process = _process(members)
    active_process = {t: process[ms[0]] for t, ms in _owners(result, "active").items()}
    standby_owners = _owners(result, "standby")
    n_processes = len(set(process.values()))
    for task in tasks:
        holders = [process[m] for m in standby_owners.get(task, [])]
        assert len(holders) == len(set(holders)), f"{task}: two standbys in one process"
        assert active_process[task] not in holders, f"{task}: standby beside its active"
        assert len(holders) == min(standbys, n_processes - 1)


@given(groups())
@settings(max_examples=100, deadline=None)
def test_no_process_takes_more_than_its_fair_share(
    group: tuple[list[str], list[MemberInfo], int],
) -> None:
    tasks, members, standbys = group
    result = compute_assignment(tasks, members, standbys)
    threads: dict[str, int] = {}
    for m in members:
        threads[m.process] = threads.get(m.process, 0) + 1
    for process, n in threads.items():
        share = math.ceil(len(tasks) * n / len(members))
        placed = sum(len(result[m.member_id].active) for m in members if m.process == process)
        assert placed <= share, f"{process}: {placed} actives over its share {share}"


@given(groups(), st.randoms(use_true_random=False))
@settings(max_examples=60, deadline=None)
def test_member_order_does_not_matter(
    group: tuple[list[str], list[MemberInfo], int], rnd: random.Random,
) -> None:
    tasks, members, standbys = group
    shuffled = list(members)
    rnd.shuffle(shuffled)
    assert compute_assignment(tasks, shuffled, standbys) == compute_assignment(
        tasks, members, standbys
    )


@given(groups())
@settings(max_examples=60, deadline=None)
def test_an_unchanged_group_keeps_its_actives(
    group: tuple[list[str], list[MemberInfo], int],
) -> None:
    tasks, members, standbys = group
    first = compute_assignment(tasks, members, standbys)
    again = [
        MemberInfo(m.member_id, m.process, m.thread,
                   prev_active=frozenset(first[m.member_id].active),
                   prev_standby=frozenset(first[m.member_id].standby), local=m.local)
        for m in members
    ]
    second = compute_assignment(tasks, again, standbys)
    assert {m: a.active for m, a in second.items()} == {m: a.active for m, a in first.items()}
