"""In-network reduction one plane per class: the runner builds and simulates one
plane of every class of alike planes and expands the result; the same times, link loads
and flow count as the build of every plane, and every plane built when they differ."""

from dataclasses import replace

import numpy as np
import pytest

from netsim.algorithms import AlgoOptions, build_schedule
from netsim.algorithms.innetwork_planes import plane_classes, plane_map
from netsim.run import run_collective
from netsim.topology import nvswitch, parse_topology


def _machine(n: int, planes: int, reduce_bandwidth, latency=0.0):
    return nvswitch(n, switches=planes, bandwidth=f"{100 * planes}GB/s", latency=latency,
                    reduce=True, reduce_bandwidth=reduce_bandwidth)


def _both(op, topo, size, *, chunks=None, ranks=None, algo="innetwork", router=None,
          alpha=None, extra=None):
    """(the runner's result, the result of the build of every plane)."""
    extra = extra or {}
    runs = [run_collective(op, topo, algo, size, ranks=ranks, router=router, alpha=alpha,
                           options=AlgoOptions(chunks=chunks, extra={**extra, **more}))
            for more in ({}, {"planes": False})]
    return runs[0].result, runs[1].result


def _close(a, b, rel):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape
    assert np.all(np.abs(a - b) <= rel * np.maximum(np.abs(b), 1e-300)), \
        float(np.max(np.abs(a - b)))


def _same(reduced, full, planes=None, simulated=None):
    assert "planes" not in full.meta
    if planes is not None:
        assert reduced.meta["planes"] == {"planes": planes, "simulated": simulated}
    _close([reduced.makespan], [full.makespan], 1e-12)
    for field in ("op_release", "op_start", "op_finish"):
        _close(getattr(reduced, field), getattr(full, field), 1e-12)
    for field in ("link_bytes", "link_busy"):
        _close(getattr(reduced, field), getattr(full, field), 1e-9)
    assert np.array_equal(reduced.link_peak_flows, full.link_peak_flows)
    assert reduced.num_flows == full.num_flows
    assert reduced.events == full.events
    assert np.array_equal(reduced.op_tags, full.op_tags)
    assert np.array_equal(reduced.placement, full.placement)


@pytest.mark.parametrize("op", ["allreduce", "reducescatter", "allgather"])
@pytest.mark.parametrize("n,planes,chunks,rb,lat", [
    (4, 3, 1, None, 0.0), (4, 3, 4, 5e10, 1e-6), (8, 5, 2, None, 1e-6), (8, 4, 3, 2e10, 0.0)])
def test_two_planes_are_every_plane(op, n, planes, chunks, rb, lat):
    """NVL72-like (one link per GPU and switch), with and without a switch ALU rate and
    latency: the expanded run of two planes is the full one, op by op and link by link."""
    reduced, full = _both(op, _machine(n, planes, rb, lat), 1e6, chunks=chunks, alpha=2e-6)
    _same(reduced, full, planes, 2)


@pytest.mark.parametrize("preset,n", [("dgx-h100", 4), ("dgx-h100", 8), ("dgx-b200", 8)])
@pytest.mark.parametrize("op", ["allreduce", "reducescatter"])
def test_presets_with_their_calibration(preset, n, op):
    """DGX H100 cables its 4 switches 5/4/4/5: two classes of planes ({0, 3}, {1, 2}),
    sprayed over parallel links; DGX B200 has 2 alike planes; calibrated ALU rate and
    alpha. Two planes built per class is all of them here: the run is the full one."""
    topo = parse_topology(preset)
    reduced, full = _both(op, topo, 64e6, chunks=2, ranks=n)
    switches = [int(v) for v in np.flatnonzero(topo.is_switch)]
    classes = plane_classes(topo.first_endpoints(n), topo, switches)
    assert classes == ([[0, 3], [1, 2]] if preset == "dgx-h100" else [[0, 1]])
    assert "planes" not in reduced.meta
    _same(reduced, full)


def test_nccl_nvls_runs_one_plane_and_keeps_its_time():
    """--algo nccl wraps the NVLS build (launch computes before, a barrier after): the
    planes are found inside it and the run is the full one."""
    reduced, full = _both("allreduce", _machine(8, 5, 5e10), 2**28, algo="nccl",
                          extra={"nccl_algorithm": "nvls"})
    assert reduced.meta["record"]["nccl_algorithm"] == "nvls"
    _same(reduced, full, 5, 2)


def test_a_degraded_link_puts_its_plane_in_a_class_of_its_own():
    topo = _machine(4, 5, 5e10)
    bw = topo.bandwidth.copy()
    bw[np.flatnonzero((topo.link_src == topo.node("gpu1"))
                      & (topo.link_dst == topo.node("sw2")))] /= 2
    degraded = topo.with_links(bandwidth=bw)
    reduced, full = _both("allreduce", degraded, 1e6, chunks=2)
    _same(reduced, full, 5, 3)                  # planes 0 and 1 of {0, 1, 3, 4}, and 2
    two = _machine(4, 2, 5e10)              # two planes, both different: all built
    bw = two.bandwidth.copy()
    bw[np.flatnonzero(two.link_dst == two.node("sw1"))[0]] /= 2
    reduced, full = _both("allreduce", two.with_links(bandwidth=bw), 1e6, chunks=2)
    assert "planes" not in reduced.meta
    _same(reduced, full)


def test_the_run_time_check_refuses_planes_that_are_not_alike():
    """Built as alike on the healthy machine, run on one with a degraded link (or with a
    router that hashes flow ids): the check says no, and the runner builds every plane."""
    topo = _machine(4, 3, 5e10)
    nodes = topo.first_endpoints(4)
    options = AlgoOptions(topology=topo, chunks=2, extra={"annotate": False, "planes": True})
    schedule = build_schedule("allreduce", "innetwork", 4, 1e6, options)
    assert len(schedule.extra_nodes) == 2 and plane_map(topo, schedule, nodes) is not None
    bw = topo.bandwidth.copy()
    bw[np.flatnonzero(topo.link_src == topo.node("sw1"))[0]] *= 3
    assert plane_map(topo.with_links(bandwidth=bw), schedule, nodes) is None
    lat = topo.latency.copy()
    lat[np.flatnonzero(topo.link_dst == topo.node("sw2"))[-1]] = 1e-6
    assert plane_map(topo.with_links(latency=lat), schedule, nodes) is None
    attrs = list(topo.node_attrs)        # one switch's ALU rate differs from the others'
    attrs[topo.node("sw2")] = {**attrs[topo.node("sw2")], "reduce_bandwidth": 6e10}
    assert plane_map(replace(topo, node_attrs=tuple(attrs)), schedule, nodes) is None
    from netsim.routing.updown import UpDownRouter

    hashed = UpDownRouter(ecmp="hash")
    assert plane_map(topo, schedule, nodes, hashed) is None
    reduced, full = _both("allreduce", topo, 1e6, chunks=2, router=hashed)
    assert "planes" not in reduced.meta
    _same(reduced, full)


def test_faults_and_annotation_build_every_plane():
    from netsim.run.faultspec import FaultSpec

    topo = _machine(4, 2, None)
    options = AlgoOptions(topology=topo, extra={"annotate": True, "planes": True})
    schedule = build_schedule("allreduce", "innetwork", 4, 1e6, options)
    assert len(schedule.extra_nodes) == 2 and "planes" not in schedule.meta
    link = topo.link_names[int(np.flatnonzero(topo.link_dst == topo.node("sw1"))[0])]
    run = run_collective("allreduce", topo, "innetwork", 1e6,
                         faults=[FaultSpec(link, "degrade", 0.5, 1e-6)])
    assert "planes" not in run.result.meta


def test_the_approximate_mode_gives_the_same_time():
    """--tolerance merges completions within a window of the event time: the planes' events
    are at the same times whether 2 or 5 planes run, so the merged run is the same."""
    topo = _machine(8, 5, 2e10, 1e-6)
    runs = [run_collective("allreduce", topo, "innetwork", 4e6, tolerance=1e-3,
                           options=AlgoOptions(chunks=3, extra=extra))
            for extra in ({}, {"planes": False})]
    _same(runs[0].result, runs[1].result, 5, 2)


def test_a_dependency_between_planes_is_refused():
    """The check reads the dependencies too: an op of one built plane waiting for an op of
    the other makes the planes not independent."""
    from dataclasses import replace as with_fields

    topo = _machine(4, 3, None)
    nodes = topo.first_endpoints(4)
    options = AlgoOptions(topology=topo, chunks=1, extra={"annotate": False, "planes": True})
    schedule = build_schedule("allgather", "innetwork", 4, 1e6, options)
    assert plane_map(topo, schedule, nodes) is not None
    group = schedule.meta["planes"]["group"][0]      # plane 1's first op waits for plane 0's
    ptr, idx = schedule.dep_ptr.copy(), schedule.dep_idx.copy()
    assert ptr[group] == ptr[group + 1]              # it waited for nothing
    idx = np.insert(idx, ptr[group], 0)
    ptr[group + 1:] += 1
    assert plane_map(topo, with_fields(schedule, dep_ptr=ptr, dep_idx=idx), nodes) is None


def test_per_op_times_of_every_plane_are_laid_out_only_when_read():
    """A run of 2 of 18 planes keeps its per-op arrays as simulated (engine.result.Deferred)
    through the run's record, so a size sweep holds no 12M-op arrays per size; read, they
    equal the build of every plane, op_tags included, and survive a pickle (dask sweeps)."""
    import pickle

    run = run_collective("allreduce", "gb200-nvl72", "innetwork", 2 ** 22,
                         options=AlgoOptions(chunks=3))
    run.record()
    kept = run.result.__dict__["_deferred"]
    assert sorted(kept) == ["op_finish", "op_release", "op_start", "op_tags"]
    assert kept["op_finish"].values.size * 4 < kept["op_finish"].size   # 2 planes of 18
    again = pickle.loads(pickle.dumps(run.result))
    full = _both("allreduce", "gb200-nvl72", 2 ** 22, chunks=3)[1]
    _same(again, full)
    _same(run.result, full, planes=18, simulated=2)
    assert "_deferred" not in run.result.__dict__ or not run.result.__dict__["_deferred"]


def test_a_plane_map_asked_again_for_the_same_shape_is_the_one_found_before(monkeypatch):
    # A sweep's sizes: the same build at another size maps its planes without routing them
    # again, and the map equals one found afresh; another machine object (a degraded
    # link) or another build shape is mapped anew.
    from netsim.engine import planes as engine_planes

    topo = _machine(4, 3, 5e10)
    nodes = topo.first_endpoints(4)
    mapped = []
    original = engine_planes._plane_map
    monkeypatch.setattr(engine_planes, "_plane_map",
                        lambda *a: mapped.append(1) or original(*a))

    def build(size, chunks=2):
        options = AlgoOptions(topology=topo, chunks=chunks,
                              extra={"annotate": False, "planes": True})
        return build_schedule("allreduce", "innetwork", 4, size, options)

    engine_planes._maps.clear()
    first = plane_map(topo, build(1e6), nodes)
    kept = plane_map(topo, build(4e6), nodes)
    assert len(mapped) == 1 and kept is not None
    engine_planes._maps.clear()
    fresh = plane_map(topo, build(4e6), nodes)
    assert len(mapped) == 2
    for a, b in zip((first, kept), (fresh, fresh)):
        assert a.flows == b.flows and a.built == b.built and a.switches == b.switches
        assert all(np.array_equal(x, y) for x, y in zip(a.links, b.links))
    plane_map(topo, build(4e6, chunks=3), nodes)                 # another shape
    bw = topo.bandwidth.copy()
    bw[np.flatnonzero(topo.link_src == topo.node("sw1"))[0]] *= 3
    assert plane_map(topo.with_links(bandwidth=bw), build(4e6), nodes) is None
    assert len(mapped) == 4
