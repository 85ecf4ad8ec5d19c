"""The chip level: the Tensix-like grid, its two NoCs, operators and their placements."""

import numpy as np
import pytest

from netsim.engine import route_schedule, simulate
from netsim.errors import InputError
from netsim.placement import (NocRouter, Operator, chain, place_operators, tensix_grid,
                              transfer_schedule)
from netsim.run.placements.noc import compare_chip_placements
from netsim.placement.noc import _reshard
from netsim.schedule import sends_from_arrays

C, HOP = 32e9, 9e-9        # Wormhole: 32 B/cycle at 1 GHz, 9 cycles per hop


def _paths(topo, policy, pairs):
    sched = sends_from_arrays(topo.num_endpoints, [s for s, _ in pairs],
                              [d for _, d in pairs], 1.0)
    routes = route_schedule(topo, sched, np.arange(topo.num_endpoints), NocRouter(policy))
    return [[topo.link_names[l] for l in routes.path(k)] for k in range(routes.num_subflows)]


def test_grid_has_two_opposite_unidirectional_tori():
    t = tensix_grid()
    assert (t.num_endpoints, t.num_links) == (80, 320)
    assert set(t.bandwidth) == {C} and set(t.latency) == {HOP}
    assert (t.sign == 1).sum() == (t.sign == -1).sum() == 160
    assert t.wrap.sum() == 2 * (10 + 8)       # per NoC: one closing link per row and column


def test_noc0_goes_right_then_down_and_noc1_up_then_left():
    t = tensix_grid()
    n = {name: t.node(name) for name in ("0_0", "0_3", "2_1", "1_1")}
    assert _paths(t, "noc0", [(n["0_0"], n["2_1"])]) == [
        ["0_0->0_1@noc0", "0_1->1_1@noc0", "1_1->2_1@noc0"]]
    assert _paths(t, "noc1", [(n["1_1"], n["0_0"])]) == [["1_1->0_1@noc1", "0_1->0_0@noc1"]]
    # 0_0 -> 0_3: 3 hops right on NoC0, 5 hops left (around the torus) on NoC1
    assert [len(p) for p in _paths(t, "noc1", [(n["0_0"], n["0_3"])])] == [5]
    assert [len(p) for p in _paths(t, "shortest", [(n["0_0"], n["0_3"]),
                                                   (n["0_3"], n["0_0"])])] == [3, 3]
    assert [len(p) for p in _paths(t, "split", [(n["0_0"], n["0_3"])])] == [3, 5]


def test_one_transfer_closed_forms():
    t, T = tensix_grid(), 1e6
    sched = sends_from_arrays(80, [0], [1], T)          # 0_0 -> 0_1
    one = simulate(t, sched, np.arange(80), router=NocRouter("noc0")).makespan
    assert one == pytest.approx(HOP + T / C, rel=1e-12)
    # split: half on NoC0 (1 hop), half on NoC1 (7 hops left around the row)
    split = simulate(t, sched, np.arange(80), router=NocRouter("split")).makespan
    assert split == pytest.approx(7 * HOP + T / 2 / C, rel=1e-12)


def test_reshard_sends_each_consumer_its_bytes():
    i, j, b = _reshard(2, 3, 6.0)
    assert list(zip(i.tolist(), j.tolist(), b.tolist())) == [(0, 0, 2.0), (0, 1, 1.0),
                                                              (1, 1, 1.0), (1, 2, 2.0)]
    ops = chain([("a", 2, 2, 8e6), ("b", 1, 4, 4e6), ("c", 2, 2, 0.0)])
    sched = transfer_schedule(ops)
    assert sched.total_bytes == pytest.approx(12e6)
    assert set(sched.tags) == {"a->b", "b->c"}


def test_shelf_placements():
    t = tensix_grid(4, 8)
    ops = chain([("a", 2, 4, 1e6), ("b", 2, 4, 1e6), ("c", 2, 4, 1e6), ("d", 2, 4, 0)])
    adjacent = place_operators("adjacent", t, ops).reshape(4, 8)
    assert adjacent[0].tolist() == [0, 1, 2, 3, 8, 9, 10, 11]      # a at rows 0-1, cols 0-3
    assert adjacent[2].tolist() == [16, 17, 18, 19, 24, 25, 26, 27]   # c starts shelf 2
    snake = place_operators("snake", t, ops).reshape(4, 8)
    assert snake[2].tolist() == [20, 21, 22, 23, 28, 29, 30, 31]      # c folds to the right
    random = place_operators("random", t, ops, seed=2)
    assert len(set(random.tolist())) == 32
    with pytest.raises(InputError, match="do not fit on the 4x8 core grid"):
        place_operators("adjacent", t, chain([("a", 2, 4, 1), ("b", 3, 4, 0)]))
    with pytest.raises(InputError, match="operators need 40 cores, the grid has 32"):
        place_operators("adjacent", t, [Operator("a", 5, 8)])


def test_side_by_side_operators_share_a_link_and_the_search_finds_better():
    # Two 1x2 operators side by side on a row of a 4x4 grid: core 0_0 sends its half to
    # 0_2 and 0_1 sends its half to 0_3, both over link 0_1 -> 0_2 (NoC0, 2 hops each):
    # time = 2 x 9 ns + T / C. One below the other, each half goes one hop down on its own
    # link: 9 ns + (T/2) / C, about half. The search, seeded with adjacent, finds it.
    t, T = tensix_grid(4, 4), 2e6
    ops = chain([("a", 1, 2, T), ("b", 1, 2, 0.0)])
    scores = {s.strategy: s for s in compare_chip_placements(
        t, ops, ("adjacent", "random", "search"), budget=20, seed=0)}
    assert scores["adjacent"].time_s == pytest.approx(2 * HOP + T / C, rel=1e-12)
    assert scores["adjacent"].max_link_bytes == pytest.approx(T)
    assert scores["search"].time_s <= min(scores["adjacent"].time_s, scores["random"].time_s)
    assert scores["search"].time_s == pytest.approx(HOP + T / 2 / C, rel=1e-12)
