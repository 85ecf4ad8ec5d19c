"""Deterministic layouts and link shapes: grids on their coordinates, trees in tiers, each
direction of a cable its own line, planes further out, wrap-around links to ghost nodes."""

from __future__ import annotations

import numpy as np
import pytest

from netsim.report.layout import layout, link_geometry, link_paths, node_positions, wrap_links
from netsim.topology import (TopologyBuilder, fat_tree, leaf_spine, mesh, nvswitch,
                             parse_topology, ring, torus)


def test_grid_columns_are_x_and_rows_go_down():
    topo = mesh((3, 4))
    pos = node_positions(topo)
    assert tuple(pos[topo.node("0_0")]) == (0.0, 0.0)
    assert tuple(pos[topo.node("0_3")]) == (3.0, 0.0)     # column 3 -> x = 3
    assert tuple(pos[topo.node("2_0")]) == (0.0, -2.0)    # row 2 -> two rows down


def test_fat_tree_tiers_are_rows_with_hosts_at_the_bottom():
    topo = fat_tree(4)
    pos = node_positions(topo)
    tiers = np.array([a["tier"] for a in topo.node_attrs])
    for tier in range(4):
        assert np.ptp(pos[tiers == tier, 1]) == 0          # one row per tier
    rows = [pos[tiers == t, 1][0] for t in range(4)]
    assert rows == sorted(rows) and rows[0] < rows[1]       # hosts lowest, core highest


def test_nvswitch_gpus_in_one_row_switches_in_another():
    topo = nvswitch(8, switches=4)
    pos = node_positions(topo)
    gpus, switches = pos[~topo.is_switch], pos[topo.is_switch]
    assert np.ptp(gpus[:, 1]) == 0 and np.ptp(switches[:, 1]) == 0
    assert switches[0, 1] > gpus[0, 1]
    assert layout(leaf_spine(2, 2, 1)).kind == "layered"


def test_generic_layout_is_deterministic_and_spread_out():
    b = TopologyBuilder("odd")
    for name in "abcde":
        b.add_node(name)
    for x, y in ("ab", "bc", "cd", "de", "ea", "ac"):
        b.add_cable(x, y, 1e9)
    topo = b.build()
    first, second = node_positions(topo), node_positions(topo)
    assert layout(topo).kind == "generic"
    assert np.array_equal(first, second)
    gaps = np.linalg.norm(first[:, None] - first[None], axis=2)[np.triu_indices(5, 1)]
    assert gaps.min() > 0.3


def test_ring_is_a_circle_of_unit_neighbour_spacing():
    pos = node_positions(ring(12))
    centre_distance = np.linalg.norm(pos, axis=1)
    assert np.allclose(centre_distance, centre_distance[0])
    assert np.linalg.norm(pos[0] - pos[1]) == pytest.approx(1.0, rel=0.1)


def _midpoints(topo):
    return {topo.link_names[i]: np.mean(np.vstack(p), axis=0)
            for i, p in enumerate(link_paths(topo))}


def test_the_two_directions_of_a_cable_are_separate_lines():
    topo = mesh((2, 2))
    mid = _midpoints(topo)
    forward, backward = mid["0_0->0_1"], mid["0_1->0_0"]
    assert forward[1] < 0 < backward[1]        # right-hand side: eastbound below, westbound above
    assert forward[0] == pytest.approx(backward[0])


def test_parallel_planes_are_further_out():
    topo = mesh((1, 2), links=3)
    mid = _midpoints(topo)
    offsets = [abs(mid[n][1]) for n in ("0_0->0_1", "0_0->0_1#1", "0_0->0_1#2")]
    assert offsets[0] < offsets[1] < offsets[2]
    assert len({round(o, 9) for o in offsets}) == 3


def test_torus_wrap_links_go_to_ghost_copies_beyond_the_edge():
    topo = torus((4, 4))
    geo = link_geometry(topo)
    wrap = wrap_links(topo)
    assert wrap.sum() == 16
    for lid in np.flatnonzero(wrap):
        assert len(geo.paths[lid]) == 2                  # leave + enter stubs
    for lid in np.flatnonzero(~wrap):
        assert len(geo.paths[lid]) == 1
    ghosts = {(round(x, 6), round(y, 6)) for x, y, _ in geo.ghosts}
    assert len(ghosts) == 16                              # 4 per side
    pos = node_positions(topo)
    xs, ys = [g[0] for g in ghosts], [g[1] for g in ghosts]
    assert min(xs) < pos[:, 0].min() and max(xs) > pos[:, 0].max()
    assert min(ys) < pos[:, 1].min() and max(ys) > pos[:, 1].max()
    left_ghost_of_row_1 = [n for x, y, n in geo.ghosts if x == -1.0 and y == -1.0]
    assert [topo.node_names[n] for n in left_ghost_of_row_1] == ["1_3"]


def test_wrap_links_are_recognised_without_flags():
    topo = parse_topology("torus:4x4")
    b = TopologyBuilder("rebuilt", family="torus")
    for i, name in enumerate(topo.node_names):
        b.add_node(name, coord=topo.coords[i])
    for lid in range(topo.num_links):
        b.add_link(int(topo.link_src[lid]), int(topo.link_dst[lid]), 1e9)
    rebuilt = b.build()
    assert not rebuilt.wrap.any()
    assert np.array_equal(wrap_links(rebuilt), topo.wrap)
    assert len(link_geometry(rebuilt).ghosts) == len(link_geometry(topo).ghosts)


def test_three_dimensional_grids_are_tiled_with_captions():
    topo = torus((2, 2, 3))
    lay = layout(topo)
    assert [text for *_, text in lay.notes] == ["dim 2 = 0", "dim 2 = 1", "dim 2 = 2"]
    pos = lay.positions
    a, b = pos[topo.node("0_0_0")], pos[topo.node("0_0_1")]
    assert b[0] > a[0] + 2 and b[1] == a[1]              # next tile to the right
    paths = link_paths(topo, lay)
    lid = topo.link("0_0_0->0_0_1")
    assert len(paths[lid]) == 2                          # diagonal stubs, not a long line
    assert all(np.linalg.norm(np.diff(p, axis=0)) < 0.5 for p in paths[lid])
