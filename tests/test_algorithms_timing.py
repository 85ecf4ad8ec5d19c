"""Simulated times of the algorithms against their alpha-beta closed forms.

alpha is the engine's per-message overhead, B the bandwidth of a link (or of a GPU's
port on a switch), S the size as nccl-tests defines it. Costs follow Thakur, Rabenseifner
& Gropp 2005 (hardware-specs section 5.2). Every match is to 1e-9 relative.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine_helpers import with_extra_nodes
from netsim.algorithms import AlgoOptions, build_schedule
from netsim.engine import simulate
from netsim.topology import full_mesh, mesh, nvswitch, ring, torus

A = 3e-6          # alpha, s
B = 10e9          # bytes/s
S = 12e6          # bytes


def run(op: str, name: str, topology, p: int, size: float = S, alpha: float = A, **knobs):
    """Makespan (s) of ``name`` on the first p endpoints of ``topology``; one chunk unless
    ``chunks`` says otherwise (the closed forms below are for an unpipelined message)."""
    options = AlgoOptions(topology=topology, **{"chunks": 1, **knobs})
    schedule = build_schedule(op, name, p, size, options)
    placement = with_extra_nodes(topology.endpoints[:p], schedule)
    return simulate(topology, schedule, placement, overhead=alpha).makespan


def close(value, expected):
    return value == pytest.approx(expected, rel=1e-9)


# -- rings ---------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [5, 8])
def test_ring_allreduce_on_a_ring(p):
    assert close(run("allreduce", "ring", ring(p, bandwidth=B), p),
                 2 * (p - 1) * (A + S / (p * B)))


def test_ring_allreduce_pays_link_latency_every_step():
    L = 1e-6
    assert close(run("allreduce", "ring", ring(6, bandwidth=B, latency=L), 6),
                 2 * 5 * (A + L + S / (6 * B)))


def test_ring_allreduce_with_gamma_reduces_after_every_reduce_scatter_receive():
    p, gamma = 5, 4e9
    assert close(run("allreduce", "ring", ring(p, bandwidth=B), p, gamma=gamma),
                 2 * (p - 1) * (A + S / (p * B)) + (p - 1) * S / (p * gamma))


def test_ring_slices_follow_each_other_on_one_channel():
    p, k = 5, 3
    assert close(run("allreduce", "ring", ring(p, bandwidth=B), p, chunks=k),
                 2 * (p - 1) * k * (A + S / (p * k * B)))


def test_bidirectional_ring_uses_both_directions():
    p = 6
    assert close(run("allreduce", "bidir_ring", ring(p, bandwidth=B), p),
                 2 * (p - 1) * (A + S / (2 * p * B)))


@pytest.mark.parametrize("op", ["reducescatter", "allgather"])
@pytest.mark.parametrize("name", ["ring", "bidir_ring"])
def test_ring_reduce_scatter_and_all_gather(op, name):
    p, ways = 6, 2 if name == "bidir_ring" else 1
    assert close(run(op, name, ring(p, bandwidth=B), p), (p - 1) * (A + S / (ways * p * B)))


def test_snake_order_makes_a_mesh_ring_single_hop():
    L = 2e-6
    topo = mesh((4, 4), bandwidth=B, latency=L)
    snake = run("allreduce", "ring", topo, 16, order="snake")
    assert close(snake, 2 * 15 * (A + L + S / (16 * B)))
    assert run("allreduce", "ring", topo, 16, order="natural") > snake * 1.05


# -- halving and doubling ------------------------------------------------------------------

@pytest.mark.parametrize("p", [4, 8])
@pytest.mark.parametrize("machine", [full_mesh, nvswitch])
def test_halving_doubling_on_a_non_blocking_switch(p, machine):
    assert close(run("allreduce", "halving_doubling", machine(p, bandwidth=B), p),
                 2 * math.log2(p) * A + 2 * (p - 1) / p * S / B)


@pytest.mark.parametrize("p", [6, 7])
def test_halving_doubling_folds_other_rank_counts(p):
    """Fold (S), halving and doubling over P = 4 virtual ranks, unfold (S)."""
    P = 1 << (p.bit_length() - 1)
    expected = 2 * (math.log2(P) + 1) * A + 2 * (1 + (P - 1) / P) * S / B
    assert close(run("allreduce", "halving_doubling", full_mesh(p, bandwidth=B), p), expected)


def test_recursive_doubling_sends_the_whole_buffer_every_step():
    assert close(run("allreduce", "recursive_doubling", full_mesh(8, bandwidth=B), 8),
                 3 * (A + S / B))


def test_recursive_halving_reduce_scatter_and_doubling_all_gather():
    p = 8
    for op, name in (("reducescatter", "halving"), ("allgather", "doubling")):
        assert close(run(op, name, full_mesh(p, bandwidth=B), p),
                     3 * A + (p - 1) / p * S / B)


# -- direct and one-shot --------------------------------------------------------------------

@pytest.mark.parametrize("p", [6, 8])
def test_direct_all_to_all_on_a_switch(p):
    assert close(run("alltoall", "direct", nvswitch(p, bandwidth=B), p),
                 A + (p - 1) / p * S / B)


def test_direct_all_to_all_on_a_full_mesh_uses_every_link_at_once():
    assert close(run("alltoall", "direct", full_mesh(6, bandwidth=B), 6), A + S / (6 * B))


def test_direct_reduce_scatter_all_gather_and_all_reduce_on_a_switch():
    p = 6
    one = A + (p - 1) / p * S / B
    topo = nvswitch(p, bandwidth=B)
    assert close(run("reducescatter", "direct", topo, p), one)
    assert close(run("allgather", "direct", topo, p), one)
    assert close(run("allreduce", "direct", topo, p), 2 * one)


def test_one_shot_all_reduce_sends_the_buffer_to_every_peer():
    assert close(run("allreduce", "oneshot", full_mesh(6, bandwidth=B), 6), A + S / B)


# -- pairwise and Bruck --------------------------------------------------------------------

@pytest.mark.parametrize("p,machine", [(6, full_mesh), (8, nvswitch), (5, nvswitch)])
def test_pairwise_all_to_all_takes_p_minus_one_steps(p, machine):
    assert close(run("alltoall", "pairwise", machine(p, bandwidth=B), p),
                 (p - 1) * (A + S / (p * B)))


def test_bruck_all_gather_at_six_ranks():
    """ceil(log2 6) = 3 steps of 1, 2 and 2 blocks: 3 alpha + 5/6 S/B."""
    assert close(run("allgather", "bruck", full_mesh(6, bandwidth=B), 6),
                 3 * A + 5 / 6 * S / B)


@pytest.mark.parametrize("p", [6, 8])
def test_bruck_all_to_all(p):
    steps = math.ceil(math.log2(p))
    blocks = sum(sum(1 for o in range(p) if o >> k & 1) for k in range(steps))
    assert close(run("alltoall", "bruck", full_mesh(p, bandwidth=B), p),
                 steps * A + blocks * S / (p * B))


# -- trees ---------------------------------------------------------------------------------

@pytest.mark.parametrize("p,k", [(6, 1), (6, 4), (5, 7)])
@pytest.mark.parametrize("op", ["broadcast", "reduce"])
def test_pipelined_chain_on_a_line(op, p, k):
    assert close(run(op, "chain", mesh((p,), bandwidth=B), p, chunks=k),
                 (p - 2 + k) * (A + S / (k * B)))


@pytest.mark.parametrize("p", [5, 6, 8])
def test_binomial_broadcast_one_port(p):
    assert close(run("broadcast", "binomial", nvswitch(p, bandwidth=B), p),
                 math.ceil(math.log2(p)) * (A + S / B))


def test_binomial_reduce_on_a_switch():
    assert close(run("reduce", "binomial", nvswitch(8, bandwidth=B), 8), 3 * (A + S / B))


@pytest.mark.parametrize("p", [4, 5, 6, 8])
def test_double_binary_tree_reduces_up_and_broadcasts_down(p):
    """Each tree carries S/2; its depth is floor(log2(p - 1)) + 1 (rank 0 above the
    in-order tree of 1..p-1), and the reduction and the broadcast each cross it once."""
    depth = int(math.log2(p - 1)) + 1
    assert close(run("allreduce", "dbtree", full_mesh(p, bandwidth=B), p),
                 2 * depth * (A + S / (2 * B)))


# -- topology-aware ------------------------------------------------------------------------

@pytest.mark.parametrize("dims", [(2, 3), (4, 4)])
def test_dimensionwise_all_reduce_on_a_torus(dims):
    """hardware-specs 5.5: 2[(kx-1)/kx S + (ky-1)/ky S/kx]/B + 2[(kx-1) + (ky-1)] alpha."""
    kx, ky = dims
    expected = (2 * ((kx - 1) / kx * S + (ky - 1) / ky * S / kx) / B
                + 2 * ((kx - 1) + (ky - 1)) * A)
    assert close(run("allreduce", "dimensionwise", torus(dims, bandwidth=B), kx * ky),
                 expected)


def test_dimensionwise_all_to_all_on_a_torus():
    """Per axis every rank sends S/k to each of the k-1 others on its line at once."""
    topo = torus((3, 3), bandwidth=B)
    assert close(run("alltoall", "dimensionwise", topo, 9), 2 * (A + S / (3 * B)))


def test_hierarchical_all_reduce_on_a_full_mesh():
    G, L = 2, 3
    expected = 2 * (L - 1) * (A + S / (L * B)) + 2 * (G - 1) * (A + S / (L * G * B))
    assert close(run("allreduce", "hierarchical", full_mesh(6, bandwidth=B), 6,
                     groups=((0, 1, 2), (3, 4, 5))), expected)


@pytest.mark.parametrize("planes", [1, 2])
def test_in_network_all_reduce_stages(planes):
    """Unpipelined: copies up (S), results down (S/n), stores up (S/n), multicast (S)."""
    p = 6
    topo = nvswitch(p, switches=planes, bandwidth=B, reduce=True)
    assert close(run("allreduce", "innetwork", topo, p), 4 * A + 2 * (1 + 1 / p) * S / B)


@pytest.mark.parametrize("p,planes", [(8, 1), (6, 2), (5, 4)])
def test_in_network_all_reduce_moves_s_n_plus_one_over_n_per_gpu_and_direction(p, planes):
    topo = nvswitch(p, switches=planes, reduce=True)
    schedule = build_schedule("allreduce", "innetwork", p, S,
                              AlgoOptions(topology=topo, chunks=3))
    sends = schedule.kind == 0
    for rank in range(p):
        out = schedule.nbytes[sends & (schedule.src == rank)].sum()
        into = schedule.nbytes[sends & (schedule.dst == rank)].sum()
        assert close(out, S * (p + 1) / p) and close(into, S * (p + 1) / p)
    assert schedule.extra_nodes == tuple(range(p, p + planes))


def test_in_network_pipelining_approaches_s_n_plus_one_over_n():
    p = 8
    topo = nvswitch(p, bandwidth=B, reduce=True)
    times = [run("allreduce", "innetwork", topo, p, alpha=0.0, chunks=k) for k in (1, 4, 32)]
    ideal = (1 + 1 / p) * S / B
    assert times[0] > times[1] > times[2] > ideal
    assert times[2] < 1.1 * ideal          # the fill of a 32-deep pipeline


def test_switch_reduction_bandwidth_adds_compute_on_the_switch():
    p, rate = 4, 1e11
    topo = nvswitch(p, reduce=True, reduce_bandwidth=rate)
    schedule = build_schedule("allreduce", "innetwork", p, S, AlgoOptions(topology=topo, chunks=1))
    computes = schedule.kind == 1
    assert computes.sum() == p
    assert np.all(schedule.src[computes] == p)                      # on the switch rank
    assert np.allclose(schedule.seconds[computes], S / p / rate)


def test_pipelined_algorithms_choose_their_depth_when_none_is_given():
    from netsim.algorithms.registry import default_chunks, get_algorithm

    assert [default_chunks(s) for s in (1e3, 2**20, 2**26, 2**30, 2**36)] == [1, 2, 16, 64, 64]
    ring, dbtree = get_algorithm("allreduce", "ring"), get_algorithm("allreduce", "dbtree")
    assert ring.resolve(2**30, AlgoOptions()).chunks == 1
    assert dbtree.resolve(2**30, AlgoOptions()).chunks == 64
    assert dbtree.resolve(2**30, AlgoOptions(chunks=3)).chunks == 3
    # On a line of 4 the default-pipelined chain beats the unpipelined one by far.
    topo = full_mesh(4, bandwidth=B)
    assert run("broadcast", "chain", topo, 4, size=2**26, chunks=None) < \
        0.5 * run("broadcast", "chain", topo, 4, size=2**26)
