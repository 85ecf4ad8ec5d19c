"""Drawing functions compose in a notebook: ``ax=`` draws on the caller's axes and the
matplotlib Figure comes back."""

from __future__ import annotations

from netsim.report import draw_bars, draw_curves
from netsim.report.figure import new_figure


def test_two_drawings_share_one_figure(tmp_path):
    fig = new_figure(10, 4)
    left, right = fig.subplots(1, 2)
    records = [{"size_bytes": 2 ** k, "busbw_GBps": float(k)} for k in range(10, 14)]
    assert draw_curves({"ring": records}, ax=left) is fig
    assert draw_bars({"a": 1.0, "b": 2.0}, ax=right, path=tmp_path / "b.png") is fig
    assert len(left.get_lines()) == 1 and len(right.patches) == 2
    assert (tmp_path / "b.png").stat().st_size > 0
    assert list(left.get_lines()[0].get_ydata()) == [10.0, 11.0, 12.0, 13.0]


def test_heatmaps_of_two_runs_side_by_side():
    from netsim.engine import simulate
    from netsim.report import draw_heatmap
    from netsim.schedule import make_pattern
    from netsim.topology import parse_topology

    topo = parse_topology("mesh:2x2,bw=1GB/s")
    runs = [simulate(topo, make_pattern(p, 4, 1e6)) for p in ("alltoall", "shift")]
    fig = new_figure(10, 4)
    axes = fig.subplots(1, 2)
    for ax, run in zip(axes, runs):
        assert draw_heatmap(topo, run, ax=ax, title="x") is fig
    assert [ax.get_title() for ax in axes] == ["x", "x"]
    assert len(fig.axes) == 4                        # two drawings and their colour bars
    assert all(len(ax.patches) >= 8 for ax in axes)        # at least the 8 links
