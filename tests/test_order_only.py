"""Algorithms registered ``order_only`` (the rings): their schedule for any placement is the
natural order's relabelled by the placement's rank order, op for op, which is what lets a
placement search build each of them once per size (placement.workload._group_schedule)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from netsim.algorithms import AlgoOptions, algorithms_for, build_schedule
from netsim.placement.workload import _group_schedule
from netsim.topology import parse_topology

_FIELDS = ("kind", "src", "dst", "nbytes", "seconds", "dep_ptr", "dep_idx", "tag")
ORDER_ONLY = [(op, a.name) for op in ("allreduce", "allgather", "reducescatter")
              for a in algorithms_for(op) if a.order_only]


def test_the_rings_and_only_they_say_so():
    assert sorted(ORDER_ONLY) == sorted(itertools.product(
        ("allreduce", "allgather", "reducescatter"), ("ring", "bidir_ring")))


@pytest.mark.parametrize("spec,n", [("galaxy-wh", 8), ("t3000", 8), ("torus:4x4", 6),
                                    ("dgx-h100", 5)])
@pytest.mark.parametrize("op,name", ORDER_ONLY)
def test_relabelled_natural_order_is_the_placed_schedule(spec, n, op, name):
    topo = parse_topology(spec)
    rng = np.random.default_rng(n)
    for chunks, gamma in [(1, None), (2, 5e10)]:
        nodes = tuple(rng.permutation(topo.first_endpoints(len(topo.endpoints)))[:n].tolist())
        placed = build_schedule(op, name, n, 3e6, AlgoOptions(
            chunks=chunks, gamma=gamma, topology=topo, placement=np.array(nodes),
            extra={"annotate": False}))
        cached = _group_schedule(op, name, n, 3e6, chunks, gamma, topo, nodes)
        for field in _FIELDS:
            assert np.array_equal(getattr(cached, field), getattr(placed, field)), field
        assert (cached.num_ranks, cached.tags, cached.meta) == \
            (placed.num_ranks, placed.tags, placed.meta)


def test_big_machines_get_auto_without_the_algorithms_that_cannot_scale():
    """tt-metal's CCL models refuse above their limit in one line (auto skips them), and
    the one-shot all-reduce with free reductions adds no per-step work: `auto` on a
    1,024-rank torus builds no n^2-object schedule (4,096 ranks took over 10 min before)."""
    from netsim.algorithms import get_algorithm
    from netsim.algorithms.tenstorrent import MAX_RANKS

    for name in ("tt_line", "tt_ring"):
        algo = get_algorithm("allreduce", name)
        assert algo.why_not(32, AlgoOptions()) is None
        assert f"up to {MAX_RANKS} chips" in algo.why_not(MAX_RANKS + 1, AlgoOptions())
    free = build_schedule("allreduce", "oneshot", 6, 6e6, AlgoOptions())
    timed = build_schedule("allreduce", "oneshot", 6, 6e6, AlgoOptions(gamma=1e9))
    assert free.num_ops == 30 and timed.num_ops == 60      # sends; + one reduction each
    assert np.array_equal(free.dst, timed.dst[:30])
