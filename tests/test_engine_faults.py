"""Failed and degraded links, from the start and mid-run, against hand-computed times."""

from __future__ import annotations

import numpy as np
import pytest

from netsim.engine import degrade_links, fail_links, fail_nodes, simulate
from netsim.run.faultspec import parse_fault_option
from netsim.errors import RoutingError
from netsim.schedule import ScheduleBuilder
from netsim.topology import fat_tree, ring
from netsim.topology.model import TopologyBuilder
from netsim.schedule.traffic import all_to_all, shift


def two_routes(fast=10e9, slow=5e9, slow_latency=1e-3):
    """a -> b directly (fast, id 0) or a -> c -> b (slow, with latency): a diamond."""
    b = TopologyBuilder("diamond")
    for name in "abc":
        b.add_node(name)
    b.add_link("a", "b", fast, 0.0)
    b.add_link("a", "c", slow, slow_latency / 2)
    b.add_link("c", "b", slow, slow_latency / 2)
    return b.build()


def one_send(nbytes=1e9):
    b = ScheduleBuilder(2)
    b.send(0, 1, nbytes)
    return b.build()


def test_failure_from_the_start_takes_the_other_way_round_a_ring():
    topo = ring(6, bandwidth=1e9, latency=1e-6)
    # 0 -> 1 normally takes one hop; with 0->1 dead it goes 5 hops the other way.
    result = simulate(topo, one_send(1e8), faults=[fail_links(topo, ["n0->n1"])])
    assert result.makespan == pytest.approx(5e-6 + 0.1, rel=1e-12)
    assert result.link_bytes[topo.link("n0->n1")] == 0
    assert result.link_bytes[topo.link("n0->n5")] == pytest.approx(1e8)


def test_mid_run_failure_moves_the_remaining_bytes():
    topo = two_routes()
    t0 = 0.04                          # 0.4 GB sent on the fast link by then
    result = simulate(topo, one_send(1e9), placement=[0, 1],
                      faults=[fail_links(topo, [0], time=t0)])
    expected = t0 + 1e-3 + (1e9 - 10e9 * t0) / 5e9
    assert result.makespan == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(result.link_bytes, [4e8, 6e8, 6e8], rtol=1e-12)
    assert result.meta["faults"][0]["rerouted_flows"] == 1


def test_degraded_link_slows_the_rest_of_the_transfer():
    topo = two_routes()
    result = simulate(topo, one_send(1e9), placement=[0, 1],
                      faults=[degrade_links(topo, [0], 0.25, time=0.05)])
    assert result.makespan == pytest.approx(0.05 + 0.5e9 / 2.5e9, rel=1e-12)


def test_failure_after_a_flow_finished_changes_nothing():
    topo = two_routes()
    result = simulate(topo, one_send(1e9), placement=[0, 1],
                      faults=[fail_links(topo, [0], time=1.0)])
    assert result.makespan == pytest.approx(0.1, rel=1e-12)


def test_failure_that_disconnects_ranks_names_them():
    topo = ring(4, bandwidth=1e9)
    faults = [fail_links(topo, ["n0->n1", "n0->n3"])]
    with pytest.raises(RoutingError, match="disconnect n0 from n1"):
        simulate(topo, one_send(), faults=faults)


def test_node_failure_cuts_all_its_links():
    topo = ring(4, bandwidth=1e9)
    fault = fail_nodes(topo, ["n2"])
    assert sorted(topo.link_names[l] for l in fault.links) == [
        "n1->n2", "n2->n1", "n2->n3", "n3->n2"]
    # 1 -> 3 must now go 1 -> 0 -> 3.
    b = ScheduleBuilder(4)
    b.send(1, 3, 1e9)
    result = simulate(topo, b.build(), faults=[fault])
    used = {topo.link_names[l] for l in np.flatnonzero(result.link_bytes)}
    assert used == {"n1->n0", "n0->n3"}


def test_fat_tree_failure_halves_the_uplink_of_one_edge_switch():
    from netsim.routing import UpDownRouter

    # Every host sends 1e8 B to the same host of the next pod, sprayed over all 4 paths:
    # 0.1 s at 1 GB/s. With edge0_0's uplink to agg0_0 dead, its two hosts share the one
    # uplink left: 2e8 B over 1 GB/s = 0.2 s.
    topo = fat_tree(4, bandwidth=1e9)
    spray = UpDownRouter(ecmp="spray")
    healthy = simulate(topo, shift(16, 1e8, offset=4), router=spray)
    dead = topo.link("edge0_0->agg0_0")
    faulty = simulate(topo, shift(16, 1e8, offset=4), router=spray,
                      faults=[fail_links(topo, [dead])])
    assert healthy.makespan == pytest.approx(0.1, rel=1e-12)
    assert faulty.makespan == pytest.approx(0.2, rel=1e-12)
    assert faulty.link_bytes[dead] == 0


def test_mesh_alltoall_with_a_dead_link_is_slower_and_avoids_it():
    from netsim.topology import mesh

    topo = mesh((4, 4), bandwidth=50e9)
    dead = parse_fault_option("1_1<->1_2", "fail").resolve(topo)
    healthy = simulate(topo, all_to_all(16, 1 << 20))
    faulty = simulate(topo, all_to_all(16, 1 << 20), faults=[dead])
    assert faulty.link_bytes[list(dead.links)].sum() == 0
    assert faulty.makespan > healthy.makespan
    assert faulty.link_bytes.sum() >= healthy.link_bytes.sum()


def test_fault_options_resolve_to_engine_faults():
    topo = ring(4, bandwidth=1e9)
    fault = parse_fault_option("n0->n1@5us", "fail").resolve(topo)
    assert (fault.links, fault.time, fault.factor) == ((topo.link("n0->n1"),), 5e-6, 0.0)
    assert parse_fault_option("n0->n1=0.5", "degrade").resolve(topo).factor == 0.5
    with pytest.raises(Exception, match="no link 'n0->n9'"):
        parse_fault_option("n0->n9", "fail").resolve(topo)


def _nvswitch_ring_allgather(fail_at=None):
    """An 8-GPU ring all-gather on 4 NVSwitch chips (5/4/4/5 links per GPU, sprayed)."""
    from netsim.run import run_collective
    from netsim.topology import parse_topology

    topo = parse_topology("nvswitch:gpus=8,switches=4,links_per_switch=5/4/4/5,bw=18GB/s")
    faults = () if fail_at is None else [fail_nodes(topo, ["sw0"], time=fail_at)]
    run = run_collective("allgather", topo, "ring", 64 * 2**20, faults=faults, alpha=0.0)
    return topo, run


def test_switch_failure_spreads_the_sprayed_flows_over_the_switches_left():
    # Each GPU's 18 links carry 1/18 of a send each; with sw0's 5 dead from the start
    # the bytes must spread over the 13 left, so the time is 18/13 of the healthy one.
    # (Moving each hit sub-flow whole onto one new path would load that path's link
    # with 6/18 of the send: 6x the healthy time.)
    topo, healthy = _nvswitch_ring_allgather()
    _, failed = _nvswitch_ring_allgather(fail_at=0.0)
    assert failed.time_s == pytest.approx(healthy.time_s * 18 / 13, rel=1e-9)
    used = failed.result.link_bytes
    sw0 = [i for i, n in enumerate(topo.link_names) if "sw0" in n]
    assert used[sw0].sum() == 0
    # The same bytes cross the fabric (two hops per path), none lost or doubled.
    assert used.sum() == pytest.approx(healthy.result.link_bytes.sum(), rel=1e-12)


def test_switch_failure_mid_run_keeps_every_byte_and_lands_between():
    _, healthy = _nvswitch_ring_allgather()
    _, late = _nvswitch_ring_allgather(fail_at=healthy.time_s / 2)
    assert healthy.time_s < late.time_s < healthy.time_s * 18 / 13
    # Half the time at full speed, then the rest of the bytes at 13/18 of it.
    assert late.time_s == pytest.approx(healthy.time_s * (0.5 + 0.5 * 18 / 13), rel=1e-9)
    assert late.result.link_bytes.sum() == pytest.approx(healthy.result.link_bytes.sum(),
                                                         rel=1e-12)


@pytest.mark.parametrize("at", [0.0, 1e-3, 3e-3])
def test_a_dead_plane_costs_what_running_its_bundle_at_three_quarters_costs(at):
    # A Galaxy cable is 4 planes the router sprays a send over. With plane 0 dead at any
    # time, the remaining bytes of every send on it spread over planes 1-3; by symmetry that
    # is the bundle at 3/4 of its speed, a run that re-routes nothing.
    from netsim.run import run_collective
    from netsim.topology import parse_topology

    topo = parse_topology("galaxy-wh")
    bundle = [n for n in topo.link_names if n.split("#")[0] in ("0_0->0_1", "0_1->0_0")]
    dead = run_collective("allreduce", topo, "ring", 8 * 2**20,
                          faults=[fail_links(topo, ["0_0->0_1", "0_1->0_0"], time=at)])
    slow = run_collective("allreduce", topo, "ring", 8 * 2**20,
                          faults=[degrade_links(topo, bundle, 0.75, time=at)])
    assert dead.time_s == pytest.approx(slow.time_s, rel=1e-12)
