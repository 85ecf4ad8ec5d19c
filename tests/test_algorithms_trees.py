"""Tree schedules built in blocks (algorithms.trees) are the one-op loops' ops, exactly.

Without annotation (every collective run) reduce-up and broadcast-down write each tree and
chunk as one block; with it they run op by op and track what every send carries. The two
must give the same schedule array for array: same ops, order, sizes, durations and
dependencies, with and without reduction costs (``gamma``), for chains, binomial trees
(one message at a time per rank) and double binary trees.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netsim.algorithms import AlgoOptions, get_algorithm

CASES = [("allreduce", "dbtree"), ("broadcast", "chain"), ("broadcast", "binomial"),
         ("reduce", "chain"), ("reduce", "binomial")]


def _arrays(schedule):
    return (schedule.kind, schedule.src, schedule.dst, schedule.nbytes, schedule.seconds,
            schedule.dep_ptr, schedule.dep_idx, schedule.tag)


@pytest.mark.parametrize("op,name", CASES)
@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 70), chunks=st.integers(1, 6), gamma=st.sampled_from([None, 3e10]),
       root=st.integers(0, 69))
def test_block_build_equals_the_one_op_build(op, name, n, chunks, gamma, root):
    algo = get_algorithm(op, name)
    options = AlgoOptions(chunks=chunks, gamma=gamma, root=root % n)
    blocks = algo.build(n, 1e6, replace(options, extra={"annotate": False}))
    loops = algo.build(n, 1e6, replace(options, extra={"annotate": True}))
    assert loops.data and not blocks.data            # the loops ran where annotated
    for a, b in zip(_arrays(blocks), _arrays(loops)):
        assert a.shape == b.shape and np.array_equal(a, b)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 24), seed=st.integers(0, 2**31 - 1), gamma=st.sampled_from([None, 5e9]),
       serial=st.booleans(), chunks=st.lists(st.integers(1, 4), min_size=1, max_size=3))
def test_reduce_up_and_broadcast_down_in_blocks_with_waits(n, seed, gamma, serial, chunks):
    """The two steps straight on a plan: several trees (random parents) with different
    chunk counts, each rank first waiting for up to two earlier ops of its own."""
    from netsim.algorithms.plan import Plan, join
    from netsim.algorithms.trees import _tree, broadcast_down, reduce_up

    rng = np.random.default_rng(seed)
    trees = []
    for t, count in enumerate(chunks):
        order = rng.permutation(n)
        parent = [-1] * n
        for i in range(1, n):
            parent[order[i]] = int(order[rng.integers(0, i)])
        trees.append((_tree(int(order[0]), parent),
                      [np.arange(t * 4 + j, t * 4 + j + 1) for j in range(count)]))

    def build(annotate: bool):
        plan = Plan("allreduce", n, 1e6, 4 * len(chunks),
                    AlgoOptions(gamma=gamma, extra={"annotate": annotate}))
        first = plan.computes(np.arange(n), 1e-6)
        second = plan.computes(np.arange(n), 2e-6, first)
        waits = rng_waits.integers(0, 3, n)
        ready = join(np.where(waits >= 1, first, -1), np.where(waits >= 2, second, -1))
        at_root = reduce_up(plan, trees, ready, tag="up")
        got = broadcast_down(plan, trees, at_root, ready, serial=serial, tag="down")
        plan.computes(np.arange(n), 1e-6, got)
        return plan.build()

    rng_waits = np.random.default_rng(seed)
    blocks = build(False)
    rng_waits = np.random.default_rng(seed)
    loops = build(True)
    for a, b in zip(_arrays(blocks), _arrays(loops)):
        assert a.shape == b.shape and np.array_equal(a, b)
