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
