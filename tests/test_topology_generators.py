"""Generators: node/link counts, link tags, parallel planes, attributes, argument errors."""

import math

import numpy as np
import pytest

from netsim.errors import TopologyError
from netsim.topology import fat_tree, full_mesh, leaf_spine, mesh, nvswitch, ring, torus


def links_between(topo, a, b):
    """Ids of the links a->b (by name), in plane order."""
    return [int(i) for i in topo.pair_links.get((topo.node(a), topo.node(b)), [])]


def reversed_pairs_match(topo):
    """Every link a->b (plane p) has a partner b->a (plane p)."""
    fwd = set(zip(topo.link_src.tolist(), topo.link_dst.tolist(), topo.plane.tolist()))
    return all((d, s, p) in fwd for s, d, p in fwd)


# -- ring ------------------------------------------------------------------------------------

def test_ring_counts_names_and_tags():
    t = ring(8, bandwidth="25GB/s", latency="1us")
    assert (t.num_nodes, t.num_endpoints, t.num_switches, t.num_links) == (8, 8, 0, 16)
    assert t.node_names == tuple(f"n{i}" for i in range(8))
    assert t.family == "ring" and t.params == {"dims": (8,)}
    assert np.all(t.bandwidth == 25e9) and np.all(t.latency == 1e-6)
    assert np.all(t.dim == 0)
    for i in range(8):
        j = (i + 1) % 8
        (fwd,), (back,) = links_between(t, f"n{i}", f"n{j}"), links_between(t, f"n{j}", f"n{i}")
        assert (t.sign[fwd], t.sign[back]) == (1, -1)
        assert t.wrap[fwd] == t.wrap[back] == (i == 7)
    assert int(t.wrap.sum()) == 2


def test_ring_of_two_is_one_cable_without_wrap():
    t = ring(2)
    assert t.num_links == 2 and not t.wrap.any()
    assert sorted(t.sign.tolist()) == [-1, 1]


def test_unidirectional_ring_has_only_plus_links():
    t = ring(5, bidirectional=False, links=2)
    assert t.num_links == 10
    assert np.all(t.sign == 1)
    assert np.array_equal(t.link_dst, (t.link_src + 1) % 5)
    assert links_between(t, "n4", "n0") and t.wrap[links_between(t, "n4", "n0")].all()
    assert not links_between(t, "n1", "n0")


# -- mesh and torus -------------------------------------------------------------------------

@pytest.mark.parametrize("dims", [(8,), (8, 4), (3, 4, 5), (2, 3, 1, 2)])
def test_mesh_counts(dims):
    t = mesh(dims)
    total = math.prod(dims)
    cables = sum(total // k * (k - 1) for k in dims)
    assert (t.num_endpoints, t.num_links) == (total, 2 * cables)
    assert not t.wrap.any() and reversed_pairs_match(t)


@pytest.mark.parametrize("dims", [(8,), (4, 4), (4, 4, 4), (8, 4), (2, 5), (3, 1, 4)])
def test_torus_counts(dims):
    t = torus(dims)
    total = math.prod(dims)
    # a dimension of size k >= 3 is k rings, size 2 has a single cable, size 1 none
    cables = sum(total // k * (k if k >= 3 else k - 1) for k in dims)
    assert t.num_links == 2 * cables
    assert int(t.wrap.sum()) == 2 * sum(total // k for k in dims if k >= 3)


def test_grid_node_order_names_and_coords():
    t = mesh((8, 4))
    for coord in [(0, 0), (3, 2), (7, 3)]:
        index = int(np.ravel_multi_index(coord, (8, 4)))
        assert t.node_names[index] == f"{coord[0]}_{coord[1]}"
        assert t.coords[index] == (float(coord[0]), float(coord[1]))
        assert t.endpoints[index] == index
    assert t.params == {"dims": (8, 4)} and t.family == "mesh"


def test_torus_link_tags():
    t = torus((4, 3))
    # along dim 0 (size 4): 1_2 -> 2_2 is +, 2_2 -> 1_2 is -, no wrap
    (up,), (down,) = links_between(t, "1_2", "2_2"), links_between(t, "2_2", "1_2")
    assert (t.dim[up], t.sign[up], t.wrap[up]) == (0, 1, False)
    assert (t.dim[down], t.sign[down], t.wrap[down]) == (0, -1, False)
    # wrap along dim 0: 3_1 -> 0_1 continues the + direction
    (w_plus,), (w_minus,) = links_between(t, "3_1", "0_1"), links_between(t, "0_1", "3_1")
    assert (t.dim[w_plus], t.sign[w_plus], t.wrap[w_plus]) == (0, 1, True)
    assert (t.dim[w_minus], t.sign[w_minus], t.wrap[w_minus]) == (0, -1, True)
    # along dim 1 (size 3): 2_2 -> 2_0 is the + wrap
    (w,) = links_between(t, "2_2", "2_0")
    assert (t.dim[w], t.sign[w], t.wrap[w]) == (1, 1, True)
    # every + link goes to coordinate +1 (mod k) along its dim, every - link to -1
    dims = np.array([4, 3])
    src = np.array(np.unravel_index(t.link_src, (4, 3))).T
    dst = np.array(np.unravel_index(t.link_dst, (4, 3))).T
    step = (dst - src)[np.arange(t.num_links), t.dim] % dims[t.dim]
    assert np.all(step == t.sign % dims[t.dim])
    # wrap links are exactly those that jump between coordinates 0 and k-1
    jump = np.abs((dst - src)[np.arange(t.num_links), t.dim]) == dims[t.dim] - 1
    assert np.array_equal(jump, t.wrap)


def test_torus_dimension_of_two_has_no_wrap():
    t = torus((2, 4))
    assert links_between(t, "0_0", "1_0") and links_between(t, "1_0", "0_0")
    assert len(links_between(t, "1_0", "0_0")) == 1
    assert not t.wrap[t.dim == 0].any()


def test_parallel_links_are_planes_of_full_bandwidth():
    t = mesh((4, 4), bandwidth="12.5GB/s", links=4)
    assert t.num_links == 4 * 2 * 24
    ids = links_between(t, "1_1", "1_2")
    assert len(ids) == 4
    assert t.plane[ids].tolist() == [0, 1, 2, 3]
    assert np.all(t.bandwidth[ids] == 12.5e9)          # k links, not one of k x bandwidth
    assert [t.link_names[i] for i in ids] == ["1_1->1_2", "1_1->1_2#1", "1_1->1_2#2",
                                              "1_1->1_2#3"]
    assert np.all(t.sign[ids] == 1) and np.all(t.dim[ids] == 1)
    interior = t.node("1_1")
    assert t.out_degree_bandwidth[interior] == 4 * 4 * 12.5e9


# -- trees ----------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [2, 4, 6, 8])
def test_fat_tree_counts(k):
    t = fat_tree(k)
    h = k // 2
    assert t.num_endpoints == k ** 3 // 4
    assert t.num_switches == k * h * 2 + h * h
    assert t.num_links == 2 * 3 * k ** 3 // 4     # host, edge-agg and agg-core cables
    tiers = np.array([a["tier"] for a in t.node_attrs])
    assert np.bincount(tiers).tolist() == [k ** 3 // 4, k * h, k * h, h * h]


def test_fat_tree_4_structure():
    t = fat_tree(4, bandwidth="100GB/s", host_bandwidth="50GB/s", links=2)
    assert (t.num_endpoints, t.num_switches, t.num_links) == (16, 20, 48 * 2 * 2)
    assert t.params == {"k": 4} and t.family == "fat_tree"
    attrs = dict(zip(t.node_names, t.node_attrs))
    assert attrs["h5"] == {"tier": 0, "pod": 1}
    assert attrs["edge3_1"] == {"tier": 1, "pod": 3}
    assert attrs["agg2_0"] == {"tier": 2, "pod": 2}
    assert attrs["core3"] == {"tier": 3, "pod": -1}
    # h5 hangs off edge1_0; edge switches reach both aggs of their pod; agg a of every pod
    # reaches cores a*2 and a*2+1
    assert np.all(t.bandwidth[links_between(t, "h5", "edge1_0")] == 50e9)
    assert len(links_between(t, "edge1_0", "agg1_1")) == 2
    assert not links_between(t, "edge1_0", "agg2_0")
    for pod in range(4):
        assert links_between(t, f"agg{pod}_1", "core2") and links_between(t, f"agg{pod}_1", "core3")
        assert not links_between(t, f"agg{pod}_1", "core0")
    assert np.all(t.bandwidth[links_between(t, "agg0_0", "core1")] == 100e9)
    core = t.node("core0")
    assert np.sum(t.link_dst == core) == 4 * 2            # one cable per pod, 2 planes


def test_leaf_spine_uplinks_follow_oversubscription():
    t = leaf_spine(16, 8, 4, bandwidth="25GB/s", oversubscription=2, links=2)
    assert (t.num_endpoints, t.num_switches) == (128, 12)
    assert t.num_links == 2 * 2 * (128 + 32)
    leaf, spine = t.node("leaf3"), t.node("spine1")
    up = t.pair_links[(leaf, spine)]
    host_bw = t.bandwidth[t.link_src == t.node("h48")].sum()
    uplink_bw = t.bandwidth[(t.link_src == leaf) & t.is_switch[t.link_dst]].sum()
    assert host_bw * 16 / uplink_bw == pytest.approx(2.0)
    assert np.all(t.bandwidth[up] == 16 * 25e9 / (4 * 2))
    assert links_between(t, "h48", "leaf3") and not links_between(t, "h48", "leaf2")
    assert [t.node_attrs[t.node(n)]["tier"] for n in ("h0", "leaf0", "spine0")] == [0, 1, 2]


# -- switched --------------------------------------------------------------------------------

def test_nvswitch_split_and_reduce():
    t = nvswitch(8, switches=4, bandwidth="450GB/s", links_per_switch=(5, 4, 4, 5),
                 reduce=True, reduce_bandwidth="100GB/s")
    assert (t.num_endpoints, t.num_switches, t.num_links) == (8, 4, 2 * 8 * 18)
    assert np.all(t.bandwidth == 25e9)
    assert t.out_degree_bandwidth[t.node("gpu3")] == pytest.approx(450e9)
    assert len(links_between(t, "gpu3", "sw0")) == 5 and len(links_between(t, "sw2", "gpu3")) == 4
    assert t.can_reduce(t.node("sw1")) and not t.can_reduce(t.node("gpu0"))
    assert t.node_attrs[t.node("sw1")]["reduce_bandwidth"] == 100e9
    assert t.params == {"gpus": 8, "switches": 4, "links_per_switch": (5, 4, 4, 5)}


def test_nvswitch_even_split_over_planes():
    t = nvswitch(4, switches=2, bandwidth=400e9, links=2)
    assert t.num_links == 2 * 4 * 2 * 2 and np.all(t.bandwidth == 100e9)
    assert not any(t.can_reduce(i) for i in range(t.num_nodes))


def test_full_mesh():
    t = full_mesh(6, bandwidth=1e9, links=3)
    assert (t.num_endpoints, t.num_links) == (6, 6 * 5 * 3)
    assert len(links_between(t, "n0", "n5")) == 3
    assert t.family == "full_mesh" and t.params == {"n": 6}


# -- argument errors ----------------------------------------------------------------------

@pytest.mark.parametrize("make, message", [
    (lambda: mesh((0, 4)), "mesh: dims must be positive integers, got (0, 4)"),
    (lambda: torus(()), "torus: dims must be positive integers, got ()"),
    (lambda: mesh((4, 4), bandwidth=-1.0), "mesh: bandwidth must be a positive finite number"),
    (lambda: mesh((4, 4), bandwidth="fast"), "cannot read bandwidth 'fast'"),
    (lambda: torus((4, 4), latency=-1e-9), "torus: latency must be a finite number"),
    (lambda: ring(1), "ring: n must be an integer >= 2, got 1"),
    (lambda: ring(4, links=0), "ring: links must be a positive integer, got 0"),
    (lambda: fat_tree(5), "fat_tree: k must be even, got 5"),
    (lambda: leaf_spine(4, 2, 2, oversubscription=0), "oversubscription must be a positive"),
    (lambda: nvswitch(8, switches=2, links_per_switch=(1, 2, 3)),
     "links_per_switch must have one entry per switch (2)"),
    (lambda: nvswitch(8, links=2, links_per_switch=2), "give links or links_per_switch"),
    (lambda: nvswitch(8, reduce_bandwidth=1e9), "reduce_bandwidth needs reduce=True"),
    (lambda: full_mesh(1), "full_mesh: n must be an integer >= 2, got 1"),
])
def test_generator_errors(make, message):
    with pytest.raises(TopologyError) as err:
        make()
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_large_torus_is_built_with_arrays_quickly():
    import time

    start = time.perf_counter()
    t = torus((32, 32, 32), links=2)
    assert t.num_links == 32 ** 3 * 6 * 2
    assert time.perf_counter() - start < 5.0
