"""Parallel layouts: rank <-> coordinates, groups of each dimension, one-line errors."""

import pytest

from netsim.errors import InputError
from netsim.placement import ParallelLayout, parse_layout


def test_tp_is_fastest_and_groups_list_ranks_by_coordinate():
    lay = ParallelLayout(tp=2, cp=2, dp=2)
    # rank = tp + 2 (cp + 2 dp)
    assert lay.rank({"tp": 1, "cp": 0, "dp": 1}) == 5
    assert lay.coords(5) == {"tp": 1, "cp": 0, "ep": 0, "dp": 1, "pp": 0}
    assert lay.groups("tp") == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert lay.groups("cp") == [[0, 2], [1, 3], [4, 6], [5, 7]]
    assert lay.groups("dp") == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert lay.groups("pp") == [[r] for r in range(8)]
    assert lay.group_of("cp").tolist() == [0, 1, 0, 1, 2, 3, 2, 3]


def test_every_rank_round_trips_and_groups_partition_the_ranks():
    lay = ParallelLayout(tp=2, cp=3, ep=1, dp=2, pp=2)
    assert lay.num_ranks == 24
    for r in range(24):
        assert lay.rank(lay.coords(r)) == r
    for dim in ("tp", "cp", "ep", "dp", "pp"):
        ranks = sorted(r for g in lay.groups(dim) for r in g)
        assert ranks == list(range(24))
        assert all(len(g) == lay.degree(dim) for g in lay.groups(dim))


def test_another_rank_order_puts_dp_fastest():
    lay = ParallelLayout(tp=4, dp=2, order="dp-tp-cp-ep-pp")
    assert lay.groups("dp") == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert lay.groups("tp") == [[0, 2, 4, 6], [1, 3, 5, 7]]


def test_degree_mismatch_is_one_line_naming_degrees_and_chips():
    with pytest.raises(InputError) as err:
        ParallelLayout(tp=8, dp=2).check_fits(32, "'galaxy-wh'")
    assert str(err.value) == ("parallel degrees tp=8 x dp=2 = 16 ranks do not match the 32 "
                              "chips of 'galaxy-wh'")


@pytest.mark.parametrize("text, message", [
    ("tq=8", "unknown parallel dimension 'tq': did you mean 'tp'?"),
    ("tp=x", "degree 'x' of tp is not an integer"),
    ("tp8", "expected DIM=DEGREE items"),
])
def test_layout_strings_fail_in_one_line(text, message):
    with pytest.raises(InputError, match=message):
        parse_layout(text)


def test_bad_degrees_and_orders():
    with pytest.raises(InputError, match="degree dp must be a positive integer, got 0"):
        ParallelLayout(dp=0)
    with pytest.raises(InputError, match="rank order must name each of"):
        ParallelLayout(order="tp-dp")
    assert parse_layout("tp=8 x dp=4").describe() == "tp=8 x dp=4"
    assert parse_layout({"tp": 2}, pp=2).num_ranks == 4
