"""summarize(): counts, diameter, injection and bisection bandwidth checked by brute force."""

import math
from dataclasses import replace

import networkx as nx
import pytest

from netsim.topology import (TopologyBuilder, fat_tree, from_networkx, full_mesh, leaf_spine,
                             mesh, nvswitch, ring, summarize, torus)
from netsim.topology.summary import (bisection_bandwidth, brute_force_bisection, diameter,
                                     split_cut)


def as_custom(topo):
    """The same links under family 'custom', so no closed form applies."""
    return replace(topo, family="custom", params={})


# -- the brute force itself, on hand-computed cases -------------------------------------------

def test_brute_force_on_a_weighted_path():
    # a -1- b -2- c -3- d: {a,b}|{c,d} cuts the middle link (2); {a,d}|{b,c} cuts 1 + 3.
    g = nx.Graph()
    for u, v, bw in [("a", "b", 1.0), ("b", "c", 2.0), ("c", "d", 3.0)]:
        g.add_edge(u, v, bandwidth=bw)
    t = from_networkx(g)
    assert brute_force_bisection(t) == 2.0
    assert split_cut(t, [0, 3]) == 4.0
    assert bisection_bandwidth(t) == (2.0, "exact (enumerated 3 balanced splits)")


def test_brute_force_takes_the_weaker_direction_and_free_switches():
    # two hosts on one switch; the uplinks are 10, the downlinks 3 -> one direction gives 3
    b = TopologyBuilder("asym")
    h0, h1, s = b.add_node("h0"), b.add_node("h1"), b.add_node("s", switch=True)
    for h in (h0, h1):
        b.add_link(h, s, 10.0)
        b.add_link(s, h, 3.0)
    t = b.build()
    assert brute_force_bisection(t) == 3.0


# -- closed forms against brute force -------------------------------------------------------

@pytest.mark.parametrize("topo, links_crossing", [
    (mesh((4, 4), bandwidth=1.0), 4),
    (torus((4, 4), bandwidth=1.0), 8),
    (ring(8, bandwidth=1.0), 2),
    (ring(7, bandwidth=1.0), 2),
    (ring(8, bandwidth=1.0, bidirectional=False), 1),
    (ring(2, bandwidth=1.0), 1),
    (mesh((5, 3), bandwidth=1.0), 4),        # odd: staircase, n+1
    (mesh((5, 2), bandwidth=1.0), 3),        # staircase beats the straight cut (5)
    (mesh((3, 2, 2), bandwidth=1.0), 6),
    (mesh((4, 2, 2), bandwidth=1.0, links=2), 8),
    (torus((3, 3), bandwidth=1.0), 8),
    (torus((7, 2), bandwidth=1.0), 5),
    (torus((4, 2, 2), bandwidth=1.0), 8),
    (full_mesh(6, bandwidth=1.0), 9),
    (full_mesh(7, bandwidth=1.0), 12),
    (nvswitch(6, switches=2, bandwidth=2.0), 6),
    (nvswitch(5, switches=3, links_per_switch=(1, 2, 1), bandwidth=4.0), 8),
    (leaf_spine(4, 2, 2, bandwidth=1.0, oversubscription=2.0), 2),
    (leaf_spine(3, 2, 3, bandwidth=1.0), 3),
    (leaf_spine(4, 1, 2, bandwidth=1.0), 2),
])
def test_closed_form_matches_brute_force(topo, links_crossing):
    value, method = bisection_bandwidth(topo)
    assert "closed form" in method
    assert value == pytest.approx(links_crossing)
    assert brute_force_bisection(topo) == pytest.approx(value)


@pytest.mark.slow
def test_fat_tree_full_bisection_matches_brute_force():
    t = fat_tree(4, bandwidth=2.0, host_bandwidth=1.0)
    value, method = bisection_bandwidth(t)
    assert value == 16 / 2 * 1.0 and method.startswith("exact closed form: fat tree")
    assert brute_force_bisection(t) == pytest.approx(value)


def test_closed_forms_at_scale():
    # Galaxy: 8x4 mesh, 4 planes of 12.5 GB/s: the cut across the 8-long dimension
    # crosses 4 neighbour pairs x 4 planes.
    galaxy = summarize(mesh((8, 4), bandwidth=12.5e9, links=4))
    assert galaxy["bisection_bandwidth_Bps"] == 4 * 4 * 12.5e9
    # TPU v4 cube 4x4x4 torus: 2 x 16 links; fat tree k=8: 64 hosts x host bandwidth
    assert bisection_bandwidth(torus((4, 4, 4), bandwidth=4.5e10))[0] == 32 * 4.5e10
    assert bisection_bandwidth(fat_tree(8, bandwidth=5e10))[0] == 64 * 5e10
    assert bisection_bandwidth(full_mesh(8, bandwidth=1e9))[0] == 16 * 1e9
    dgx = nvswitch(8, switches=4, bandwidth=450e9, links_per_switch=(5, 4, 4, 5))
    assert bisection_bandwidth(dgx)[0] == 4 * 450e9
    ls = leaf_spine(16, 8, 4, bandwidth=50e9, oversubscription=2)
    assert bisection_bandwidth(ls)[0] == 4 * 16 * 50e9 / 2


def test_odd_multi_dimensional_grid_is_reported_as_upper_bound():
    value, method = bisection_bandwidth(mesh((3, 3, 3), bandwidth=1.0))
    assert method.startswith("closed form (upper bound)")
    assert value == 9 + 4     # a 3x3 layer crossing plus the 3x3 layer's own bisection


def test_custom_topologies_fall_back_to_enumeration_or_heuristic():
    small = as_custom(mesh((4, 4), bandwidth=1.0))
    assert bisection_bandwidth(small) == (4.0, "exact (enumerated 6435 balanced splits)")
    big = as_custom(mesh((6, 6), bandwidth=1.0))
    value, method = bisection_bandwidth(big)
    assert method == "heuristic (upper bound on the min bisection)"
    assert 6.0 <= value <= 12.0           # never below the true minimum (6)
    assert bisection_bandwidth(big) == (value, method)      # seeded: reproducible


def test_non_uniform_links_disable_the_closed_form():
    t = mesh((4, 4), bandwidth=1.0)
    bw = t.bandwidth.copy()
    bw[(t.dim == 0)] = 5.0                 # the cut across dimension 0 becomes expensive
    value, method = bisection_bandwidth(t.with_links(bandwidth=bw))
    assert method.startswith("exact (enumerated")
    assert value == 4.0                    # now cut across dimension 1 instead: 4 links of 1


# -- diameter, counts, injection ------------------------------------------------------------

@pytest.mark.parametrize("topo, hops", [
    (mesh((8, 4)), 10), (torus((8, 4)), 6), (torus((4, 4, 4)), 6), (torus((2, 5)), 3),
    (ring(8), 4), (ring(7), 3), (ring(6, bidirectional=False), 5), (fat_tree(4), 6),
    (leaf_spine(4, 3, 2), 4), (leaf_spine(4, 1, 2), 2), (nvswitch(8, switches=2), 2),
    (full_mesh(5), 1),
])
def test_diameter_closed_forms_match_bfs(topo, hops):
    assert diameter(topo) == hops
    assert diameter(as_custom(topo)) == hops


def test_diameter_none_when_unreachable():
    b = TopologyBuilder("oneway")
    b.add_link(b.add_node("a"), b.add_node("c"), 1.0)
    assert diameter(b.build()) is None


def test_summary_counts_and_injection():
    s = summarize(mesh((4, 4), bandwidth=10.0, links=2))
    assert (s["endpoints"], s["switches"], s["links"], s["cables"], s["one_way_links"]) == \
        (16, 0, 96, 48, 0)
    assert s["injection_bandwidth_Bps"] == 4 * 2 * 10.0          # interior node
    assert s["injection_bandwidth_min_Bps"] == 2 * 2 * 10.0      # corner node
    assert (s["min_link_bandwidth_Bps"], s["max_link_bandwidth_Bps"]) == (10.0, 10.0)
    uni = summarize(ring(5, bidirectional=False))
    assert (uni["cables"], uni["one_way_links"], uni["diameter"]) == (0, 5, 4)


def test_summary_of_fat_tree():
    s = summarize(fat_tree(4, bandwidth=100e9, host_bandwidth=50e9))
    assert s == {
        "name": "fat_tree-k4", "family": "fat_tree", "endpoints": 16, "switches": 20,
        "links": 96, "cables": 48, "one_way_links": 0, "diameter": 6,
        "min_link_bandwidth_Bps": 50e9, "max_link_bandwidth_Bps": 100e9,
        "injection_bandwidth_Bps": 50e9, "injection_bandwidth_min_Bps": 50e9,
        "bisection_bandwidth_Bps": 8 * 50e9,
        "bisection_method": "exact closed form: fat tree, hosts/2 x min(host, fabric) "
                            "link bandwidth",
    }
    assert all(isinstance(v, (str, int, float)) for v in s.values())


def test_summary_is_fast_on_a_large_torus():
    import time

    t = torus((16, 16, 16), links=2)
    start = time.perf_counter()
    s = summarize(t)
    assert s["diameter"] == 24 and s["bisection_bandwidth_Bps"] == 2 * 256 * 2 * 50e9
    assert time.perf_counter() - start < 2.0
    assert math.isclose(s["injection_bandwidth_Bps"], 6 * 2 * 50e9)
