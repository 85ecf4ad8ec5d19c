"""Lower bounds of collectives, checked against hand-computed values and the engine."""

from __future__ import annotations

import numpy as np
import pytest

from netsim.algorithms.bounds import all_bounds, lower_bound
from netsim.engine import simulate
from netsim.errors import InputError
from netsim.topology import mesh, nvswitch, ring, torus
from netsim.schedule.traffic import all_to_all

B, S = 10e9, 64e6   # link bandwidth (bytes/s) and message size (bytes)


def test_allreduce_on_a_bidirectional_ring_is_injection_bound():
    # Each rank sends 2(n-1)/n S over its two links of B: (n-1)/n S / B = 0.875 S/B for n=8.
    bound = lower_bound("allreduce", ring(8, bandwidth=B), S, 8)
    assert bound.name == "injection"
    assert bound.seconds == pytest.approx(7 / 8 * S / B, rel=1e-12)


def test_allreduce_on_a_one_way_ring_needs_the_full_ring_time():
    bound = lower_bound("allreduce", ring(8, bandwidth=B, bidirectional=False), S, 8)
    assert bound.seconds == pytest.approx(2 * 7 / 8 * S / B, rel=1e-12)


def test_a_reducing_switch_replaces_the_allreduce_bound_by_s_over_b():
    plain = lower_bound("allreduce", nvswitch(8, bandwidth=B), S, 8)
    nvls = lower_bound("allreduce", nvswitch(8, bandwidth=B, reduce=True), S, 8)
    assert plain.seconds == pytest.approx(2 * 7 / 8 * S / B, rel=1e-12)
    assert nvls.name == "injection (in-network reduction)"
    assert nvls.seconds == pytest.approx(S / B, rel=1e-12)


@pytest.mark.parametrize("op", ["allgather", "reducescatter"])
def test_allgather_and_reducescatter_move_n_minus_1_over_n_of_s(op):
    bound = lower_bound(op, nvswitch(4, bandwidth=B), S, 4)
    assert bound.name == "injection"
    assert bound.seconds == pytest.approx(3 / 4 * S / B, rel=1e-12)


@pytest.mark.parametrize("k", [2, 4, 6])
def test_alltoall_on_a_mesh_is_bisection_bound_and_direct_meets_it(k):
    n = k * k
    bound = lower_bound("alltoall", mesh((k, k), bandwidth=B), S, n)
    # (n/2)^2 S/n bytes across k links: k S / (4B), the k^3 m / (4B) of hardware-specs 5.5.
    assert bound.name == "bisection"
    assert bound.seconds == pytest.approx(k * S / (4 * B), rel=1e-12)
    result = simulate(mesh((k, k), bandwidth=B), all_to_all(n, S / n))
    assert bound.seconds / result.makespan == pytest.approx(1.0, rel=1e-9)


def test_alltoall_bisection_on_a_torus_is_half_the_mesh_one():
    assert lower_bound("alltoall", torus((4, 4), bandwidth=B), S, 16).seconds == \
        pytest.approx(4 * S / (8 * B), rel=1e-12)


def test_bisection_is_skipped_when_the_ranks_are_part_of_the_machine():
    topo = mesh((4, 4), bandwidth=B)
    names = [b.name for b in all_bounds("alltoall", topo, S, 8)]
    assert names == ["injection"]
    # Same count, but not the whole machine: ranks on endpoints 0, 2, 4 ... of a 16-node mesh.
    assert "bisection" not in [b.name for b in all_bounds("alltoall", topo, S, 8,
                                                            np.arange(0, 16, 2))]


def test_broadcast_and_reduce_bounds_name_the_root_side():
    topo = mesh((3, 3), bandwidth=B)
    # Root at the centre (4 links out): the corners' two links in carry S: S / 2B.
    assert lower_bound("broadcast", topo, S, 9, root=4).seconds == pytest.approx(S / (2 * B))
    # Root at a corner (2 links in) receives S: S / 2B again, now on the root's side.
    bound = lower_bound("reduce", topo, S, 9, root=0)
    assert bound.seconds == pytest.approx(S / (2 * B)) and "rank 0" in bound.detail


def test_latency_bound_is_alpha_plus_the_farthest_path():
    lat, alpha = 1e-6, 2e-6
    two_way, one_way = ring(8, bandwidth=B, latency=lat), ring(8, bandwidth=B, latency=lat,
                                                               bidirectional=False)
    tiny = 8.0
    assert lower_bound("allgather", two_way, tiny, 8, alpha=alpha).seconds == \
        pytest.approx(alpha + 4 * lat)
    assert lower_bound("allgather", one_way, tiny, 8).seconds == pytest.approx(7 * lat)
    # Broadcast from rank 2 on the one-way ring: rank 1 is 7 hops downstream.
    bound = lower_bound("broadcast", one_way, tiny, 8, root=2)
    assert bound.name == "latency" and bound.seconds == pytest.approx(7 * lat)
    # Reduce to root 2: rank 3 is 7 hops upstream; with 3 ranks (nodes 0..2) it is 2 hops.
    assert lower_bound("reduce", one_way, tiny, 8, root=2).seconds == pytest.approx(7 * lat)
    assert lower_bound("reduce", one_way, tiny, 3, root=2).seconds == pytest.approx(2 * lat)


def test_latency_bound_uses_rank_0_alone_beyond_1024_ranks():
    bound = lower_bound("alltoall", ring(1100, bandwidth=B, latency=1e-6), 1.0, 1100)
    assert bound.name == "latency" and bound.seconds == pytest.approx(550e-6)


def test_parallel_links_count_by_their_smallest_latency():
    topo = ring(4, bandwidth=B, latency=1e-6, links=2)
    latency = topo.latency.copy()
    latency[topo.plane == 1] = 3e-6
    assert lower_bound("allgather", topo.with_links(latency=latency), 1.0, 4).seconds == \
        pytest.approx(2e-6)


def test_compute_bound_applies_to_reductions_without_a_reducing_switch():
    gamma = 1e9   # far slower than the links: compute dominates
    bound = lower_bound("allreduce", nvswitch(4, bandwidth=B), S, 4, gamma=gamma)
    assert bound.name == "compute" and bound.seconds == pytest.approx(3 / 4 * S / gamma)
    assert lower_bound("allgather", nvswitch(4, bandwidth=B), S, 4, gamma=gamma).name == \
        "injection"
    assert lower_bound("allreduce", nvswitch(4, bandwidth=B, reduce=True), S, 4,
                       gamma=gamma).name.startswith("injection")


def test_no_bound_for_a_single_rank_and_errors_for_bad_input():
    assert lower_bound("allreduce", ring(4, bandwidth=B), S, 1).seconds == 0.0
    with pytest.raises(InputError, match="did you mean 'allreduce'"):
        lower_bound("allreduc", ring(4), S, 4)
    with pytest.raises(InputError, match="do not fit"):
        lower_bound("allreduce", ring(4), S, 5)
