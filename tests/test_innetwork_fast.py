"""In-network reduction built as arrays: the same schedule and the same times as
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


def _run(topo, schedule, overhead):
    from netsim.engine import simulate

    nodes = np.concatenate([topo.first_endpoints(schedule.num_ranks - len(schedule.extra_nodes)),
                            np.asarray(schedule.extra_nodes, np.int64)])
    return simulate(topo, schedule, nodes, overhead=overhead)


@pytest.mark.parametrize("n,planes,chunks,rb", [(4, 1, 1, None), (4, 2, 4, 5e10),
                                                (4, 1, 3, 5e10), (8, 2, 2, None),
                                                (8, 1, 4, 5e10), (8, 2, 3, 2e10)])
@pytest.mark.parametrize("op", ["allreduce", "reducescatter"])
def test_one_barrier_for_all_copies_keeps_every_finish_time(monkeypatch, op, n, planes,
                                                            chunks, rb):
    """With one link per GPU and switch, the copies of all owners arrive together, so one
    barrier for all of them changes no op's finish time (1e-9 relative): against the
    schedule where each reduction waits for its own n copies, with latency and a
    per-message overhead, and the ALU (rb) slow enough to be on the critical path."""
    topo = _machine(n, planes, rb, latency=1e-6)
    options = AlgoOptions(topology=topo, chunks=chunks, extra={"annotate": False})
    new = build_schedule(op, "innetwork", n, 3e6, options)
    monkeypatch.setattr(innetwork, "_one_link_each", lambda *args: False)
    old = build_schedule(op, "innetwork", n, 3e6, options)
    kept = new.kind != 2                              # the barriers are the only new ops
    assert kept.sum() == old.num_ops and (~kept).sum() == chunks * planes
    assert np.array_equal(new.kind[kept], old.kind) and np.array_equal(new.dst[kept], old.dst)
    a, b = _run(topo, new, 2e-7), _run(topo, old, 2e-7)
    np.testing.assert_allclose(a.op_finish[kept], b.op_finish, rtol=1e-9, atol=0)
    np.testing.assert_allclose(a.op_start[kept], b.op_start, rtol=1e-9, atol=0)
    assert a.makespan == pytest.approx(b.makespan, rel=1e-9)


def test_parallel_links_keep_one_wait_per_owner():
    """Two links per GPU and switch: a hashing router may put a rank's copies on different
    links, so they need not arrive together and no barrier is added."""
    topo = nvswitch(4, switches=1, links=2, bandwidth="200GB/s", reduce=True)
    s = build_schedule("allreduce", "innetwork", 4, 1e6,
                       AlgoOptions(topology=topo, extra={"annotate": False}))
    assert not (s.kind == 2).any()


@pytest.mark.parametrize("factor", [0.0, 0.5])
def test_one_barrier_keeps_finish_times_under_a_fault(monkeypatch, factor):
    """A GPU -> switch link fails (rerouted) or slows mid-run: the copies still share one
    path and finish together, so the barrier changes no finish time."""
    from netsim.engine.faults import Fault

    topo = _machine(8, 2, 5e10, latency=1e-6)
    options = AlgoOptions(topology=topo, chunks=3, extra={"annotate": False})
    new = build_schedule("allreduce", "innetwork", 8, 3e6, options)
    monkeypatch.setattr(innetwork, "_one_link_each", lambda *args: False)
    old = build_schedule("allreduce", "innetwork", 8, 3e6, options)
    link = int(np.flatnonzero((topo.link_src == 1) & (topo.link_dst == new.extra_nodes[0]))[0])
    fault = [Fault((link,), 5e-6, factor)]
    nodes = list(range(8)) + list(new.extra_nodes)
    from netsim.engine import simulate

    a = simulate(topo, new, nodes, faults=fault)
    b = simulate(topo, old, nodes, faults=fault)
    np.testing.assert_allclose(a.op_finish[new.kind != 2], b.op_finish, rtol=1e-9, atol=0)
