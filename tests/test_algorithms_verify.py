"""Symbolic verification: every algorithm delivers its collective; broken ones do not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netsim.algorithms import AlgoOptions, build_schedule, problems, verify
from netsim.errors import ScheduleError
from netsim.schedule import COMPUTE, SEND, ScheduleBuilder

from algorithm_cases import every_algorithm, options_for

RANKS = (2, 3, 4, 5, 6, 8)
KNOBS = ({}, {"chunks": 3, "gamma": 5e9}, {"chunks": 2, "root": 1})


@pytest.mark.parametrize("op,algorithm", every_algorithm(),
                         ids=lambda x: getattr(x, "name", x))
@pytest.mark.parametrize("p", RANKS)
def test_every_algorithm_delivers_its_collective(op, algorithm, p):
    ran = 0
    for knobs in KNOBS:
        options = options_for(algorithm, p, **knobs)
        if not algorithm.applies(p, options):
            assert algorithm.power_of_two and p & (p - 1)
            continue
        schedule = build_schedule(op, algorithm.name, p, 1e6, options)
        assert problems(schedule, op, p) == []
        assert schedule.meta["op"] == op and schedule.meta["algorithm"] == algorithm.name
        ran += 1
    assert ran or algorithm.power_of_two


def test_one_rank_is_an_empty_schedule():
    for op, algorithm in every_algorithm():
        options = options_for(algorithm, 2)
        if algorithm.requires in ("grid", "reducing-switch", "groups"):
            continue
        assert build_schedule(op, algorithm.name, 1, 1e6, options).num_sends == 0


# -- broken schedules must fail ----------------------------------------------------------

def edit(schedule, *, drop=None, duplicate=None, cut_deps=None, rescale=None):
    """A copy of ``schedule`` with one op dropped (its dependants inherit its deps), one
    send duplicated, one op's deps removed, or ``rescale = (op, factor)`` bytes scaled."""
    b = ScheduleBuilder(schedule.num_ranks, meta=dict(schedule.meta))
    new_id: dict[int, list[int]] = {}
    for i in range(schedule.num_ops):
        deps = [] if i == cut_deps else [d for old in schedule.deps(i).tolist()
                                         for d in new_id[old]]
        if i == drop:
            new_id[i] = deps
            continue
        kind = int(schedule.kind[i])
        if kind == SEND:
            nbytes = float(schedule.nbytes[i])
            if rescale is not None and rescale[0] == i:
                nbytes *= rescale[1]
            copies = 2 if i == duplicate else 1
            ops = [b.send(int(schedule.src[i]), int(schedule.dst[i]), nbytes, deps,
                          data=schedule.data.get(i)) for _ in range(copies)]
            new_id[i] = ops[:1]
        elif kind == COMPUTE:
            new_id[i] = [b.compute(int(schedule.src[i]), float(schedule.seconds[i]), deps)]
        else:
            new_id[i] = [b.barrier(deps)]
    return b.build()


def sends(schedule):
    return np.flatnonzero(schedule.kind == SEND).tolist()


BROKEN_CASES = [("allreduce", "ring", 4), ("allreduce", "halving_doubling", 6),
                ("allreduce", "dbtree", 5), ("reducescatter", "halving", 5),
                ("allgather", "bruck", 6), ("alltoall", "bruck", 5),
                ("broadcast", "binomial", 6), ("reduce", "chain", 4)]


@pytest.mark.parametrize("op,name,p", BROKEN_CASES)
def test_the_unbroken_schedule_passes(op, name, p):
    verify(build_schedule(op, name, p, 1e6, AlgoOptions(chunks=2)), op, p)


@pytest.mark.parametrize("op,name,p", BROKEN_CASES)
def test_dropping_any_send_fails(op, name, p):
    schedule = build_schedule(op, name, p, 1e6, AlgoOptions(chunks=2))
    for i in sends(schedule):
        assert problems(edit(schedule, drop=i), op, p), f"dropping send {i} went unnoticed"


@pytest.mark.parametrize("op,name,p", BROKEN_CASES)
def test_wrong_byte_counts_fail(op, name, p):
    schedule = build_schedule(op, name, p, 1e6)
    for i in sends(schedule)[::3]:
        with pytest.raises(ScheduleError, match="bytes"):
            verify(edit(schedule, rescale=(i, 0.5)), op, p)


@pytest.mark.parametrize("op,name,p", [c for c in BROKEN_CASES
                                       if c[0] in ("allreduce", "reducescatter", "reduce")])
def test_a_duplicated_partial_contribution_fails(op, name, p):
    schedule = build_schedule(op, name, p, 1e6)
    complete = frozenset(range(p))
    partial = [i for i in sends(schedule)
               if any(c != complete for _, c in schedule.data[i])]
    assert partial
    for i in partial:
        with pytest.raises(ScheduleError, match="twice"):
            verify(edit(schedule, duplicate=i), op, p)


def test_a_send_that_does_not_wait_for_its_data_fails():
    """The 'fast but wrong' schedule: forwarding before the data has arrived."""
    schedule = build_schedule("allreduce", "ring", 5, 1e6)
    forwarding = [i for i in sends(schedule) if schedule.deps(i).size]
    for i in forwarding:
        with pytest.raises(ScheduleError, match="only holds"):
            verify(edit(schedule, cut_deps=i), "allreduce", 5)


def test_a_fabricated_contributor_fails():
    schedule = build_schedule("allreduce", "recursive_doubling", 4, 1e6)
    data = dict(schedule.data)
    first = sends(schedule)[0]
    (piece, contributors), = data[first]
    data[first] = ((piece, contributors | {3}),)
    from dataclasses import replace
    with pytest.raises(ScheduleError, match="claims piece"):
        verify(replace(schedule, data=data), "allreduce", 4)


def test_an_unannotated_schedule_fails():
    schedule = build_schedule("allreduce", "ring", 4, 1e6, AlgoOptions(extra={"annotate": False}))
    assert schedule.data == {}
    with pytest.raises(ScheduleError, match="no data annotation"):
        verify(schedule, "allreduce", 4)


def test_a_reduce_scatter_is_not_an_all_reduce():
    schedule = build_schedule("reducescatter", "ring", 4, 1e6)
    found = problems(schedule, "allreduce", 4)
    assert found and "ends without piece" in found[0]


ALGORITHMS = every_algorithm()


@settings(max_examples=60, deadline=None)
@given(case=st.integers(0, len(ALGORITHMS) - 1), p=st.integers(2, 12),
       chunks=st.integers(1, 3), gamma=st.sampled_from([None, 1e9]), root=st.integers(0, 11))
def test_random_cases_verify(case, p, chunks, gamma, root):
    op, algorithm = ALGORITHMS[case]
    if algorithm.requires == "grid" and p not in (2, 3, 4, 5, 6, 7, 8, 9, 12):
        return
    options = options_for(algorithm, p, chunks=chunks, gamma=gamma, root=root % p)
    if not algorithm.applies(p, options):
        return
    assert problems(build_schedule(op, algorithm.name, p, 1e6, options), op, p) == []
