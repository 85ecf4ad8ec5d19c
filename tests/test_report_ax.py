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
