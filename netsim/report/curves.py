"""Curves over message size: several algorithms or topologies on one chart, nccl-tests style.

``series`` maps a label to its points, given either as records (dicts with a size in bytes
under ``size_bytes``, ``bytes`` or ``size``, and the y value, as
:meth:`netsim.run.collective.CollectiveRun.record` makes them) or as a pair
``(sizes in bytes, values)``. The x axis is log2 with binary size labels (1KiB, 1MiB ...);
``measured`` points (same forms) are drawn as markers over the curve of the same label.

>>> draw_curves({"ring": [{"size_bytes": 1024, "busbw_GBps": 1.0},
...                       {"size_bytes": 2048, "busbw_GBps": 1.8}]},
...             "busbw.png")                                  # doctest: +SKIP

matplotlib is imported inside the drawing functions only.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InputError
from .figure import new_figure, save_figure

__all__ = ["Y_AXES", "series_points", "size_label", "draw_curves", "draw_bars"]

#: y key -> (axis label, log-scale y axis?).
Y_AXES: dict[str, tuple[str, bool]] = {
    "busbw_GBps": ("bus bandwidth (GB/s, nccl-tests busbw)", False),
    "algbw_GBps": ("algorithm bandwidth (GB/s)", False),
    "time_s": ("time", True),
    "efficiency": ("efficiency (algorithm's bound / time)", False),
    "machine_efficiency": ("efficiency (machine's bound / time)", False),
}
_SIZE_KEYS = ("size_bytes", "bytes", "size")


def size_label(nbytes: float) -> str:
    """``1024`` -> ``'1KiB'``, ``3 * 2**20`` -> ``'3MiB'``, ``100`` -> ``'100B'``."""
    for shift, unit in ((40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")):
        if nbytes >= 2 ** shift:
            return f"{nbytes / 2 ** shift:.3g}{unit}"
    return f"{nbytes:.3g}B"


def series_points(points: Any, y: str, label: str = "series") -> tuple[np.ndarray, np.ndarray]:
    """(sizes in bytes, values) of one series, sorted by size; records missing the size or
    ``y`` are an InputError naming the label."""
    if isinstance(points, tuple) and len(points) == 2 and not isinstance(points[0], Mapping):
        sizes, values = (np.asarray(p, dtype=float).ravel() for p in points)
    else:
        sizes, values = _from_records(points, y, label)
    if sizes.size != values.size:
        raise InputError(f"{label}: {sizes.size} sizes but {values.size} values")
    order = np.argsort(sizes, kind="stable")
    return sizes[order], values[order]


def _from_records(records: Sequence[Mapping], y: str, label: str):
    sizes, values = [], []
    for k, record in enumerate(records):
        size = next((record[key] for key in _SIZE_KEYS if key in record), None)
        if size is None or y not in record:
            raise InputError(f"{label}: point {k} needs a size ({', '.join(_SIZE_KEYS)}) and "
                             f"{y!r}, got keys {sorted(record)}")
        sizes.append(float(size))
        values.append(math.nan if record[y] is None else float(record[y]))
    return np.asarray(sizes), np.asarray(values)


def _records(points) -> list:
    """A DataFrame's rows as records; anything else as it is."""
    return points.to_dict("records") if hasattr(points, "to_dict") and \
        hasattr(points, "columns") else points


def _as_series(series) -> dict:
    """``{label: records}`` from a mapping (of record lists or DataFrames) or from one
    DataFrame of records (``Result.to_pandas``-style, ``rows_to_pandas``, a sweep's
    Parquet read back): one label per ``label`` or ``algorithm`` value, prefixed by the
    topology where there are several."""
    if not (hasattr(series, "columns") and hasattr(series, "groupby")):
        return {label: _records(points) for label, points in series.items()}
    rows = series.to_dict("records")
    key = next((k for k in ("label", "algorithm") if k in series.columns), None)
    several = "topology" in series.columns and series["topology"].nunique() > 1
    out: dict[str, list] = {}
    for row in rows:
        label = str(row[key]) if key else "series"
        if several:
            label = f"{row['topology']} {label}"
        out.setdefault(label, []).append(row)
    return out


def draw_curves(series: Mapping[str, Any], path=None, y: str = "busbw_GBps",
                measured: Mapping[str, Any] | None = None, *, title: str | None = None,
                overwrite: bool = True, ax=None, log: bool | None = None,
                sources: Mapping[str, str] | None = None):
    """One line per label of ``series`` (``y`` against message size, log2 x axis with
    binary size labels), ``measured`` points as open markers in the same colour; ``y`` is
    one of :data:`Y_AXES` (``time_s`` gets a log y axis in s/ms/us; ``log=True`` gives any
    y a log axis, so that small sizes are not flattened against zero). Where a measured
    label is also a simulated one and sizes coincide, a panel below the curves shows the
    error per size, simulated / measured - 1 in percent, with the +-15% band. Saves to
    ``path`` (.png/.svg/.pdf) and returns the points drawn per label (sizes, values in SI
    units). ``sources`` names where each measured series comes from (its legend says so).

    ``series`` may also be one DataFrame of records (one line per ``algorithm``, per
    topology too where there are several) or map labels to DataFrames.

    In a notebook: with ``ax=`` (matplotlib axes) it draws there, or with neither ``ax``
    nor ``path`` on a new figure, and returns the matplotlib Figure (saved too if ``path``).

    >>> fig = draw_curves({"ring": [{"size_bytes": 1024, "busbw_GBps": 1.0},
    ...                             {"size_bytes": 2048, "busbw_GBps": 2.0}]})
    >>> type(fig).__name__, fig.axes[0].get_xlabel()
    ('Figure', 'message size')
    """
    if y not in Y_AXES:
        from ..errors import unknown_name

        raise unknown_name("y axis", y, Y_AXES)
    series, measured = _as_series(series), _as_series(measured) if measured is not None \
        else None
    if not series:
        raise InputError("draw_curves: no series to draw")
    drawn = {label: series_points(points, y, label) for label, points in series.items()}
    shown = {f"{label} (measured)": series_points(points, y, f"{label} (measured)")
             for label, points in (measured or {}).items()}
    factor, unit = _y_unit(y, [v for _, v in [*drawn.values(), *shown.values()]])
    labels = list(drawn) + [m for m in (measured or {}) if m not in drawn]
    # Legend entries wrap at LEGEND_CHARS, so a long label (a measured file's name) adds
    # lines, not width: the plot keeps its size whatever the labels.
    entries = {label: _wrapped(label, LEGEND_CHARS) for label in drawn}
    for label in measured or {}:
        source = (sources or {}).get(label)
        entries[f"{label} (measured)"] = _wrapped(
            f"{label} (measured{': ' + source if source else ''})", LEGEND_CHARS)
    legend_w = 0.7 + 0.056 * max(len(line) for text in entries.values()
                                 for line in text.split("\n"))           # inches
    fig_w = 5.5 + legend_w
    errors = _errors(drawn, dict(zip(measured or {}, shown.values()))) if ax is None else {}
    if errors:
        fig, ax, notebook = _axes(ax, path, (fig_w, 5.8),
                                  (0.85 / fig_w, 0.36, 4.5 / fig_w, 0.56))
        panel = fig.add_axes((0.85 / fig_w, 0.09, 4.5 / fig_w, 0.2), sharex=ax)
    else:
        fig, ax, notebook = _axes(ax, path, (fig_w, 4.6),
                                  (0.85 / fig_w, 0.13, 4.5 / fig_w, 0.77))
    colors = _colors(labels)
    for label, (sizes, values) in drawn.items():
        ax.plot(sizes, values / factor, marker="o", markersize=3, linewidth=1.6,
                color=colors[label], label=entries[label])
    for label, (sizes, values) in zip((measured or {}), shown.values()):
        ax.plot(sizes, values / factor, linestyle="none", marker="D", markersize=5,
                markerfacecolor="none", markeredgewidth=1.3, color=colors[label],
                label=entries[f"{label} (measured)"])
    _size_axis(ax, np.concatenate([s for s, _ in [*drawn.values(), *shown.values()]]))
    text, log_axis = Y_AXES[y]
    ax.set_ylabel(f"{text} ({unit})" if unit else text)
    if log if log is not None else log_axis:
        from matplotlib.ticker import FuncFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    else:
        ax.set_ylim(bottom=0)
    ax.grid(color="#e3e3e3", linewidth=0.6, which="major")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    default = f"{text.split(' (')[0]} against message size"
    ax.set_title(_wrapped(title or default), fontsize=10)
    if errors:
        _error_panel(panel, ax, errors, colors, y.split("_")[0])
    if path is not None:
        save_figure(fig, path, overwrite)
    return fig if notebook else {**drawn, **shown}


def _errors(drawn, measured) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per label drawn and measured: (sizes, simulated / measured - 1) where sizes match."""
    out = {}
    for label, (m_sizes, m_values) in measured.items():
        if label not in drawn:
            continue
        sizes, values = drawn[label]
        at = {float(s): float(v) for s, v in zip(sizes, values)}
        pairs = [(s, at[float(s)] / m - 1.0) for s, m in zip(m_sizes, m_values)
                 if float(s) in at and m and np.isfinite(m) and np.isfinite(at[float(s)])]
        if pairs:
            out[label] = (np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]))
    return out


def _error_panel(panel, ax, errors, colors, short: str = "y") -> None:
    """simulated / measured - 1 (%) of the drawn quantity per size under the curves, with
    the +-15% band."""
    panel.axhspan(-15, 15, color="#eeeeee", zorder=0)
    panel.axhline(0, color="#888888", linewidth=0.8)
    top = 15.0
    for label, (sizes, err) in errors.items():
        panel.plot(sizes, 100 * err, marker="D", markersize=3.5, linewidth=1.0,
                   color=colors[label], markerfacecolor="none")
        top = max(top, float(np.max(np.abs(100 * err))) * 1.15)
    panel.set_ylim(-top, top)
    panel.set_ylabel(f"{short}: sim/meas - 1 (%)", fontsize=8)
    panel.tick_params(labelsize=8)
    panel.grid(color="#e3e3e3", linewidth=0.6)
    ax.set_xlabel("")
    ax.tick_params(labelbottom=False)
    panel.set_xlabel("message size")
    panel.set_xticks(ax.get_xticks())
    panel.set_xticklabels([size_label(t) for t in ax.get_xticks()], fontsize=8)
    panel.set_xlim(ax.get_xlim())


def _axes(ax, path, size: tuple[float, float], rect: tuple[float, float, float, float]):
    """(figure, axes, notebook?): the caller's ``ax`` and its figure, or a new figure of
    ``size`` inches with axes at ``rect``; notebook when ``ax`` is given or no ``path``
    (the function then returns the Figure)."""
    if ax is not None:
        return ax.figure, ax, True
    fig = new_figure(*size)
    return fig, fig.add_axes(rect), path is None


#: Characters per line of a curve's legend entry (longer labels wrap).
LEGEND_CHARS = 44


def _wrapped(title: str, width: int = 75) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(title, width, break_long_words=False))


def _y_unit(y: str, columns: list[np.ndarray]) -> tuple[float, str]:
    if y != "time_s":
        return 1.0, ""
    finite = np.concatenate([c[np.isfinite(c)] for c in columns]) if columns else []
    top = float(np.max(finite)) if len(finite) else 1.0
    for factor, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if top >= factor:
            return factor, unit
    return 1e-9, "ns"


def _colors(labels: list[str]) -> dict[str, Any]:
    from matplotlib import colormaps

    palette = colormaps["tab10" if len(labels) <= 10 else "tab20"]
    return {label: palette(k % palette.N) for k, label in enumerate(labels)}


def _size_axis(ax, sizes: np.ndarray) -> None:
    """log2 x axis; a tick per power of two (every 2nd/4th... when there are many)."""
    from matplotlib.ticker import FixedLocator, NullLocator

    sizes = sizes[sizes > 0]
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size")
    if sizes.size == 0:
        return
    lo, hi = math.floor(math.log2(sizes.min())), math.ceil(math.log2(sizes.max()))
    step = next(s for s in (1, 2, 5, 10, 20) if (hi - lo) / s <= 10)
    ticks = [2.0 ** e for e in range(-(-lo // step) * step, hi + 1, step)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([size_label(t) for t in ticks], fontsize=8)
    ax.set_xlim(2.0 ** lo / 1.2, 2.0 ** hi * 1.2)


def draw_bars(values: Mapping[str, float | None], path=None, y: str = "busbw_GBps", *,
              title: str | None = None, overwrite: bool = True, ax=None):
    """Horizontal bars, one per label (a comparison at a single message size); None or NaN
    values are left out and listed as 'n/a'. Returns the values drawn, or the matplotlib
    Figure with ``ax=`` or without ``path`` (as :func:`draw_curves`)."""
    if y not in Y_AXES:
        from ..errors import unknown_name

        raise unknown_name("y axis", y, Y_AXES)
    drawn = {k: float(v) for k, v in values.items() if v is not None and math.isfinite(v)}
    if not drawn:
        raise InputError("draw_bars: no values to draw")
    factor, unit = _y_unit(y, [np.asarray(list(drawn.values()))])
    labels = list(values)
    height = 1.2 + 0.35 * len(labels)
    fig, ax, notebook = _axes(ax, path, (7.5, height), (0.36, 0.55 / height, 0.58,
                                                       1 - 1.0 / height))
    colors = _colors(labels)
    for row, label in enumerate(labels):
        if label in drawn:
            ax.barh(row, drawn[label] / factor, color=colors[label], height=0.6)
            ax.text(drawn[label] / factor, row, f" {drawn[label] / factor:.3g}", va="center",
                    fontsize=8)
        else:
            ax.text(0, row, " n/a", va="center", fontsize=8, color="#777777")
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    text = Y_AXES[y][0]
    ax.set_xlabel(f"{text} ({unit})" if unit else text)
    ax.set_xlim(0, max(drawn.values()) / factor * 1.18)
    ax.grid(axis="x", color="#e3e3e3", linewidth=0.6)
    ax.set_title(_wrapped(title or text.split(" (")[0]), fontsize=10)
    if path is not None:
        save_figure(fig, path, overwrite)
    return fig if notebook else drawn
