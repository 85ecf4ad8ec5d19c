"""Rank orders: permutations, and snake walks whose neighbours are physical neighbours."""

from __future__ import annotations

import numpy as np
import pytest

from netsim.algorithms import AlgoOptions
from netsim.algorithms.orders import rank_order
from netsim.topology.walks import hilbert_path as hilbert_walk, snake_cycle as snake_walk
from netsim.errors import InputError
from netsim.topology import mesh, nvswitch, ring, torus


def steps(walk, dims, closed):
    """Manhattan length of each step of ``walk`` (closing step included if ``closed``)."""
    coords = np.stack(np.unravel_index(walk, dims), axis=1)
    if closed:
        coords = np.vstack([coords, coords[:1]])
    return np.abs(np.diff(coords, axis=0)).sum(axis=1)


@pytest.mark.parametrize("dims", [(2, 3), (4, 4), (3, 4), (2, 5), (2, 2, 2), (4, 3, 2),
                                  (3, 2, 3), (6,), (1, 6), (2, 1, 4)])
def test_snake_is_a_neighbour_cycle_when_one_exists(dims):
    walk = snake_walk(dims)
    assert sorted(walk.tolist()) == list(range(int(np.prod(dims))))
    closes = int(np.prod(dims)) % 2 == 0 and sum(d > 1 for d in dims) > 1
    assert np.all(steps(walk, dims, closed=closes) == 1)


@pytest.mark.parametrize("dims", [(3, 3), (3, 5), (3, 3, 3)])
def test_snake_with_an_odd_node_count_is_a_neighbour_path(dims):
    walk = snake_walk(dims)
    assert np.all(steps(walk, dims, closed=False) == 1)


def test_snake_on_two_rows_is_the_boustrophedon():
    assert snake_walk((2, 4)).tolist() == [0, 1, 2, 3, 7, 6, 5, 4]


def test_hilbert_walk():
    walk = hilbert_walk((8, 8))
    assert sorted(walk.tolist()) == list(range(64))
    assert np.all(steps(walk, (8, 8), closed=False) == 1)
    assert sorted(hilbert_walk((4, 6)).tolist()) == list(range(24))   # any rectangle
    with pytest.raises(InputError, match="1-D or 2-D grid"):
        hilbert_walk((2, 2, 2))


def test_orders_follow_the_placement():
    topo = mesh((2, 3))
    placement = np.array([5, 0, 4, 1, 3, 2])        # rank -> node
    options = AlgoOptions(topology=topo, placement=placement)
    assert rank_order("natural", 6, options).tolist() == [0, 1, 2, 3, 4, 5]
    assert rank_order("row", 6, options).tolist() == [1, 3, 5, 4, 2, 0]
    # snake nodes 0 1 2 5 4 3 -> ranks 1 3 5 0 2 4
    assert rank_order("snake", 6, options).tolist() == [1, 3, 5, 0, 2, 4]


def test_a_subset_of_the_grid_is_ordered_along_the_walk():
    options = AlgoOptions(topology=torus((4, 4)), placement=np.array([0, 4, 1, 5]))
    assert rank_order("snake", 4, options).tolist() == [0, 2, 3, 1]


def test_orders_need_a_grid_or_a_topology():
    with pytest.raises(InputError, match="needs a mesh, torus or ring topology, got 'nvswitch'"):
        rank_order("snake", 4, AlgoOptions(topology=nvswitch(4)))
    assert rank_order("row", 4, AlgoOptions(topology=nvswitch(4))).tolist() == [0, 1, 2, 3]
    assert rank_order("snake", 5, AlgoOptions(topology=ring(5))).tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(InputError, match="unknown rank order 'zigzag'"):
        rank_order("zigzag", 4, AlgoOptions())
