"""One collective request, resolved once: every door (one size, a sweep, groups, a
scenario job) passes one resolution point, and group runs are a placement of the same
pipeline."""

from __future__ import annotations

import numpy as np
import pytest

import netsim.run.request as request_module
from netsim.errors import InputError
from netsim.run import (axis_groups, resolve_request, run_collective, run_groups,
                        run_sweep)
from netsim.topology import calibrated_alpha, calibrated_gamma, parse_topology


def _counting(monkeypatch) -> list:
    calls = []
    original = request_module.machine_costs

    def counted(*args, **kwargs):
        calls.append(args[1])
        return original(*args, **kwargs)

    monkeypatch.setattr(request_module, "machine_costs", counted)
    return calls


def test_a_sweep_resolves_its_request_once(monkeypatch):
    calls = _counting(monkeypatch)
    runs = run_sweep("allreduce", "galaxy-wh", "ring", "1MiB:8MiB")
    assert len(runs) == 4 and len(calls) == 1
    assert {run.record()["overhead_s"] for run in runs} == {calibrated_alpha(
        parse_topology("galaxy-wh"))}


def test_a_group_run_resolves_once_and_pays_the_calibrated_costs(monkeypatch):
    calls = _counting(monkeypatch)
    run = run_collective("allgather", "galaxy-wh", "ring", "1MiB", axis=0)
    assert len(calls) == 1
    # the same pipeline as one collective: the record says what each message paid
    assert run.record()["overhead_s"] == calibrated_alpha(parse_topology("galaxy-wh"))


def test_the_request_carries_the_calibration_unless_given():
    topo = parse_topology("galaxy-wh")
    request = resolve_request("allreduce", topo, "ring", "1MiB")
    assert request.alpha == calibrated_alpha(topo)
    assert request.options.gamma == calibrated_gamma(topo)
    given = resolve_request("allreduce", topo, "ring", "1MiB", alpha=2e-6)
    assert given.alpha == 2e-6
    with pytest.raises(InputError, match="alpha"):
        resolve_request("allreduce", topo, "ring", "1MiB", alpha=-1.0)


def test_one_group_is_the_same_run_as_that_placement():
    """A group run of a single group is a collective placed on that group's nodes: the
    same time (the whole-machine run may take the ring's block form; both are exact) and
    the same bounds."""
    topo = parse_topology("mesh:4x4,bw=25GB/s,lat=500ns")
    group = axis_groups(topo, 1)[2]
    grouped = run_groups("allreduce", topo, "ring", 4e6, [group], alpha=1e-6)
    placed = run_collective("allreduce", topo, "ring", 4e6, placement=group.tolist(),
                            alpha=1e-6)
    assert grouped.time_s == pytest.approx(placed.time_s, rel=1e-12)
    assert grouped.group_times == [grouped.time_s]
    assert grouped.machine_bound_s == pytest.approx(placed.machine_bound_s, rel=1e-12)


def test_lines_of_an_axis_each_take_the_time_of_one_line_alone():
    """Columns of a mesh share no link under dimension-order routing: every column of a
    group run takes the time that column takes alone."""
    topo = parse_topology("mesh:4x4,bw=25GB/s")
    lines = axis_groups(topo, 0)
    grouped = run_groups("allgather", topo, "ring", 4e6, lines, alpha=0.0)
    alone = run_collective("allgather", topo, "ring", 4e6, placement=lines[1].tolist(),
                           alpha=0.0)
    assert np.allclose(grouped.group_times, alone.time_s, rtol=1e-12)


def test_a_request_is_checked_before_anything_runs():
    with pytest.raises(InputError, match="one of axis, nodes and placement"):
        resolve_request("allreduce", "mesh:4x4", "ring", "1MiB", axis=0, nodes="0_0,0_1")
    with pytest.raises(InputError, match="must not share a node"):
        resolve_request("allreduce", "mesh:4x4", "ring", "1MiB", groups=[[0, 1], [1, 2]])
    with pytest.raises(InputError, match=">= 0 bytes"):
        resolve_request("allreduce", "mesh:4x4", "ring", [1e6, -1.0])


def test_the_engine_configuration_goes_down_with_the_request():
    """The request's EngineConfig reaches the engine on every path: the reference loop
    (no symmetry search) runs a ring as every send, not as its blocks, to the same time."""
    from netsim.engine import EngineConfig

    reference = EngineConfig(loop="reference")
    fast = run_collective("allreduce", "ring:8,bw=10GB/s", "ring", "8MB", alpha=0.0)
    slow = run_collective("allreduce", "ring:8,bw=10GB/s", "ring", "8MB", alpha=0.0,
                          engine=reference)
    assert "blocks" in fast.result.meta and "blocks" not in slow.result.meta
    assert slow.result.meta["engine"]["solver"] == "cold"
    assert slow.time_s == pytest.approx(fast.time_s, rel=1e-12)
    grouped = run_groups("allgather", "mesh:4x4", "ring", 4e6,
                         axis_groups(parse_topology("mesh:4x4"), 0), engine=reference)
    assert grouped.result.meta["engine"]["solver"] == "cold"
    swept = run_sweep("allgather", "mesh:4x4", "auto", [1e6, 2e6], engine=reference)
    assert {run.result.meta["engine"]["solver"] for run in swept} == {"cold"}


def test_a_group_run_estimates_memory_at_the_chunks_it_will_build(monkeypatch):
    """The memory estimate comes after resolution: a pipelined algorithm that resolves
    to many chunks at this size is estimated at that many, in a group run as in any."""
    import netsim.run.placed as placed
    from netsim.algorithms.registry import default_chunks

    seen = []
    original = placed.check_scale

    def recorded(op, n, chunks, *args, **kwargs):
        seen.append(chunks)
        return original(op, n, chunks, *args, **kwargs)

    monkeypatch.setattr(placed, "check_scale", recorded)
    size = float(2**30)
    run_collective("broadcast", "mesh:4x4", "chain", size, axis=0, alpha=0.0)
    assert default_chunks(size) > 1 and set(seen) == {default_chunks(size)}
