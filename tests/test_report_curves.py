"""Curves over message size: points from records or arrays, size labels, measured overlays."""

from __future__ import annotations

import numpy as np
import pytest

from netsim.errors import InputError
from netsim.report.curves import draw_bars, draw_curves, series_points, size_label

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _records(peak):
    sizes = 2.0 ** np.arange(10, 21)
    return [{"size_bytes": s, "busbw_GBps": peak * s / (s + 2 ** 15),
             "time_s": 1e-6 + s / (peak * 1e9)} for s in sizes[::-1]]


def test_size_labels():
    assert size_label(1024) == "1KiB"
    assert size_label(3 * 2 ** 20) == "3MiB"
    assert size_label(2 ** 30) == "1GiB"
    assert size_label(100) == "100B"


def test_series_points_sorted_from_records_or_pairs():
    sizes, values = series_points(_records(10), "busbw_GBps")
    assert np.all(np.diff(sizes) > 0) and sizes[0] == 1024
    assert values[-1] == pytest.approx(10 * 2 ** 20 / (2 ** 20 + 2 ** 15))
    s2, v2 = series_points(([4.0, 1.0], [40.0, 10.0]), "time_s")
    assert list(s2) == [1.0, 4.0] and list(v2) == [10.0, 40.0]
    with pytest.raises(InputError, match="ring: point 0 needs a size"):
        series_points([{"busbw_GBps": 1.0}], "busbw_GBps", "ring")


def test_draw_curves_with_measured_points(tmp_path):
    measured = {"ring": [{"bytes": 2 ** 12, "busbw_GBps": 1.0}]}
    drawn = draw_curves({"ring": _records(10), "tree": _records(20)}, tmp_path / "c.png",
                        measured=measured)
    assert set(drawn) == {"ring", "tree", "ring (measured)"}
    assert list(drawn["ring (measured)"][0]) == [4096.0]
    assert (tmp_path / "c.png").read_bytes()[:8] == PNG_MAGIC
    draw_curves({"ring": _records(10)}, tmp_path / "t.svg", y="time_s")
    assert b"<svg" in (tmp_path / "t.svg").read_bytes()[:1000]


def test_draw_curves_errors(tmp_path):
    with pytest.raises(InputError, match="unknown y axis 'busbw'"):
        draw_curves({"ring": _records(1)}, tmp_path / "c.png", y="busbw")
    with pytest.raises(InputError, match="no series"):
        draw_curves({}, tmp_path / "c.png")


def test_draw_bars_skips_missing_values(tmp_path):
    drawn = draw_bars({"a": 10.0, "b": None, "c": 5.0}, tmp_path / "b.png")
    assert drawn == {"a": 10.0, "c": 5.0}
    assert (tmp_path / "b.png").read_bytes()[:8] == PNG_MAGIC
    with pytest.raises(InputError, match="no values"):
        draw_bars({"a": None}, tmp_path / "n.png")


def test_a_dataframe_of_records_draws_one_line_per_topology_and_algorithm(tmp_path):
    pd = pytest.importorskip("pandas")
    from netsim.run import run_sweep

    rows = [r.record() for spec in ("mesh:4x4", "torus:4x4")
            for r in run_sweep("allreduce", spec, "ring", [1024, 4096])]
    fig = draw_curves(pd.DataFrame(rows))
    labels = [line.get_label() for line in fig.axes[0].lines]
    assert labels == ["mesh-4x4 ring", "torus-4x4 ring"]
    drawn = draw_curves({"ring": pd.DataFrame(rows[:2])}, tmp_path / "c.png")
    assert list(drawn) == ["ring"] and list(drawn["ring"][0]) == [1024.0, 4096.0]


def test_measured_points_get_an_error_panel_and_their_source(tmp_path):
    sim = _records(400.0)
    measured = {"h100": ([r["size_bytes"] for r in sim[::2]],
                         [r["busbw_GBps"] / 1.1 for r in sim[::2]])}
    fig = draw_curves({"h100": sim}, y="busbw_GBps", measured=measured,
                      sources={"h100": "nccl.log"})
    main, panel = fig.axes
    errors = panel.lines[-1].get_ydata()
    np.testing.assert_allclose(errors, 10.0, rtol=1e-9)       # 1.1 - 1, in percent
    labels = [t.get_text() for t in main.get_legend().get_texts()]
    assert labels == ["h100", "h100 (measured: nccl.log)"]
    # no measured size in common: no panel
    alone = draw_curves({"h100": sim}, measured={"other": measured["h100"]})
    assert len(alone.axes) == 1


def test_a_log_axis_on_request():
    fig = draw_curves({"ring": _records(100.0)}, log=True)
    assert fig.axes[0].get_yscale() == "log"
    assert draw_curves({"ring": _records(100.0)}).axes[0].get_yscale() == "linear"


def test_a_long_measured_source_wraps_instead_of_widening_the_figure():
    """The plot keeps its width whatever the source's name: a 120-character source adds
    legend lines, and every legend line stays within the wrap width (words kept whole)."""
    from netsim.report.curves import LEGEND_CHARS

    pts = [{"size_bytes": 1 << k, "busbw_GBps": float(k)} for k in range(10, 20)]
    widths = []
    for source in ("a.csv", "x" * 30 + "_" + "y" * 30 + " " + "z" * 40 + ".csv"):
        fig = draw_curves({"ring": pts}, measured={"ring": pts}, sources={"ring": source})
        widths.append(fig.get_figwidth())
        legend = fig.axes[0].get_legend()
        lines = [line for t in legend.get_texts() for line in t.get_text().split("\n")]
        assert all(len(line) <= LEGEND_CHARS or " " not in line for line in lines)
    assert widths[1] <= widths[0] + 0.056 * 62          # the longest unbreakable word
    assert widths[1] < 5.5 + 0.7 + 0.056 * 90           # not the 130-character line
