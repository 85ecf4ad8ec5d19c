"""In-network reduction built as arrays (issue 12): the same schedule and the same times as
the per-piece build it replaces."""

import numpy as np
import pytest

from netsim.algorithms import AlgoOptions, build_schedule
from netsim.algorithms import innetwork
from netsim.topology import nvswitch


def _loop_reductions(plan, switch, copies, seconds, previous):
    """The per-piece build this module replaced: one compute1 call per row."""
    done, previous = [], int(previous)
    for row in copies.tolist():
        previous = plan.compute1(switch, seconds, row + [previous])
        done.append(previous)
    return np.array(done, dtype=np.int64)


def _machine(n: int, planes: int, reduce_bandwidth, latency=0.0):
    return nvswitch(n, switches=planes, bandwidth=f"{100 * planes}GB/s", latency=latency,
                    reduce=True, reduce_bandwidth=reduce_bandwidth)


CASES = [(n, planes, chunks, rb) for n in (4, 8) for planes in (1, 2) for chunks in (1, 3)
         for rb in (None, 5e10)]


@pytest.mark.parametrize("op", ["allreduce", "reducescatter", "allgather"])
@pytest.mark.parametrize("n,planes,chunks,rb", CASES)
def test_array_build_is_the_per_piece_build(monkeypatch, op, n, planes, chunks, rb):
    topo = _machine(n, planes, rb)
    options = AlgoOptions(topology=topo, chunks=chunks, extra={"annotate": False})
    new = build_schedule(op, "innetwork", n, 1e6, options)
    monkeypatch.setattr(innetwork, "_serial_reductions", _loop_reductions)
    old = build_schedule(op, "innetwork", n, 1e6, options)
    for field in ("kind", "src", "dst", "nbytes", "seconds", "dep_ptr", "dep_idx", "tag"):
        assert np.array_equal(getattr(new, field), getattr(old, field)), field
    assert new.extra_nodes == old.extra_nodes
