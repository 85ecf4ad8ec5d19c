"""Placement strategies: maps checkable by hand, walks, tiles, switched machines, files."""

import json

import numpy as np
import pytest

from netsim.errors import InputError
from netsim.placement import (FIXED_STRATEGIES, ParallelLayout, applicable_strategies,
                              grid_view, load_explicit, place, why_not)
from netsim.placement.strategies import cycle_walk, hilbert_walk, snake_walk, tile_shape
from netsim.topology import mesh, nvswitch, parse_topology, torus


def _steps(walk, dims):
    coords = np.stack(np.unravel_index(walk, dims), axis=1)
    return np.abs(np.diff(coords, axis=0)).sum(axis=1), np.abs(coords[-1] - coords[0]).sum()


def test_maps_on_a_2x4_mesh_by_hand():
    topo, lay = mesh((2, 4)), ParallelLayout(tp=4, dp=2)
    assert place("row_major", topo, lay).tolist() == [0, 1, 2, 3, 4, 5, 6, 7]
    assert place("column_major", topo, lay).tolist() == [0, 4, 1, 5, 2, 6, 3, 7]
    assert place("snake", topo, lay).tolist() == [0, 1, 2, 3, 7, 6, 5, 4]
    # tp groups strided by the number of groups: group 0 on nodes 0, 2, 4, 6
    assert place("interleaved", topo, lay).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    # 2x2 tiles, each visited along its 4-cycle, the second tile to the right
    assert place("tiles", topo, lay).tolist() == [0, 1, 5, 4, 2, 3, 7, 6]
    assert place("tiles", topo, lay, shape="1x4").tolist() == [0, 1, 2, 3, 4, 5, 6, 7]


@pytest.mark.parametrize("name", FIXED_STRATEGIES)
@pytest.mark.parametrize("spec, degrees", [
    ("mesh:8x4", {"tp": 8, "dp": 4}), ("torus:4x4x2", {"tp": 4, "dp": 8}),
    ("dgx-h100-cluster", {"tp": 8, "dp": 4}), ("ring:6", {"tp": 3, "dp": 2}),
    ("fattree:4", {"tp": 2, "dp": 8}),
])
def test_every_strategy_is_a_permutation_of_the_endpoints(name, spec, degrees):
    topo, lay = parse_topology(spec), ParallelLayout(**degrees)
    if why_not(name, topo, lay):
        pytest.skip(why_not(name, topo, lay))
    placement = place(name, topo, lay)
    assert sorted(placement.tolist()) == sorted(np.asarray(topo.endpoints).tolist())


def test_walks_step_to_neighbours():
    steps, _ = _steps(snake_walk((3, 4)), (3, 4))
    assert steps.max() == 1
    for dims in [(8, 4), (10, 8), (3, 5), (6, 6), (4, 8)]:
        steps, _ = _steps(hilbert_walk(dims), dims)
        assert steps.max() == 1 and len(set(hilbert_walk(dims).tolist())) == np.prod(dims)
    for dims in [(2, 4), (4, 2), (8, 4), (3, 4), (4, 3)]:
        steps, closing = _steps(cycle_walk(dims), dims)
        assert steps.max() == 1 and closing == 1            # a Hamiltonian cycle
    assert snake_walk((2, 3, 2)).tolist() == [0, 1, 3, 2, 4, 5, 11, 10, 8, 9, 7, 6]


def test_tile_shapes_and_errors():
    assert tile_shape((8, 4), 8) == (2, 4)
    assert tile_shape((4, 8), 8, fewest_rows=True) == (1, 8)
    assert tile_shape((8, 4), 3) is None
    topo, lay = mesh((8, 4)), ParallelLayout(tp=8, dp=4)
    assert why_not("tiles", topo, ParallelLayout(tp=2, dp=16), shape="3x1") == \
        "tiles: tile shape 3x1 holds 3 ranks, tp groups have 2"
    assert why_not("tiles", topo, lay, shape="8x2") == \
        "tiles: tile shape 8x2 holds 16 ranks, tp groups have 8"
    assert why_not("tiles", topo, lay, shape="4x2") is None
    assert why_not("hilbert", torus((2, 2, 2)), ParallelLayout(tp=8)).startswith("hilbert")
    with pytest.raises(InputError, match="tile shape must be sides such as 2x4"):
        place("tiles", topo, lay, shape="big")
    # tiles of 4x2: every tp group a 4x2 block whose ring steps are all one hop
    placement = place("tiles", topo, lay, shape="4x2")
    r, c = np.divmod(placement.reshape(4, 8), 4)
    assert (np.abs(np.diff(r)) + np.abs(np.diff(c))).max() == 1


def test_switched_machines_are_rows_of_servers():
    view = grid_view(parse_topology("dgx-h100-cluster"))
    assert view.kind == "switched" and view.dims == (4, 8)
    assert grid_view(nvswitch(8, switches=4)).dims == (1, 8)
    assert grid_view(parse_topology("fattree:4")).dims == (8, 2)
    # on a cluster, tiles keep each tp group of 8 inside one server
    placement = place("tiles", parse_topology("dgx-h100-cluster"), ParallelLayout(tp=8, dp=4))
    assert [sorted(set(placement[8 * g:8 * g + 8] // 8)) for g in range(4)] == \
        [[0], [1], [2], [3]]


def test_random_is_seeded():
    topo, lay = mesh((4, 4)), ParallelLayout(tp=4, dp=4)
    a, b = place("random", topo, lay, seed=3), place("random", topo, lay, seed=3)
    assert a.tolist() == b.tolist() and a.tolist() != place("random", topo, lay, seed=4).tolist()


def test_applicable_strategies_skip_what_cannot_place():
    names = applicable_strategies(torus((2, 2, 2)), ParallelLayout(tp=2, dp=4))
    assert "hilbert" not in names and "row_major" in names


def test_explicit_maps_from_json_and_csv(tmp_path):
    topo, lay = mesh((2, 2)), ParallelLayout(tp=2, dp=2)
    (tmp_path / "a.json").write_text(json.dumps(["1_1", "0_0", 1, "1_0"]))
    assert load_explicit(tmp_path / "a.json", topo, lay).tolist() == [3, 0, 1, 2]
    (tmp_path / "b.json").write_text(json.dumps({"placement": {"0": 0, "1": 1, "2": 2,
                                                               "3": 3}}))
    assert load_explicit(tmp_path / "b.json", topo, lay).tolist() == [0, 1, 2, 3]
    (tmp_path / "c.csv").write_text("rank,node\n0,0_1\n1,0_0\n2,1_1\n3,1_0\n")
    assert place("explicit", topo, lay, path=tmp_path / "c.csv").tolist() == [1, 0, 3, 2]


@pytest.mark.parametrize("content, suffix, message", [
    ('["0_0", "0_0", "1_0", "1_1"]', ".json", "rank 1: node '0_0' already holds rank 0"),
    ('["0_0", "0_1", "1_0"]', ".json", "no node for rank 3 (the layout has 4 ranks)"),
    ('["0_0", "0_1", "1_0", "9_9"]', ".json", "rank 3: '9_9' is not a node of 'mesh-2x2'"),
    ('["0_0", "0_1", "1_0", 7]', ".json", "rank 3: node 7 is not in 0..3"),
    ('{"x": 1}', ".json", "rank 'x' is not an integer"),
    ("[1, 2", ".json", "line 1: invalid JSON"),
    ("rank,chip\n0,0_0\n", ".csv", "line 1: expected a header with columns rank,node"),
    ("rank,node\n0,0_0\n0,0_1\n", ".csv", "line 3: rank 0 is placed twice"),
    ("rank,node\nzero,0_0\n", ".csv", "line 2: rank 'zero' is not an integer"),
])
def test_explicit_map_errors_are_one_line(tmp_path, content, suffix, message):
    path = tmp_path / f"map{suffix}"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        load_explicit(path, mesh((2, 2)), ParallelLayout(tp=2, dp=2))
    assert message in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_layout_must_fit_the_machine():
    with pytest.raises(InputError, match="= 16 ranks do not match the 32 chips of 'mesh-8x4'"):
        place("row_major", mesh((8, 4)), ParallelLayout(tp=8, dp=2))
