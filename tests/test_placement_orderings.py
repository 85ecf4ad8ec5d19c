"""Orderings of placements checkable by hand on small meshes, with their closed forms.

Ring all-reduce of S bytes on p ranks (the registry's ``ring``): 2 (p-1) steps, each rank
sending S/p per step, one send after the other (one channel per rank).
"""

import pytest

from netsim.placement import ParallelLayout, bytes_workload, place
from netsim.run.placements.evaluate import StepModel
from netsim.topology import mesh

S, B, L = 4e6, 10e9, 1e-6


def _time(strategy, dims, layout, latency=0.0, size=S):
    topo = mesh(dims, bandwidth=B, latency=latency)
    model = StepModel(topo, layout, bytes_workload(tp_bytes=size))
    return model.evaluate(place(strategy, topo, layout)).step_s


def test_tp_groups_on_rows_beat_groups_scattered_across_rows_by_two():
    """2x4 mesh, TP=4 x DP=2, no latency.

    Rows: each group is a 4-chip line; its sends use distinct links (the ring closes over
    the other direction), so T = 2 (p-1) S/p / B = 1.5 S / B = 0.6 ms.
    Interleaved: group 0 on (0,0) (0,2) (1,0) (1,2), group 1 one column to the right. In
    every step each send shares exactly one link with one send of the other group
    (e.g. (0,0)->(0,2) and (0,1)->(0,3) both cross (0,1)->(0,2)), so every send gets B/2:
    T = 2 (p-1) S/p / (B/2) = 3 S / B = 1.2 ms, twice as long.
    """
    lay = ParallelLayout(tp=4, dp=2)
    rows = _time("row_major", (2, 4), lay)
    scattered = _time("interleaved", (2, 4), lay)
    assert rows == pytest.approx(1.5 * S / B, rel=1e-12)
    assert scattered == pytest.approx(3.0 * S / B, rel=1e-12)
    assert scattered / rows == pytest.approx(2.0, rel=1e-12)
    # 2x2 tiles: 4-cycles of one-hop links, as fast as rows in bandwidth
    assert _time("tiles", (2, 4), lay) == pytest.approx(1.5 * S / B, rel=1e-12)


def test_a_ring_runs_at_the_pace_of_its_longest_hop():
    """2x4 mesh, TP=8, latency L per hop, small S: every rank's 14 sends follow each
    other, so T = 2 (p-1) (h_max L + S/(p B)) with h_max the longest ring hop.
    The default rank order (auto) lays the ring on the 2x4's snake cycle whatever the
    placement of the 8 ranks, so every hop is 1 (row-major in rank order would jump
    (0,3) -> (1,0), 4 hops: see test_embeddings.py)."""
    lay, size = ParallelLayout(tp=8), 8e3
    step = size / 8 / B
    for strategy in ("row_major", "snake", "column_major"):
        assert _time(strategy, (2, 4), lay, L, size) == pytest.approx(14 * (L + step),
                                                                      rel=1e-9)


def test_dp_rings_over_rows_share_links_with_nothing_on_an_8x4_galaxy_shape():
    """8x4 mesh, TP=8 x DP=4, only the dp all-reduce: column-major puts each DP group on
    a row of 4 (a line, distinct links): T = 2 (3/4) S / B. Row-major puts the DP groups
    down the columns two rows apart: two groups cross every vertical link in the same
    direction, so T doubles."""
    topo, lay = mesh((8, 4), bandwidth=B), ParallelLayout(tp=8, dp=4)
    model = StepModel(topo, lay, bytes_workload(dp_bytes=S))
    cols = model.evaluate(place("column_major", topo, lay)).step_s
    rows = model.evaluate(place("row_major", topo, lay)).step_s
    assert cols == pytest.approx(1.5 * S / B, rel=1e-12)
    assert rows == pytest.approx(3.0 * S / B, rel=1e-12)
