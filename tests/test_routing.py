"""Routing: exact dimension-order paths, up/down ECMP, planes, explicit paths, invariants."""

from __future__ import annotations

import pickle
import re

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from netsim.errors import RoutingError
from netsim.topology.grid import mesh, torus
from netsim.topology.model import TopologyBuilder
from netsim.topology.ring import ring
from netsim.routing import (DimensionOrderRouter, PathTable, Router, ShortestPathRouter,
                            UpDownRouter, default_router, path_latency, route)
from netsim.topology.switched import full_mesh, nvswitch
from netsim.topology.trees import fat_tree, leaf_spine


# -- helpers -------------------------------------------------------------------------------
def names(topo, routes, sub=0):
    return [topo.link_names[l] for l in routes.path(sub)]


def one(topo, a, b, **kw):
    """Route a single request between nodes named a and b."""
    return route(topo, [topo.node(a)], [topo.node(b)], **kw)


def all_pairs(nodes):
    s, d = np.meshgrid(nodes, nodes, indexing="ij")
    return s.ravel(), d.ravel()


def node_walk(topo, routes, sub):
    path = routes.path(sub)
    return [int(routes.src[routes.sub_req[sub]])] + topo.link_dst[path].tolist()


def reference_dor(dims, wrap, both, order, s, d):
    """Scalar dimension-order walk (list of node coordinates), the documented rules."""
    cur, walk = list(s), [tuple(s)]
    for dim in order:
        k = dims[dim]
        fwd = (d[dim] - cur[dim]) % k
        if not both:
            step, n = 1, fwd
        elif wrap and k > 2:
            bwd = (k - fwd) % k
            plus = fwd < bwd or (fwd == bwd and s[dim] % 2 == 0)
            step, n = (1, fwd) if plus else (-1, bwd)
        else:
            step, n = (1 if d[dim] > cur[dim] else -1), abs(d[dim] - cur[dim])
        for _ in range(n):
            cur[dim] = (cur[dim] + step) % k
            walk.append(tuple(cur))
    return walk


# -- dimension order ---------------------------------------------------------------------------
def test_xy_path_on_4x4_mesh_goes_along_the_row_first():
    t = mesh((4, 4))
    r = one(t, "0_0", "2_3")
    assert names(t, r) == ["0_0->0_1", "0_1->0_2", "0_2->0_3", "0_3->1_3", "1_3->2_3"]
    r = one(t, "0_0", "2_3", router=DimensionOrderRouter(order=(0, 1)))
    assert names(t, r) == ["0_0->1_0", "1_0->2_0", "2_0->2_1", "2_1->2_2", "2_2->2_3"]
    r = one(t, "3_3", "1_2")
    assert names(t, r) == ["3_3->3_2", "3_2->2_2", "2_2->1_2"]


def test_torus_goes_the_shorter_way_round():
    t = torus((8, 8))
    assert names(t, one(t, "0_1", "0_7")) == ["0_1->0_0", "0_0->0_7"]        # - via wrap
    assert names(t, one(t, "6_0", "1_0")) == ["6_0->7_0", "7_0->0_0", "0_0->1_0"]
    assert names(t, one(t, "0_1", "0_3")) == ["0_1->0_2", "0_2->0_3"]


def test_torus_tie_goes_plus_from_even_and_minus_from_odd_coordinates():
    t = torus((4, 4))
    assert names(t, one(t, "0_0", "0_2")) == ["0_0->0_1", "0_1->0_2"]        # even: +
    assert names(t, one(t, "0_1", "0_3")) == ["0_1->0_0", "0_0->0_3"]        # odd: -
    assert names(t, one(t, "2_3", "0_3")) == ["2_3->3_3", "3_3->0_3"]        # even row: +
    assert names(t, one(t, "3_3", "1_3")) == ["3_3->2_3", "2_3->1_3"]        # odd row: -
    assert names(t, one(t, "2_0", "0_2")) == ["2_0->2_1", "2_1->2_2", "2_2->3_2", "3_2->0_2"]


def test_tie_rule_balances_antipodal_traffic_on_a_ring():
    t = ring(8)
    src = np.arange(8)
    r = route(t, src, (src + 4) % 8)
    assert r.hops.tolist() == [4] * 8
    assert r.link_bytes(1.0).tolist() == [2.0] * 16          # 32 link-uses over 16 links
    t = ring(6)                                               # k/2 odd: balanced per direction
    r = route(t, np.arange(6), (np.arange(6) + 3) % 6)
    load = r.link_bytes(1.0)
    assert load[t.sign > 0].sum() == load[t.sign < 0].sum() == 9.0


def test_rings_bidirectional_unidirectional_and_size_two():
    t = ring(6)
    assert names(t, one(t, "n0", "n4")) == ["n0->n5", "n5->n4"]
    u = ring(5, bidirectional=False)
    assert names(u, one(u, "n3", "n1")) == ["n3->n4", "n4->n0", "n0->n1"]
    two = ring(2)
    assert names(two, one(two, "n1", "n0")) == ["n1->n0"]
    small = torus((2, 3))
    assert names(small, one(small, "1_2", "0_0")) == ["1_2->1_0", "1_0->0_0"]


@pytest.mark.parametrize("make, wrap, both", [
    (lambda: mesh((3, 4, 5)), False, True),
    (lambda: torus((4, 3, 6)), True, True),
    (lambda: torus((2, 5, 4), links=2), True, True),
    (lambda: ring(7, bidirectional=False), True, False),
])
def test_vectorised_dimension_order_matches_a_scalar_reference(make, wrap, both):
    t = make()
    dims = t.params["dims"]
    src, dst = all_pairs(np.arange(t.num_nodes))
    r = route(t, src, dst, router=DimensionOrderRouter(planes="hash"))
    r.validate(t)
    order = tuple(range(len(dims) - 1, -1, -1))
    for i in range(0, len(src), 7):
        s, d = np.unravel_index(src[i], dims), np.unravel_index(dst[i], dims)
        want = [int(np.ravel_multi_index(c, dims))
                for c in reference_dor(dims, wrap, both, order, s, d)]
        assert node_walk(t, r, r.sub_ptr[i]) == want


def test_dimension_order_errors_name_the_problem():
    with pytest.raises(RoutingError, match=r"not a permutation of the 2 dimensions"):
        one(mesh((3, 3)), "0_0", "1_1", router=DimensionOrderRouter(order=(1, 1)))
    with pytest.raises(RoutingError, match=r"needs a grid topology with params\['dims'\]"):
        one(full_mesh(3), "n0", "n1", router=DimensionOrderRouter())
    # a mesh missing the link 0_1 -> 0_2 (built by hand with the grid conventions)
    b = TopologyBuilder("cut", family="mesh", dims=(1, 3))
    for c in range(3):
        b.add_node(f"0_{c}")
    b.add_link("0_0", "0_1", 1e9, dim=1, sign=1)
    b.add_link("0_1", "0_0", 1e9, dim=1, sign=-1)
    b.add_link("0_2", "0_1", 1e9, dim=1, sign=-1)
    with pytest.raises(RoutingError) as err:
        one(b.build(), "0_0", "0_2")
    assert str(err.value) == ("no path from '0_0' to '0_2' in topology 'cut': dimension-order "
                              "routing needs a missing link out of '0_1'")


# -- planes ------------------------------------------------------------------------------------
def test_planes_spray_hash_and_fixed():
    t = mesh((2, 2), links=3)
    r = one(t, "0_0", "1_1")
    assert r.num_subflows == 3
    assert r.sub_frac.tolist() == [1 / 3] * 3
    assert [t.plane[r.path(s)].tolist() for s in range(3)] == [[0, 0], [1, 1], [2, 2]]
    r.validate(t)
    assert r.link_bytes(3.0).sum() == pytest.approx(6.0)     # 3 bytes x 2 hops
    fixed = one(t, "0_0", "1_1", router=DimensionOrderRouter(planes=2))
    assert fixed.num_subflows == 1 and t.plane[fixed.path(0)].tolist() == [2, 2]
    src, dst = np.zeros(60, int), np.full(60, 3)
    hashed = route(t, src, dst, router=DimensionOrderRouter(planes="hash", seed=1))
    chosen = t.plane[hashed.path_links].reshape(60, 2)
    assert (chosen[:, 0] == chosen[:, 1]).all()
    assert sorted(set(chosen[:, 0].tolist())) == [0, 1, 2]
    again = route(t, src, dst, router=DimensionOrderRouter(planes="hash", seed=1))
    assert np.array_equal(again.path_links, hashed.path_links)
    with pytest.raises(RoutingError, match="plane 3 does not exist"):
        one(t, "0_0", "1_1", router=DimensionOrderRouter(planes=3))
    with pytest.raises(RoutingError, match="planes must be"):
        DimensionOrderRouter(planes="round-robin")


def test_nvswitch_spray_stripes_evenly_over_all_nvlinks():
    t = nvswitch(8, switches=4, bandwidth="450GB/s", links_per_switch=(5, 4, 4, 5))
    r = one(t, "gpu0", "gpu3")
    assert r.num_subflows == 18
    assert np.allclose(r.sub_frac, 1 / 18) and r.sub_frac.sum() == pytest.approx(1.0)
    load = r.link_bytes(18.0)
    up = np.flatnonzero(t.link_src == t.node("gpu0"))
    assert load[up].tolist() == [1.0] * 18                   # every NVLink of gpu0 once
    assert r.hops.tolist() == [2] * 18
    assert isinstance(default_router(t), UpDownRouter) and default_router(t).ecmp == "spray"


# -- up/down on switched fabrics ---------------------------------------------------------------
def test_fat_tree_paths_are_valley_free_with_2_4_6_hops():
    t = fat_tree(4)
    hosts = t.endpoints
    src, dst = all_pairs(hosts)
    r = route(t, src, dst)
    r.validate(t)
    tier = np.array([a["tier"] for a in t.node_attrs])
    pod = np.array([a["pod"] for a in t.node_attrs])
    edge = src // 2 == dst // 2
    same_pod = pod[src] == pod[dst]
    assert r.num_subflows == len(src)
    expected = np.where(src == dst, 0, np.where(edge, 2, np.where(same_pod, 4, 6)))
    assert np.array_equal(r.hops, expected)
    for s in range(r.num_subflows):
        levels = tier[node_walk(t, r, s)]
        top = int(np.argmax(levels))
        assert (np.diff(levels[:top + 1]) == 1).all() and (np.diff(levels[top:]) == -1).all()


def test_fat_tree_spray_splits_over_1_2_4_paths():
    t = fat_tree(4)
    src, dst = all_pairs(t.endpoints)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    r = route(t, src, dst, router=UpDownRouter(ecmp="spray"))
    r.validate(t)
    pod = np.array([a["pod"] for a in t.node_attrs])
    n_sub = np.diff(r.sub_ptr)
    expected = np.where(src // 2 == dst // 2, 1, np.where(pod[src] == pod[dst], 2, 4))
    assert np.array_equal(n_sub, expected)
    assert np.allclose(np.add.reduceat(r.sub_frac, r.sub_ptr[:-1]), 1.0)
    assert np.allclose(r.sub_frac, 1.0 / n_sub[r.sub_req])
    walks = {tuple(node_walk(t, r, s)) for s in r.subflows(int(np.flatnonzero(expected == 4)[0]))}
    assert len(walks) == 4                                    # four distinct core paths


def _valley_free_shortest(t, s, d):
    """Every shortest valley-free walk s -> d by brute force (networkx), as node tuples."""
    level = np.array([a["tier"] for a in t.node_attrs], dtype=float)
    graph = nx.DiGraph([(int(a), int(b)) for a, b in zip(t.link_src, t.link_dst)
                        if level[a] != level[b]])
    walks = [tuple(w) for w in nx.all_simple_paths(graph, int(s), int(d), cutoff=8)
             if all(level[w[i + 1]] < level[w[i]] for i in range(
                 int(np.argmax(level[w])), len(w) - 1))
             and all(level[w[i + 1]] > level[w[i]] for i in range(int(np.argmax(level[w]))))]
    best = min(len(w) for w in walks)
    return {w for w in walks if len(w) == best}


@pytest.mark.parametrize("topo", [fat_tree(4), leaf_spine(2, 3, 2)], ids=["fattree", "leafspine"])
def test_spray_takes_every_shortest_valley_free_path_once(topo):
    src, dst = all_pairs(topo.endpoints)
    keep = src != dst
    r = route(topo, src[keep], dst[keep], router=UpDownRouter(ecmp="spray"))
    for q, (s, d) in enumerate(zip(src[keep], dst[keep])):
        walks = [tuple(node_walk(topo, r, sub)) for sub in r.subflows(q)]
        assert len(walks) == len(set(walks))
        assert set(walks) == _valley_free_shortest(topo, s, d)


def test_shortest_paths_over_top_nodes_of_different_heights_are_all_found():
    # From e0 to e1 in 3 hops: up two (e0 -> m -> n) and down one, or up one (e0 -> p) and
    # down two (p -> q -> e1). The top nodes n and p are not as high: both are kept.
    b = TopologyBuilder("uneven")
    for name, tier in [("h0", 0), ("h1", 0), ("e0", 1), ("e1", 1), ("m", 2), ("n", 3),
                       ("p", 2), ("q", 1.5)]:
        b.add_node(name, switch=tier > 0, tier=tier)
    for x, y in [("h0", "e0"), ("h1", "e1"), ("e0", "m"), ("m", "n"), ("n", "e1"),
                 ("e0", "p"), ("p", "q"), ("q", "e1")]:
        b.add_cable(x, y, 1e9)
    t = b.build()
    r = route(t, np.array([t.node("h0")]), np.array([t.node("h1")]),
              router=UpDownRouter(ecmp="spray"))
    names = {tuple(t.node_names[i] for i in node_walk(t, r, sub)) for sub in r.subflows(0)}
    assert names == {("h0", "e0", "m", "n", "e1", "h1"), ("h0", "e0", "p", "q", "e1", "h1")}
    assert names == {tuple(t.node_names[i] for i in w)
                     for w in _valley_free_shortest(t, t.node("h0"), t.node("h1"))}


def test_ecmp_hash_is_deterministic_per_seed_and_spreads_over_paths():
    t = fat_tree(4)
    n = 400
    src, dst = np.full(n, t.node("h0")), np.full(n, t.node("h15"))
    keys = np.arange(n) * 7 + 3
    a = route(t, src, dst, keys=keys, router=UpDownRouter(seed=0))
    b = route(t, src, dst, keys=keys, router=UpDownRouter(seed=0))
    c = route(t, src, dst, keys=keys, router=UpDownRouter(seed=1))
    assert np.array_equal(a.path_links, b.path_links)
    assert not np.array_equal(a.path_links, c.path_links)
    core = a.path_links.reshape(n, 6)[:, 2]                  # agg -> core hop
    counts = np.bincount(core, minlength=t.num_links)[np.unique(core)]
    assert len(counts) == 4 and counts.min() > n / 8          # all four paths get traffic
    d = route(t, src, dst, keys=keys[::-1].copy(), router=UpDownRouter(seed=0))
    assert np.array_equal(d.path_links.reshape(n, 6), a.path_links.reshape(n, 6)[::-1])


def test_leaf_spine_and_switch_endpoints():
    t = leaf_spine(2, 3, 2, links=2)
    r = one(t, "h0", "h5", router=UpDownRouter(ecmp="spray"))
    assert r.num_subflows == 4                               # 2 spines x 2 planes
    assert {names(t, r, s)[1] for s in range(4)} == {"leaf0->spine0", "leaf0->spine0#1",
                                                     "leaf0->spine1", "leaf0->spine1#1"}
    assert names(t, one(t, "h0", "leaf0")) == ["h0->leaf0"]
    assert names(t, one(t, "spine1", "h3")) == ["spine1->leaf1", "leaf1->h3"]
    assert names(t, one(t, "h1", "h0")) == ["h1->leaf0", "leaf0->h0"]


# -- shortest path -----------------------------------------------------------------------------
def diamond(order=("a->c", "a->b")):
    """a -> {b, c} -> d with the first link in ``order`` created first (lower id)."""
    b = TopologyBuilder("diamond")
    for n in "abcd":
        b.add_node(n)
    for name in order:
        u, v = name.split("->")
        b.add_link(u, v, 1e9, 1e-6, name=name)
    b.add_link("b", "d", 1e9, 2e-6, name="b->d")
    b.add_link("c", "d", 1e9, 3e-6, name="c->d")
    return b.build()


def test_shortest_path_breaks_ties_by_lowest_link_id():
    t = diamond(("a->c", "a->b"))
    r = one(t, "a", "d")
    assert names(t, r) == ["a->c", "c->d"]
    assert r.sub_latency.tolist() == [1e-6 + 3e-6]
    t = diamond(("a->b", "a->c"))
    assert names(t, one(t, "a", "d")) == ["a->b", "b->d"]


def test_unreachable_destination():
    b = TopologyBuilder("x")
    for n in "abc":
        b.add_node(n)
    b.add_cable("a", "b", 1e9)
    t = b.build()
    with pytest.raises(RoutingError) as err:
        route(t, [0, 0], [1, 2])
    assert str(err.value) == "no path from 'a' to 'c' in topology 'x'"
    s = TopologyBuilder("tree", family="fat_tree")
    s.add_node("h0", tier=0)
    s.add_node("h1", tier=0)
    s.add_node("sw", switch=True, tier=1)
    s.add_cable("h0", "sw", 1e9)
    s.add_link("h1", "sw", 1e9)
    with pytest.raises(RoutingError, match="^no path from 'h0' to 'h1' in topology 'tree'$"):
        one(s.build(), "h0", "h1")


# -- explicit paths, self requests, the plugin seam --------------------------------------------
def test_explicit_path_wins_and_is_checked():
    t = mesh((2, 3))
    detour = ["0_0->1_0", "1_0->1_1", "1_1->0_1"]
    r = route(t, [0, 0, 4], [1, 0, 4], paths={0: detour})
    assert names(t, r, 0) == detour
    assert r.hops.tolist() == [3, 0, 0] and r.num_subflows == 3
    ids = [t.link(n) for n in detour]
    assert np.array_equal(route(t, [0], [1], paths={0: ids}).path_links, ids)
    b = TopologyBuilder("p")
    for n in "abcd":
        b.add_node(n)
    b.add_link("a", "b", 1e9, name="l1")
    b.add_link("b", "c", 1e9, name="l2")
    b.add_link("c", "d", 1e9, name="l3")
    b.add_link("d", "a", 1e9, name="l4")
    p = b.build()
    src, dst = [0, 0, 0, 1], [3, 3, 3, 3]
    assert names(p, route(p, src, dst, paths={3: [1, 2]}), 3) == ["l2", "l3"]
    with pytest.raises(RoutingError) as err:
        route(p, src, dst, paths={3: ["l2", "l3"], 1: ["l1", "l3"]})
    assert str(err.value) == ("flow 1: explicit path breaks at link 'l1' (ends at 'b', next "
                              "starts at 'c')")
    with pytest.raises(RoutingError, match=r"^flow 2: explicit path starts at 'b', not at its "
                                           r"source 'a'$"):
        route(p, src, dst, paths={2: [1, 2]})
    with pytest.raises(RoutingError, match=r"^flow 0: explicit path ends at 'c', not at its "
                                           r"destination 'd'$"):
        route(p, src, dst, paths={0: [0, 1]})
    with pytest.raises(RoutingError, match=r"^flow 0: explicit path has no link 9 "):
        route(p, src, dst, paths={0: [0, 9]})
    with pytest.raises(RoutingError, match=r"^flow 0: explicit path is empty but 'a' is not 'd'$"):
        route(p, src, dst, paths={0: []})
    with pytest.raises(RoutingError, match=r"explicit path given for flow 7, but there are 4"):
        route(p, src, dst, paths={7: [0]})


class FixedRouter:
    """Test double: every request takes ``links``; records what it was asked."""

    def __init__(self, links):
        self.links, self.calls = list(links), []

    def link_paths(self, topo, src, dst, keys):
        self.calls.append((src.tolist(), dst.tolist(), keys.tolist()))
        return PathTable.from_paths([self.links] * len(src))


def test_router_seam_receives_only_requests_that_need_routing():
    t = diamond()
    double = FixedRouter([t.link("a->b"), t.link("b->d")])
    assert isinstance(double, Router) and isinstance(ShortestPathRouter(), Router)
    r = route(t, [0, 0, 2, 0], [3, 0, 2, 3], keys=[10, 11, 12, 13], router=double,
              paths={3: ["a->c", "c->d"]})
    assert double.calls == [([0], [3], [10])]
    assert [names(t, r, s) for s in range(4)] == [["a->b", "b->d"], [], [],
                                                  ["a->c", "c->d"]]
    assert r.sub_latency.tolist() == [3e-6, 0.0, 0.0, 4e-6]
    assert r.sub_req.tolist() == [0, 1, 2, 3]


def test_validate_rejects_a_broken_plugin_path():
    t = diamond()
    r = route(t, [0], [3], router=FixedRouter([t.link("a->b"), t.link("c->d")]))
    with pytest.raises(RoutingError, match=r"^flow 0: path breaks at link 'a->b' \(ends at "
                                           r"'b', next starts at 'c'\)$"):
        r.validate(t)


def test_routes_arrays_incidence_take_and_latency():
    t = mesh((3, 3), latency=1e-6, links=2)
    src, dst = np.array([0, 8, 4]), np.array([8, 0, 4])
    r = route(t, src, dst)
    assert r.sub_ptr.tolist() == [0, 2, 4, 5] and r.sub_req.tolist() == [0, 0, 1, 1, 2]
    assert r.nnz == 16 and r.hops.tolist() == [4, 4, 4, 4, 0]
    assert r.sub_latency == pytest.approx([4e-6] * 4 + [0.0], abs=1e-18)
    assert np.array_equal(r.sub_latency, path_latency(t, r.path_ptr, r.path_links))
    inc = r.incidence()
    assert inc.shape == (t.num_links, 5) and inc.nnz == 16 and inc.sum() == 16.0
    assert (inc.T @ np.ones(t.num_links)).tolist() == [4, 4, 4, 4, 0]
    assert inc[r.path(2)[0], 2] == 1.0 and inc is r.incidence()
    sub = r.take([2, 1])
    assert sub.src.tolist() == [4, 8] and sub.sub_ptr.tolist() == [0, 1, 3]
    assert np.array_equal(sub.path(1), r.path(2)) and sub.sub_latency.tolist()[0] == 0.0
    with pytest.raises(ValueError):
        r.path_links[0] = 1                                   # compiled routes are read-only
    assert route(t, [], []).num_requests == 0


def test_bad_requests_are_reported():
    t = mesh((2, 2))
    with pytest.raises(RoutingError, match=r"^flow 1: destination node 9 is not a node"):
        route(t, [0, 1], [1, 9])
    with pytest.raises(RoutingError, match="2 sources but 1 destinations"):
        route(t, [0, 1], [1])
    with pytest.raises(RoutingError, match="keys must have one entry per flow"):
        route(t, [0, 1], [1, 2], keys=[1])


def test_default_routers_and_pickling():
    assert isinstance(default_router(mesh((2, 2))), DimensionOrderRouter)
    assert isinstance(default_router(ring(4)), DimensionOrderRouter)
    assert default_router(fat_tree(4)).ecmp == "hash"
    assert default_router(leaf_spine(2, 2, 2)).ecmp == "hash"
    assert isinstance(default_router(full_mesh(4)), ShortestPathRouter)
    t = fat_tree(4)
    src, dst = all_pairs(t.endpoints)
    for router in (UpDownRouter(seed=3), ShortestPathRouter(planes="hash", seed=2)):
        before = route(t, src, dst, router=router)
        clone = pickle.loads(pickle.dumps(router))
        assert repr(clone) == repr(router)
        assert np.array_equal(route(t, src, dst, router=clone).path_links, before.path_links)
    assert re.fullmatch(r"UpDownRouter\(ecmp='hash', planes='spray', seed=3\)",
                        repr(UpDownRouter(seed=3)))


# -- invariants on random graphs -----------------------------------------------------------------
@st.composite
def random_graphs(draw):
    n = draw(st.integers(2, 9))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                    st.integers(1, 3)), min_size=1, max_size=25))
    b = TopologyBuilder("random")
    for i in range(n):
        b.add_node(f"v{i}")
    for u, v, k in edges:
        if u != v:
            for _ in range(k):
                b.add_link(u, v, 1e9, draw(st.sampled_from([0.0, 1e-6, 2.5e-7])))
    if not b._links:
        b.add_link(0, 1, 1e9)
    topo = b.build()
    reqs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                         min_size=1, max_size=30))
    return topo, reqs


@settings(max_examples=60, deadline=None)
@given(random_graphs(), st.sampled_from(["spray", "hash", 0]))
def test_routes_are_shortest_walks_with_unit_fractions(case, planes):
    topo, reqs = case
    graph = nx.DiGraph(list(zip(topo.link_src.tolist(), topo.link_dst.tolist())))
    graph.add_nodes_from(range(topo.num_nodes))
    reqs = [(s, d) for s, d in reqs if nx.has_path(graph, s, d)]
    if not reqs:
        return
    src, dst = np.array(reqs).T
    r = route(topo, src, dst, router=ShortestPathRouter(planes=planes, seed=5))
    r.validate(topo)
    assert np.allclose(np.add.reduceat(r.sub_frac, r.sub_ptr[:-1]), 1.0)
    lengths = [nx.shortest_path_length(graph, s, d) for s, d in reqs]
    assert np.array_equal(r.hops, np.repeat(lengths, np.diff(r.sub_ptr)))
    assert np.allclose(r.sub_latency, [topo.latency[r.path(s)].sum()
                                       for s in range(r.num_subflows)])
    if planes == "spray":
        for i, (s, d) in enumerate(reqs):
            walk = node_walk(topo, r, r.sub_ptr[i])
            most = max((len(topo.pair_links[(a, b)]) for a, b in zip(walk, walk[1:])), default=1)
            assert np.diff(r.sub_ptr)[i] == most
    else:
        assert r.num_subflows == len(reqs)
    mixed = route(topo, src, dst, router=ShortestPathRouter(planes=planes, seed=5),
                  paths={0: r.path(r.sub_ptr[0]).tolist()})
    mixed.validate(topo)
