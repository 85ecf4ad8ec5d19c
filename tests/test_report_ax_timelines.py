"""Placement maps, link timelines and Gantt charts compose in a notebook: ``ax=`` draws on
the caller's axes and the Figure comes back; with a path alone the old return value does."""

from __future__ import annotations

import numpy as np
import pytest

from netsim.engine import simulate
from netsim.report.figure import new_figure
from netsim.report.placement_map import draw_placement_map
from netsim.report.timeline import draw_gantt, draw_link_timeline, gantt_bars, link_timeline
from netsim.schedule.traffic import all_to_all
from netsim.topology import mesh, torus


@pytest.fixture(scope="module")
def alltoall():
    topo = mesh((2, 2), bandwidth=1e9, latency=1e-6)
    sends = all_to_all(4, 1e6)
    return topo, sends, simulate(topo, sends, record_timeline=True)


def test_placement_map_on_a_subplot(tmp_path):
    from matplotlib.colors import to_rgba

    topo = torus((4, 4))
    placement, groups = [0, 1, 4, 5], [0, 0, 1, 1]
    fig = new_figure(10, 4)
    left, right = fig.subplots(1, 2)
    assert draw_placement_map(topo, placement, groups, ax=left, title="L") is fig
    assert draw_placement_map(topo, placement, groups, tmp_path / "m.png", ax=right) is fig
    assert (tmp_path / "m.png").stat().st_size > 0
    assert left.get_title() == "L"
    # the faces drawn on the subplot are the colours the file-path call reports
    drawn = draw_placement_map(topo, placement, groups, tmp_path / "n.png")
    faces = {to_rgba(p.get_facecolor()) for p in left.patches}
    assert {colour for _, colour in drawn.values()} <= faces
    assert len(fig.axes) == 2                          # the legend stays inside the axes
    assert left.get_legend() is not None


def test_link_timeline_bands_hold_the_utilisation(alltoall, tmp_path):
    topo, _, result = alltoall
    fig = new_figure(8, 3)
    ax = fig.add_subplot()
    assert draw_link_timeline(result, topo, tmp_path / "t.png", top=3, ax=ax) is fig
    assert (tmp_path / "t.png").stat().st_size > 0
    assert len(fig.axes) == 1 and len(ax.patches) == 3
    util = result.link_utilization
    busiest = sorted(range(topo.num_links), key=lambda i: (-util[i], i))[:3]
    assert [t.get_text() for t in ax.get_yticklabels()] == \
        [topo.link_names[i] for i in busiest]
    data = link_timeline(result, busiest)
    for k, band in enumerate(ax.patches):              # band k: k + 0.95 - 0.9 x utilisation
        path = band.get_path().vertices
        lowest = path[:, 1].min()
        assert lowest == pytest.approx(k + 0.95 - 0.9 * data.values[k].max())
    # without ax or path: a new figure, one strip per link
    alone = draw_link_timeline(result, topo, top=2)
    assert len(alone.axes) == 2


def test_gantt_on_a_subplot_draws_every_bar(alltoall, tmp_path):
    topo, sends, result = alltoall
    fig = new_figure(9, 3)
    ax = fig.add_subplot()
    assert draw_gantt(result, sends, None, ax=ax, topology=topo) is fig
    bars = gantt_bars(result, sends)
    assert len(ax.collections) == len(bars)            # one broken_barh per op
    assert len(ax.get_yticks()) == 4
    returned = draw_gantt(result, sends, None, tmp_path / "g.png")
    assert [b.op for b in returned] == [b.op for b in bars]
    assert np.isclose(ax.get_xlim()[1] / 1.01, max(b.finish for b in bars) /
                      {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[ax.get_xlabel()[6:-1]])
