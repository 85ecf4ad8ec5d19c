"""The collective ops have one owner (``netsim.schedule.ops``) that every user reads."""

from __future__ import annotations

import pickle

import pytest

import netsim
from netsim.algorithms import algorithms_for
from netsim.algorithms.bounds import BOUND_OPS
from netsim.placement import PHASE_OPS
from netsim.report import BUSBW_FACTOR, busbw_factor
from netsim.schedule import ops


def test_every_user_reads_the_one_list():
    assert netsim.OPS is ops.OPS
    assert BUSBW_FACTOR is ops.BUSBW_FACTOR
    assert BOUND_OPS is ops.OPS
    assert PHASE_OPS[:-1] == ops.OPS and PHASE_OPS[-1] == "sendrecv"
    assert tuple(ops.BUSBW_FACTOR) == ops.OPS


@pytest.mark.parametrize("op", ops.OPS)
def test_every_op_has_algorithms_and_a_picklable_factor(op):
    assert algorithms_for(op)
    assert pickle.loads(pickle.dumps(ops.BUSBW_FACTOR[op]))(8) == busbw_factor(op, 8)


@pytest.mark.parametrize("n", [2, 3, 8, 64])
def test_factor_is_the_ring_traffic_per_rank_over_the_buffer(n):
    # A ring moves (n-1)/n S through each rank per pass; all-reduce makes two passes,
    # broadcast and reduce hand the whole buffer on once.
    per_pass = (n - 1) / n
    expected = {"allreduce": 2 * per_pass, "allgather": per_pass, "reducescatter": per_pass,
                "alltoall": per_pass, "broadcast": 1.0, "reduce": 1.0}
    assert {op: busbw_factor(op, n) for op in ops.OPS} == pytest.approx(expected)
