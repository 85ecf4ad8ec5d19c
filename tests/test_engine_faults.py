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


# -- the compiled loop stops at each fault ------------------------------------------------
# The numpy loop applies a fault (rerouting calls the router); the compiled loop stops before
# it, hands its state back and takes over again after it. These runs force each compiled
# solver from the first event on and check it ran, with the hand-computed answer.

COMPILED_SOLVERS = ["kernel", "classes"]


def _chain(nbytes=1e9):
    """Two sends 0 -> 1, the second after the first."""
    b = ScheduleBuilder(2)
    b.send(0, 1, nbytes, deps=[b.send(0, 1, nbytes)])
    return b.build()


def _two_sends(first=1e9, second=1e9):
    """Two independent sends 0 -> 1 (release them apart with ``not_before``)."""
    b = ScheduleBuilder(2)
    b.send(0, 1, first)
    b.send(0, 1, second)
    return b.build()


def _forced_and_reference(loop, topo, schedule, faults, **options):
    """The run with ``loop`` forced from the first event on (checked to be the loop that
    ran), after the reference's, with as many events; returns both results."""
    from netsim.engine import EngineConfig

    pytest.importorskip("numba")
    config = EngineConfig(loop=loop, symmetry=False)
    result = simulate(topo, schedule, placement=[0, 1], faults=faults, config=config,
                      **options)
    reference = simulate(topo, schedule, placement=[0, 1], faults=faults, **options)
    assert result.meta["engine"]["loop"] == loop
    assert result.events == reference.events
    np.testing.assert_allclose(result.link_bytes, reference.link_bytes, rtol=1e-12)
    return result, reference


@pytest.mark.parametrize("loop", COMPILED_SOLVERS)
def test_compiled_loops_stop_at_a_mid_run_failure_and_go_on_after_it(loop):
    # Two sends a -> b, the second one 10 ms later: the compiled loop runs between the
    # first event and the failure at 40 ms, the numpy loop reroutes both, and the compiled
    # loop finishes them on the slow way (5 GB/s shared, 1 ms of latency).
    topo = two_routes()
    t0 = 0.04
    result, _ = _forced_and_reference(loop, topo, _two_sends(),
                                      [fail_links(topo, [0], time=t0)],
                                      not_before=np.array([0.0, 0.01]))
    # by t0: 0.1 s x 10 GB/s alone, then 5 GB/s each for 30 ms: 0.25 GB and 0.15 GB sent
    left = (1e9 - 10e9 * 0.01 - 5e9 * 0.03, 1e9 - 5e9 * 0.03)
    first = t0 + 1e-3 + 2 * left[0] / 5e9            # shared until the first one ends
    second = first + (left[1] - left[0]) / 5e9
    np.testing.assert_allclose(np.sort(result.op_finish), [first, second], rtol=1e-12)
    assert result.meta["faults"][0]["rerouted_flows"] == 2


@pytest.mark.parametrize("loop", COMPILED_SOLVERS)
def test_a_send_rerouted_while_its_latency_runs_starts_after_its_new_latency(loop):
    # a -> b has 1.5 ms of latency; the failure at 1 ms reroutes the send before it drains
    # a byte, onto a -> c -> b (1 ms of latency from the failure on). Its start queued at
    # 1.5 ms is too early: the compiled loop must start it at 2 ms, as the numpy loop does.
    b = TopologyBuilder("diamond")
    for name in "abc":
        b.add_node(name)
    b.add_link("a", "b", 10e9, 1.5e-3)
    b.add_link("a", "c", 5e9, 0.5e-3)
    b.add_link("c", "b", 5e9, 0.5e-3)
    topo = b.build()
    result, _ = _forced_and_reference(loop, topo, _chain(1e8),
                                      [fail_links(topo, [0], time=1e-3)])
    first = 1e-3 + 1e-3 + 1e8 / 5e9
    np.testing.assert_allclose(result.op_finish, [first, first + 1e-3 + 1e8 / 5e9],
                               rtol=1e-12)


@pytest.mark.parametrize("loop", COMPILED_SOLVERS)
def test_a_failure_after_the_run_ended_is_logged_by_the_compiled_loops_too(loop):
    topo = two_routes()
    result, _ = _forced_and_reference(loop, topo, _chain(),
                                      [fail_links(topo, [0], time=1.0)])
    assert result.makespan == pytest.approx(0.2, rel=1e-12)
    assert result.meta["faults"] == [{"time": 1.0, "links": ["a->b"], "factor": 0.0,
                                      "rerouted_flows": 0}]


@pytest.mark.parametrize("loop", COMPILED_SOLVERS)
def test_a_fault_at_the_instant_a_flow_ends_is_one_event_with_it(loop):
    # The numpy loop merges a fault due within 1e-9 of a completion into that event; the
    # compiled loop must stop before such an event, not run it and leave the fault alone.
    topo = two_routes()
    result, _ = _forced_and_reference(loop, topo, _chain(),
                                      [degrade_links(topo, [0], 0.5, time=0.1 * (1 + 1e-12))])
    assert result.makespan == pytest.approx(0.1 + 0.2, rel=1e-9)


@pytest.mark.parametrize("loop", COMPILED_SOLVERS)
def test_a_fault_goes_before_a_release_of_its_instant_after_a_hand_back(loop):
    # The second send is released at 40 ms, the instant the direct link fails. The numpy
    # loop queued the fault first, so the send starts on the detour (1 ms of latency);
    # once the compiled loop has stopped and handed back, the fault must still go first.
    topo = two_routes()
    result, reference = _forced_and_reference(loop, topo, _two_sends(1e9, 1e8),
                                              [fail_links(topo, [0], time=0.04)],
                                              not_before=np.array([0.0, 0.04]),
                                              overhead=2e-3)
    np.testing.assert_allclose(result.op_finish, reference.op_finish, rtol=1e-12)
    assert result.op_start[1] == pytest.approx(0.042)      # its overhead, then the detour
