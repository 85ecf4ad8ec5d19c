"""Placement maps: chips take their group's colour, unplaced endpoints stay white."""

from __future__ import annotations

import pytest

from netsim.errors import InputError
from netsim.report.placement_map import draw_placement_map, rank_groups
from netsim.topology import fat_tree, torus


def test_group_forms_agree():
    assert rank_groups([0, 0, 1, 1], 4) == [0, 0, 1, 1]
    assert rank_groups({"a": [0, 2], "b": [1, 3]}, 4) == ["a", "b", "a", "b"]
    assert rank_groups([[0, 1], [2]], 4) == [0, 0, 1, None]
    with pytest.raises(InputError, match="rank 1 is in groups"):
        rank_groups({"a": [0, 1], "b": [1]}, 2)
    with pytest.raises(InputError, match="3 ids for 4 ranks"):
        rank_groups([0, 1, 2], 4)


def test_chips_are_coloured_by_group(tmp_path):
    topo = torus((4, 4))
    placement = [0, 1, 4, 5, 2, 3, 6, 7]             # two 2x2 blocks
    drawn = draw_placement_map(topo, placement, [r // 4 for r in range(8)],
                               tmp_path / "p.png")
    assert set(drawn) == {topo.node_names[n] for n in placement}
    assert drawn["0_0"][0] == 0 and drawn["0_2"][0] == 1
    assert drawn["0_0"][1] == drawn["1_1"][1]         # same group, same colour
    assert drawn["0_0"][1] != drawn["0_2"][1]
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_names_and_errors(tmp_path):
    topo = fat_tree(4)
    drawn = draw_placement_map(topo, ["h0", "h5"], {"x": [0, 1]}, tmp_path / "p.svg")
    assert drawn["h5"][0] == "x"
    with pytest.raises(InputError, match="same node"):
        draw_placement_map(topo, [0, 0], [0, 0], tmp_path / "q.png")


def test_every_rank_is_labelled_on_a_torus_with_wrap_copies():
    """The caption promises group id, then rank: on a torus (whose wrap-around copies
    shrink the drawing) every chip says both, as long as a legible font fits."""
    from netsim.topology import parse_topology

    topo = parse_topology("galaxy-bh")
    placement = list(range(32))
    fig = draw_placement_map(topo, placement, [r // 8 for r in range(32)])
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert all(f"{r // 8}\nr{r}" in texts for r in range(32))
    assert any("group id, then rank" in t.get_text() for t in fig.texts)
