"""Link heatmaps: every directed link of a topology coloured by its load.

>>> from netsim.topology import mesh
>>> from netsim.engine import simulate
>>> from netsim.schedule.traffic import all_to_all
>>> topo = mesh((4, 4))
>>> result = simulate(topo, all_to_all(16, 1e6))
>>> drawn = draw_heatmap(topo, result, path="alltoall.png")   # doctest: +SKIP
>>> drawn.colors["1_1->1_2"]                                   # doctest: +SKIP
(0.99, 0.90, 0.14, 1.0)

Values are per link: utilisation (bytes / (bandwidth x makespan), 0..1), bytes carried
(shown in GB, MB ...) or busy time (shown in s, ms ...). Values use a perceptually uniform
map (viridis) from 0 to the largest value (to 1 for utilisation); differences between two
runs use a diverging map (coolwarm) centred at 0, so an unchanged link is the middle colour.

:func:`result_document` / :func:`write_result_document` save a result with its topology
(spec string and node layout) so that ``netsim heatmap RESULT.json`` can redraw it later;
:func:`read_result_document`, :func:`document_topology` and :func:`document_values` read it.

matplotlib is imported inside the drawing functions only, with an explicit Agg canvas.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InputError
from ..outputs import to_jsonable
from ..units import format_time
from .figure import Canvas, draw_nodes, figure_for, save_figure
from .layout import Layout, layout, link_geometry, wrap_links

__all__ = ["HeatmapDrawing", "QUANTITIES", "draw_heatmap", "draw_window_heatmaps",
           "draw_time_heatmaps", "link_values",
           "display_unit",
           "canonical_quantity", "result_document", "write_result_document",
           "read_result_document", "document_topology", "document_values",
           "document_difference", "scenario_results", "heatmap_paths", "labelled_paths",
           "draw_scenario_heatmaps"]

#: quantity -> (label, key in Result.link_records / the result JSON, unit ladder).
QUANTITIES: dict[str, tuple[str, str, list[tuple[float, str]]]] = {
    "utilization": ("link utilisation", "utilization", [(1.0, "")]),
    "bytes": ("bytes carried", "bytes",
              [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")]),
    "busy": ("busy time", "busy_s", [(1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")]),
}
_ALIASES = {"util": "utilization", "utilisation": "utilization", "busy_s": "busy",
            "load": "bytes"}
NO_DATA = (0.82, 0.82, 0.82, 1.0)   # links without a value: light grey


@dataclass(frozen=True)
class HeatmapDrawing:
    """What :func:`draw_heatmap` drew: per-link RGBA colours (by link name), the values in
    SI units (NaN = no data), the colour scale (``vmin``..``vmax`` in display ``unit``,
    ``cmap`` name), the labelled links (hottest first) and the output path."""

    colors: dict[str, tuple[float, float, float, float]]
    values: np.ndarray
    vmin: float
    vmax: float
    unit: str
    cmap: str
    labelled: tuple[str, ...]
    path: Any
    quantity: str = "utilization"
    diverging: bool = False
    failed: tuple[str, ...] = ()                 # drawn dashed red, crossed
    degraded: Mapping[str, float] = field(default_factory=dict)   # name -> bandwidth factor

    def record(self) -> dict[str, Any]:
        """What was drawn, as one row: the file, the quantity, the links drawn and those
        with a value, the largest value in SI units (utilisation 0..1, bytes, s; for a
        difference the one of largest magnitude, with its sign) and its link."""
        known = np.flatnonzero(np.isfinite(self.values))
        where = getattr(self.path, "name", None) if hasattr(self.path, "write") else self.path
        row: dict[str, Any] = {"file": str(where),
                               "quantity": self.quantity, "difference": self.diverging,
                               "links": int(self.values.size), "links_with_data": int(known.size),
                               "max": None, "max_link": None}
        if known.size:
            key = np.abs(self.values[known]) if self.diverging else self.values[known]
            top = int(known[np.argmax(key)])     # first of equals: the lowest link id
            row.update(max=float(self.values[top]), max_link=list(self.colors)[top])
        return row


def canonical_quantity(quantity: str) -> str:
    """``'util'`` -> ``'utilization'``; an InputError naming the choices otherwise."""
    from ..errors import unknown_name

    name = _ALIASES.get(quantity, quantity)
    if name not in QUANTITIES:
        raise unknown_name("quantity", quantity, QUANTITIES)
    return name


def link_values(topology, values: Any, quantity: str = "utilization") -> np.ndarray:
    """Per-link values (SI units) in the topology's link order, NaN where unknown.

    ``values`` is a :class:`~netsim.engine.Result` (``quantity`` picks the column), a
    mapping link name -> value, or a sequence of ``num_links`` numbers.
    """
    if hasattr(values, "link_bytes") and hasattr(values, "link_names"):
        return _result_values(topology, values, canonical_quantity(quantity))
    if isinstance(values, Mapping):
        out = np.full(topology.num_links, np.nan)
        for name, value in values.items():
            out[topology.link(name)] = float(value)
        return out
    out = np.asarray(values, dtype=float).ravel()
    if out.size != topology.num_links:
        raise InputError(f"{out.size} link values for topology {topology.name!r} with "
                         f"{topology.num_links} links")
    return out


def _result_values(topology, result, quantity: str) -> np.ndarray:
    column = {"utilization": result.link_utilization, "bytes": result.link_bytes,
              "busy": result.link_busy}[quantity]
    if tuple(result.link_names) != tuple(topology.link_names):
        return link_values(topology, dict(zip(result.link_names, column)))
    return np.asarray(column, dtype=float)


def display_unit(quantity: str, values: np.ndarray) -> tuple[str, float]:
    """(unit, factor) to show ``values`` of ``quantity`` in: ``('GB', 1e9)``, ``('ms', 1e-3)``."""
    ladder = QUANTITIES[quantity][2] if quantity in QUANTITIES else [(1.0, "")]
    finite = np.abs(values[np.isfinite(values)])
    top = float(finite.max()) if finite.size else 0.0
    for factor, unit in ladder:
        if top >= factor:
            return unit, factor
    factor, unit = (ladder[1] if quantity == "bytes" else ladder[0]) if top == 0 else ladder[-1]
    return unit, factor


# -- the heatmap --------------------------------------------------------------------------
def draw_heatmap(topology, values, *, quantity: str = "utilization", path=None,
                 title: str | None = None, diverging: bool = False, label_top: int = 3,
                 caption: str | None = None, overwrite: bool = True, ax=None,
                 faults: Sequence[Mapping[str, Any]] | None = None, span: str = "run"):
    """Draw ``topology`` with each directed link coloured by its value; save to ``path``.

    ``values``: a Result, a mapping link name -> value or ``num_links`` numbers in SI units
    (utilisation 0..1, bytes, seconds of busy time). ``diverging=True`` draws differences
    (coolwarm, symmetric about 0). The ``label_top`` links with the largest values (largest
    magnitude when diverging) get their value written beside them. ``path``: .png, .svg or
    .pdf (or a binary file object with a ``name``). Returns a :class:`HeatmapDrawing`.

    Failed links are drawn dashed in red with a cross at their middle, degraded links dotted
    in orange with their factor written beside them, both in a legend with the time they
    failed: ``faults`` as in ``Result.meta["faults"]`` (``{"links": [names], "factor",
    "time"}``), taken from the Result (or a saved result document) when not given.

    In a notebook: with ``ax=`` (matplotlib axes) it draws there (the colour bar takes
    room from ``ax``), or with neither ``ax`` nor ``path`` on a new figure, and returns the
    matplotlib Figure (saved too if ``path`` is given). ``span`` names what utilisation is
    a fraction of in the colour bar's label ("run"; "window 0.4-0.8 ms").
    """
    from .figure import canvas_on

    quantity = canonical_quantity(quantity)
    vals = link_values(topology, values, quantity)
    unit, factor = display_unit(quantity, vals)
    shown = vals / factor
    norm, cmap_name = _scale(quantity, shown, diverging)
    colors = _colors(shown, norm, cmap_name)
    lay = layout(topology)
    if faults is None:
        faults = (getattr(values, "meta", None) or {}).get("faults") or ()
    failed, degraded = _fault_links(topology, faults)
    hottest = [i for i in _hottest(shown, label_top + len(failed), diverging)
               if i not in failed][:label_top]
    notes = _caption_lines(topology, lay, hottest, shown, unit, quantity, caption, diverging)
    notes = list(notes) + _fault_caption(topology, failed, degraded)
    geometry = link_geometry(topology, lay)
    canvas = figure_for(lay, notes, geometry=geometry) if ax is None \
        else canvas_on(ax, lay, geometry)
    paths = geometry.paths
    _draw_links(canvas, paths, colors, shown, topology)
    draw_nodes(canvas.ax, topology, lay, canvas.scale, ghosts=geometry.ghosts)
    _draw_faults(canvas, paths, topology, failed, degraded)
    _label_links(canvas.ax, paths, hottest, shown, unit, quantity, diverging)
    _colorbar(canvas, norm, cmap_name, quantity, unit, diverging, span=span)
    canvas.ax.set_title(title or _default_title(topology, quantity, diverging), fontsize=11)
    saved = save_figure(canvas.fig, path, overwrite) if path is not None else None
    if ax is not None or path is None:
        return canvas.fig
    names = topology.link_names
    return HeatmapDrawing(colors={names[i]: tuple(float(c) for c in colors[i])
                                  for i in range(len(names))},
                          values=vals, vmin=float(norm.vmin), vmax=float(norm.vmax), unit=unit,
                          cmap=cmap_name, labelled=tuple(names[i] for i in hottest), path=saved,
                          quantity=quantity, diverging=diverging,
                          failed=tuple(names[i] for i in failed),
                          degraded={names[i]: f for i, f in degraded.items()})


def draw_phase_heatmaps(topology, panels: Mapping[str, Any], path=None, *,
                        title: str | None = None, label_top: int = 2,
                        overwrite: bool = True):
    """One utilisation map per phase, side by side on one colour scale: ``panels`` maps a
    panel's title (``"tp-allreduce: 1.75 ms"``) to its links' utilisation (0..1) while
    that phase runs (:meth:`netsim.run.StepModel.phase_utilisation`). Saves to ``path``
    or returns the Figure. Returns the largest utilisation per panel when saved.

    >>> from netsim.topology import parse_topology
    >>> t = parse_topology("mesh:2x2")
    >>> fig = draw_phase_heatmaps(t, {"a": np.full(t.num_links, 0.5), "b": np.zeros(8)})
    >>> [ax.get_title() for ax in fig.axes[:2]]
    ['a', 'b']
    """
    if not panels:
        raise InputError("draw_phase_heatmaps: no phases to draw")
    return _draw_panels(topology, panels, path, title=title, label_top=label_top,
                        overwrite=overwrite, span="phase", columns=len(panels),
                        note="each panel: link utilisation while that phase runs (its bytes "
                             "over bandwidth x its time), one colour scale")


def draw_window_heatmaps(topology, windows, path=None, *, title: str | None = None,
                         label_top: int = 2, columns: int | None = None,
                         overwrite: bool = True, faults=None):
    """Small multiples over a run: one utilisation map per time window of ``windows`` (a
    :class:`~netsim.report.windows.LinkWindows`), on one colour scale (0 to the largest
    of 1 and any window's value), each panel titled with its time span. Up to 3 panels per
    row (6 for a machine drawn taller than wide) unless ``columns`` says
    otherwise. Failed and degraded links (``faults``, as in
    ``Result.meta["faults"]``) are drawn as in :func:`draw_heatmap`. Saves to ``path``
    (returns the largest utilisation per panel) or returns the Figure.

    >>> from netsim.topology import ring
    >>> from netsim.engine import simulate
    >>> from netsim.schedule.traffic import shift
    >>> from netsim.report.windows import link_windows
    >>> run = simulate(ring(4), shift(4, 1e6), record_timeline=True)
    >>> fig = draw_window_heatmaps(ring(4), link_windows(run, 4))
    >>> [ax.get_title().split(":")[0] for ax in fig.axes[:4]]
    ['window 1/4', 'window 2/4', 'window 3/4', 'window 4/4']
    """
    from .windows import window_label

    util = windows.utilization
    panels = {f"window {k + 1}/{windows.count}: {window_label(windows, k)}":
              dict(zip(windows.names, util[k])) for k in range(windows.count)}
    if tuple(windows.names) == tuple(topology.link_names):
        panels = {label: util[k] for k, label in enumerate(panels)}
    return _draw_panels(topology, panels, path, title=title, label_top=label_top,
                        overwrite=overwrite, span="window", ends=windows.edges[1:],
                        columns=columns or _columns(topology, windows.count), faults=faults,
                        note="each panel: link utilisation in that time window (its bytes "
                             "over bandwidth x the window), one colour scale")


def draw_time_heatmaps(topology, result, path=None, *, at: float | None = None,
                       windows: int | None = None, title: str = "", overwrite: bool = True):
    """A run's links over time, from its timeline: with ``at`` (s) alone one map of the
    utilisation at that instant; with ``windows`` (N) small multiples of N equal windows
    (:func:`draw_window_heatmaps`); with both, the one window of N that holds ``at``.
    ``title`` is the run's name; the figure's title adds the time. Returns what
    :func:`draw_heatmap` or :func:`draw_window_heatmaps` return.

    >>> from netsim.topology import ring
    >>> from netsim.engine import simulate
    >>> from netsim.schedule.traffic import shift
    >>> run = simulate(ring(4), shift(4, 1e6), record_timeline=True)
    >>> fig = draw_time_heatmaps(ring(4), run, at=1e-5)
    >>> fig.axes[0].get_title()
    'link utilisation at 10 us'
    """
    from ..units import format_time
    from .windows import link_windows, utilization_at, window_at, window_label

    faults = (result.meta or {}).get("faults")
    lead = f"{title}:\n" if title else ""         # the run's name, the time below it
    if windows is not None and at is None:
        return draw_window_heatmaps(topology, link_windows(result, windows), path,
                                    title=f"{lead}link utilisation over time "
                                          f"(makespan {format_time(result.makespan)})",
                                    overwrite=overwrite, faults=faults)
    if at is None:
        raise InputError("draw_time_heatmaps: give at (s), windows (N) or both")
    if windows is None:
        values, span = utilization_at(result, at), f"bandwidth at {format_time(at)}"
        when, end = f"at {format_time(at)}", at
    else:
        cut = link_windows(result, windows)
        k = window_at(cut, at)
        values, span = cut.utilization[k], f"window {window_label(cut, k)}"
        end = float(cut.edges[k + 1])
        when = f"in window {k + 1}/{cut.count} ({window_label(cut, k)}, holding " \
               f"{format_time(at)})"
    return draw_heatmap(topology, dict(zip(result.link_names, values)), path=path,
                        title=f"{lead}link utilisation {when}", overwrite=overwrite,
                        faults=[f for f in faults or () if float(f.get("time", 0.0)) <= end],
                        span=span,
                        caption=f"of a run of {format_time(result.makespan)}")


def _struck(failed, degraded, faults, topology, end: float | None):
    """(failed, degraded) of the faults that struck before ``end`` (s; None: all)."""
    if end is None:
        return failed, degraded
    return _fault_links(topology, [f for f in faults if float(f.get("time", 0.0)) < end])


def _columns(topology, panels: int) -> int:
    """Panels per row: up to 6 when the machine is drawn taller than wide, else 3."""
    lay = layout(topology)
    x0, x1, y0, y1 = _panel_extent(lay, link_geometry(topology, lay))
    most = 6 if (y1 - y0) > 1.5 * (x1 - x0) else 3
    rows = -(-panels // most)
    return -(-panels // rows)              # rows as full as they can be: 4 panels are 2x2


def _draw_panels(topology, panels: Mapping[str, Any], path, *, title, label_top: int,
                 overwrite: bool, span: str, columns: int, note: str, faults=None,
                 ends: Sequence[float] | None = None):
    """Panels on a grid of ``columns``, one colour scale, a colour bar on the right. With
    ``ends`` (s, the time each panel ends) a fault is drawn in the panels that end after
    it struck only."""
    from .figure import canvas_on, new_figure

    values = {label: link_values(topology, v, "utilization") for label, v in panels.items()}
    finite = np.concatenate([v[np.isfinite(v)] for v in values.values()])
    norm, cmap_name = _scale("utilization", finite, False)
    lay = layout(topology)
    geometry = link_geometry(topology, lay)
    failed, degraded = _fault_links(topology, faults or ())
    x0, x1, y0, y1 = (float(geometry_edge) for geometry_edge in _panel_extent(lay, geometry))
    k = len(values)
    columns = max(1, min(int(columns), k))
    rows = -(-k // columns)
    # inches per layout unit: a panel at most 6 in across, the figure at most 16 in wide
    unit = min(1.0, 6.0 / max(x1 - x0, y1 - y0, 1.0),
               (16.0 - 1.6) / (columns * max(x1 - x0, 1.0)))
    ax_w, ax_h = (x1 - x0) * unit, (y1 - y0) * unit
    lines = [note] + _fault_caption(topology, failed, degraded)
    gap_w, gap_h = 0.3, 0.45
    top = 0.4 + (0.2 * (title.count("\n") + 1) if title else 0.0)
    bottom = 0.15 + 0.13 * len(lines)                  # the footnote's lines
    fig_w = columns * (ax_w + gap_w) + 1.6
    fig_h = rows * ax_h + (rows - 1) * gap_h + top + bottom
    fig = new_figure(fig_w, fig_h)
    peaks = {}
    for n, (label, vals) in enumerate(values.items()):
        row, col = divmod(n, columns)
        bottom = fig_h - top - (row + 1) * ax_h - row * gap_h
        ax = fig.add_axes(((0.15 + col * (ax_w + gap_w)) / fig_w, bottom / fig_h,
                           ax_w / fig_w, ax_h / fig_h))
        canvas = canvas_on(ax, lay, geometry)
        _draw_links(canvas, geometry.paths, _colors(vals, norm, cmap_name), vals, topology)
        draw_nodes(ax, topology, lay, canvas.scale, ghosts=geometry.ghosts)
        struck = _struck(failed, degraded, faults or (), topology,
                         None if ends is None else float(ends[n]))
        _draw_faults(canvas, geometry.paths, topology, *struck)
        _label_links(ax, geometry.paths, [i for i in _hottest(vals, label_top + len(failed),
                                                               False)
                                          if i not in struck[0]][:label_top], vals, "",
                     "utilization")
        ax.set_title(label, fontsize=9)
        known = vals[np.isfinite(vals)]
        peaks[label] = float(known.max()) if known.size else 0.0
    bar_h = min(rows * ax_h + (rows - 1) * gap_h, 4.0)
    bar = Canvas(fig, ax, unit, ((fig_w - 1.2) / fig_w, (fig_h - top - bar_h) / fig_h,
                                  0.16 / fig_w, bar_h / fig_h))
    _colorbar(bar, norm, cmap_name, "utilization", "", False, span=span)
    if title:
        fig.suptitle(title, fontsize=11, y=1 - 0.12 / fig_h, va="top")
    fig.text(0.08 / fig_w, 0.08 / fig_h, "\n".join(lines), fontsize=7, color="#333333")
    if path is None:
        return fig
    save_figure(fig, path, overwrite)
    return peaks


def _panel_extent(lay, geometry):
    from .figure import _extent, _layout_points

    return _extent(_layout_points(lay, geometry), 0.6)


def _scale(quantity: str, shown: np.ndarray, diverging: bool):
    from matplotlib.colors import Normalize

    finite = shown[np.isfinite(shown)]
    if diverging:
        top = float(np.abs(finite).max()) if finite.size else 0.0
        top = top if top > 0 else 1.0
        return Normalize(-top, top), "coolwarm"
    top = float(finite.max()) if finite.size else 0.0
    if quantity == "utilization":
        top = max(top, 1.0)
    return Normalize(0.0, top if top > 0 else 1.0), "viridis"


def _colors(shown: np.ndarray, norm, cmap_name: str) -> np.ndarray:
    from matplotlib import colormaps

    cmap = colormaps[cmap_name]
    rgba = cmap(np.clip(norm(np.nan_to_num(shown)), 0.0, 1.0))
    rgba[~np.isfinite(shown)] = NO_DATA
    return rgba


def _line_width(topology, scale: float) -> float:
    """Points: about 60% of a lane, so parallel lanes stay apart."""
    planes = max((len(ids) for ids in topology.pair_links.values()), default=1)
    lane = min(0.1, 0.34 / (2 * planes))
    return float(np.clip(lane * scale * 72 * 0.6, 0.35, 3.2))


def _draw_links(canvas: Canvas, paths, colors, shown, topology) -> None:
    """Cold links first so hot ones are on top; arrowheads unless there are thousands."""
    from matplotlib.collections import LineCollection
    from matplotlib.patches import FancyArrowPatch
    from matplotlib.path import Path as MplPath

    width = _line_width(topology, canvas.scale)
    order = np.argsort(np.nan_to_num(np.abs(shown), nan=-1.0), kind="stable")
    if len(paths) > 1500:
        pieces = [(piece, colors[i]) for i in order for piece in paths[i]]
        canvas.ax.add_collection(LineCollection(
            [p for p, _ in pieces], colors=[c for _, c in pieces], linewidths=width,
            zorder=2, capstyle="butt"))
        return
    for rank, i in enumerate(order):
        for k, piece in enumerate(paths[i]):
            last = k == len(paths[i]) - 1
            canvas.ax.add_artist(FancyArrowPatch(
                path=MplPath(piece), arrowstyle="-|>" if last else "-",
                mutation_scale=max(4.0, width * 3.2), color=colors[i], linewidth=width,
                zorder=2 + rank / (len(order) + 1), shrinkA=0, shrinkB=0, capstyle="butt",
                gid=topology.link_names[i] if last else None))   # SVG id: the link's name


FAILED_COLOR, DEGRADED_COLOR = "#d62728", "#ff7f0e"


def _fault_links(topology, faults) -> tuple[dict[int, float], dict[int, float]]:
    """{link: time it failed} and {link: bandwidth factor} of ``faults`` (as in
    ``Result.meta["faults"]``); a link that fails is not also listed as degraded."""
    failed: dict[int, float] = {}
    degraded: dict[int, float] = {}
    index = {name: i for i, name in enumerate(topology.link_names)}
    for fault in faults:
        factor, time = float(fault.get("factor", 0.0)), float(fault.get("time", 0.0))
        for name in fault.get("links", ()):
            i = index.get(str(name))
            if i is None:
                continue
            if factor == 0.0:
                failed.setdefault(i, time)
            elif i not in failed:
                degraded[i] = factor
    for i in failed:
        degraded.pop(i, None)
    return failed, degraded


def _fault_caption(topology, failed, degraded) -> list[str]:
    """What the fault styles mean, for the caption (a legend would cover the drawing)."""
    lines = []
    names = topology.link_names
    if failed:
        when = sorted(set(failed.values()))
        since = "" if when == [0.0] else " from " + ", ".join(format_time(t) for t in when)
        shown = ", ".join(names[i] for i in list(failed)[:4]) + (" ..." if len(failed) > 4
                                                                  else "")
        lines.append(f"red dashed, crossed: failed{since} ({len(failed)} links: {shown})")
    if degraded:
        factors = ", ".join(f"x{f:g}" for f in sorted(set(degraded.values())))
        lines.append(f"orange dotted: degraded to {factors} of their bandwidth "
                     f"({len(degraded)} links)")
    return lines


def _draw_faults(canvas: Canvas, paths, topology, failed, degraded) -> None:
    """Overlay failed links (dashed red, a cross at the middle) and degraded ones (dotted
    orange, their factor beside them), above the utilisation colours."""
    width = _line_width(topology, canvas.scale) * 1.4
    for links, color, style in ((failed, FAILED_COLOR, "--"), (degraded, DEGRADED_COLOR, ":")):
        for i in links:
            for piece in paths[i]:
                canvas.ax.plot(piece[:, 0], piece[:, 1], color=color, linestyle=style,
                               linewidth=width, zorder=5, solid_capstyle="butt")
            point, normal = _point_along(paths[i][0], 0.5)
            if links is failed:
                canvas.ax.plot(point[0], point[1], marker="x", color=color, markersize=8,
                               markeredgewidth=2.0, zorder=5.5)
            else:
                spot = point - normal * 0.17
                canvas.ax.text(spot[0], spot[1], f"x{links[i]:g}", fontsize=6.5,
                               color=DEGRADED_COLOR, ha="center", va="center", zorder=6)


def _hottest(shown: np.ndarray, count: int, diverging: bool) -> list[int]:
    key = np.abs(shown) if diverging else shown
    key = np.where(np.isfinite(key), key, -np.inf)
    order = np.argsort(-key, kind="stable")[:max(count, 0)]
    return [int(i) for i in order if key[i] > 0]


def _point_along(path: np.ndarray, fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """Point at ``fraction`` of a polyline's length and the right-hand normal there."""
    seg = np.diff(path, axis=0)
    lengths = np.hypot(seg[:, 0], seg[:, 1])
    cum = np.concatenate([[0.0], np.cumsum(lengths)])
    at = cum[-1] * fraction
    k = int(np.clip(np.searchsorted(cum, at) - 1, 0, len(seg) - 1))
    t = (at - cum[k]) / lengths[k] if lengths[k] > 0 else 0.0
    u = seg[k] / lengths[k] if lengths[k] > 0 else np.array([1.0, 0.0])
    return path[k] + t * seg[k], np.array([u[1], -u[0]])


def _format_value(value: float, unit: str, quantity: str, signed: bool = False) -> str:
    sign = "+" if signed else ""
    if quantity == "utilization":
        return f"{value:{sign}.2f}"
    return f"{value:{sign}.3g} {unit}".strip()


def _label_links(ax, paths, hottest: list[int], shown, unit: str, quantity: str,
                 signed: bool = False) -> None:
    """Write the value beside each of the ``hottest`` links, sliding a label along its link
    (or to its other side) when it would sit on an earlier one."""
    placed: list[np.ndarray] = []
    for i in hottest:
        spot = _label_spot(paths[i][0], placed)
        placed.append(spot)
        ax.text(spot[0], spot[1], _format_value(shown[i], unit, quantity, signed), fontsize=7,
                ha="center", va="center", zorder=6,
                bbox={"boxstyle": "round,pad=0.15", "facecolor": "white",
                      "edgecolor": "#444444", "linewidth": 0.5, "alpha": 0.9})


def _label_spot(path: np.ndarray, placed: list[np.ndarray]) -> np.ndarray:
    """The first spot beside ``path`` at least 0.45 units from every placed label, else the
    spot farthest from them."""
    best, best_gap = None, -1.0
    for side in (1.0, -1.0):
        for fraction in (0.5, 0.3, 0.7, 0.15, 0.85):
            point, normal = _point_along(path, fraction)
            spot = point + side * normal * 0.17
            gap = min((float(np.hypot(*(spot - other))) for other in placed), default=np.inf)
            if gap > 0.45:
                return spot
            if gap > best_gap:
                best, best_gap = spot, gap
    return best


def _colorbar(canvas: Canvas, norm, cmap_name: str, quantity: str, unit: str,
              diverging: bool, span: str = "run") -> None:
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable

    label = QUANTITIES[quantity][0] + (", A - B" if diverging else "")
    if quantity == "utilization":
        label += f" (fraction of the {span})"
    elif unit:
        label += f" ({unit})"
    mappable = ScalarMappable(norm=norm, cmap=colormaps[cmap_name])
    if canvas.side is None:                  # the caller's axes: the bar takes room from it
        canvas.fig.colorbar(mappable, ax=canvas.ax, label=label, shrink=0.8)
        return
    cax = canvas.fig.add_axes(canvas.side)
    canvas.fig.colorbar(mappable, cax=cax, label=label)


def _default_title(topology, quantity: str, diverging: bool) -> str:
    what = QUANTITIES[quantity][0]
    return f"{topology.name}: {'difference in ' if diverging else ''}{what} per link"


def _caption_lines(topology, lay: Layout, hottest, shown, unit, quantity, extra,
                   diverging: bool = False) -> list[str]:
    notes = ["a->b runs on the right-hand side of its direction of travel (arrowheads)"]
    planes = max((len(ids) for ids in topology.pair_links.values()), default=1)
    if planes > 1:
        notes.append(f"up to {planes} parallel links (planes) side by side")
    if lay.notes:
        notes.append("links along dim 2 are diagonal stubs to the same node in the next "
                     "tile (upper right) or the previous one (lower left)")
    if lay.kind == "grid" and bool(wrap_links(topology).any()):
        notes.append("wrap-around links go to the dashed copy of their far end beyond the "
                     "edge")
    lines = ["; ".join(notes)]
    if hottest:
        lines.append(("largest changes: " if diverging else "hottest: ") + ", ".join(
            f"{topology.link_names[i]} {_format_value(shown[i], unit, quantity, diverging)}"
            for i in hottest))
    if extra:
        lines.append(extra)
    return lines


# -- result files that carry their topology ---------------------------------------------------
def result_document(result, topology, spec: str | None = None) -> dict[str, Any]:
    """``result.to_dict()`` plus what it takes to redraw it: ``topology_spec`` (the spec
    string, when known), ``family``, ``params`` and ``nodes`` (``name``, ``switch``,
    ``coord`` and, when present, ``attrs`` such as the tier of a fat-tree switch)."""
    doc = result.to_dict()
    doc["topology_spec"] = spec
    doc["family"] = topology.family
    doc["params"] = to_jsonable(topology.params)
    doc["nodes"] = [_node_record(topology, i) for i in range(topology.num_nodes)]
    return doc


def _node_record(topology, i: int) -> dict[str, Any]:
    coord = topology.coords[i]
    record = {"name": topology.node_names[i], "switch": bool(topology.is_switch[i]),
              "coord": None if coord is None else [float(c) for c in coord]}
    if topology.node_attrs[i]:
        record["attrs"] = to_jsonable(topology.node_attrs[i])
    return record


def write_result_document(path, result, topology, spec: str | None = None,
                          overwrite: bool = False):
    """Write :func:`result_document` as JSON to ``path`` atomically; returns the path."""
    import json

    from ..outputs import write_atomic

    text = json.dumps(result_document(result, topology, spec), indent=1) + "\n"
    return write_atomic(path, text, overwrite)


def read_result_document(path) -> dict[str, Any]:
    """Load a result JSON (``{"links": [{"id", ...}], ...}``); one-line InputErrors for a
    missing file, bad JSON or a document that is not a netsim result."""
    from .._inputs.jsonio import JSONSyntaxError, read_json

    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path}: is a folder, not a result JSON file")
    try:
        doc = read_json(path, "result JSON")
    except JSONSyntaxError as err:
        raise InputError(f"{path}: not valid JSON ({err.msg} at line {err.lineno}, "
                         f"column {err.colno})") from None
    if isinstance(doc, dict) and isinstance(doc.get("result"), dict):
        doc = {**doc["result"], **{k: v for k, v in doc.items() if k != "result"}}
    links = doc.get("links") if isinstance(doc, dict) else None
    if not isinstance(links, list) or not all(isinstance(r, dict) and "id" in r
                                              for r in links):
        raise InputError(f"{path}: not a netsim result (expected an object with a 'links' "
                         f"list of {{\"id\": ...}} records)")
    return doc


def document_topology(doc: Mapping[str, Any], spec: str | None = None,
                      source: str = "result"):
    """The topology of a result document: from ``spec`` if given, else the document's
    ``topology_spec``, else rebuilt from its ``nodes`` and link ends (from the link ends
    alone, drawn with a generic layout, for results saved without nodes). Its link names
    must be the document's link ids."""
    spec = spec or doc.get("topology_spec")
    if spec:
        from ..topology import parse_topology

        topology = parse_topology(spec)
    else:
        topology = _rebuilt_topology(doc, source)
    _check_same_links(topology.link_names, [r["id"] for r in doc["links"]],
                      f"topology {spec or topology.name!r}", source)
    return topology


def _rebuilt_topology(doc: Mapping[str, Any], source: str):
    from ..errors import NetsimError
    from ..topology import TopologyBuilder

    nodes, links = doc.get("nodes"), doc["links"]
    if not links or not all(r.get("src") and r.get("dst") for r in links):
        raise InputError(f"{source}: the file does not describe its topology; pass it with "
                         f"--topo SPEC")
    if not isinstance(nodes, list):     # only link ends known: nodes without a layout
        ends = dict.fromkeys(str(r[end]) for r in links for end in ("src", "dst"))
        nodes = [{"name": name} for name in ends]
    builder = TopologyBuilder(str(doc.get("topology") or "result"),
                              family=str(doc.get("family") or "custom"))
    try:
        for node in nodes:
            builder.add_node(node["name"], switch=bool(node.get("switch")),
                             coord=node.get("coord"), **dict(node.get("attrs") or {}))
        for link in links:
            rate = link.get("bandwidth_Bps") or link.get("bandwidth")   # older saved files
            builder.add_link(link["src"], link["dst"], float(rate or 1.0),
                             name=str(link["id"]))
        return builder.build()
    except (NetsimError, KeyError, TypeError, ValueError) as err:
        raise InputError(f"{source}: cannot rebuild its topology ({err}); pass --topo SPEC"
                         ) from None


def _check_same_links(expected: Sequence[str], got: Sequence[str], what: str,
                      source: str) -> None:
    if len(got) == len(expected) and set(got) == set(expected):
        return
    missing = next((n for n in expected if n not in set(got)), None)
    extra = next((n for n in got if n not in set(expected)), None)
    detail = (f"link {extra!r} is in {source} only" if extra is not None else
              f"link {missing!r} is in {what} only" if missing is not None else
              "a link id is repeated")
    raise InputError(f"{source}: links do not match {what} ({detail})")


def document_values(doc: Mapping[str, Any], topology, quantity: str = "utilization",
                    source: str = "result") -> np.ndarray:
    """Per-link ``quantity`` of a result document in ``topology``'s link order (SI units)."""
    key = QUANTITIES[canonical_quantity(quantity)][1]
    out = np.full(topology.num_links, np.nan)
    for record in doc["links"]:
        value = record.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise InputError(f"{source}: link {record['id']!r} has no number {key!r} "
                             f"(got {value!r})")
        out[topology.link(str(record["id"]))] = float(value)
    return out


def document_difference(doc_a: Mapping[str, Any], doc_b: Mapping[str, Any], topology,
                        quantity: str = "utilization", sources: tuple[str, str] = ("A", "B")
                        ) -> np.ndarray:
    """``quantity`` of A minus that of B per link; both must have exactly the same links."""
    _check_same_links([r["id"] for r in doc_a["links"]], [r["id"] for r in doc_b["links"]],
                      sources[0], sources[1])
    return (document_values(doc_a, topology, quantity, sources[0])
            - document_values(doc_b, topology, quantity, sources[1]))


# -- scenarios ----------------------------------------------------------------------------------
def scenario_results(outcome, per_job: int = 1) -> list[list[tuple[str, Any, Any]]]:
    """Per job of a scenario outcome, its last ``per_job`` ``(label, Result, Topology)``
    (a sweep's largest sizes come last)."""
    picked = []
    for job in outcome.jobs:
        items = [(label, result, job.topologies.get(label))
                 for label, result in job.results.items()]
        picked.append([item for item in items if item[2] is not None][-per_job:]
                      if per_job > 0 else [])
    return picked


def labelled_paths(path, labels: Sequence[Any]) -> list[Path]:
    """One figure per label, named after ``path``: ``heat.png`` -> ``heat-<label>.png``.

    >>> [p.name for p in labelled_paths("figs/heat.png", ["snake", "tiles"])]
    ['heat-snake.png', 'heat-tiles.png']
    """
    path = Path(path)
    return [path.with_name(f"{path.stem}-{label}{path.suffix}") for label in labels]


def heatmap_paths(path, num_jobs: int) -> list[Path]:
    """``path`` for a single job, else ``<stem>-1<suffix>``, ``<stem>-2<suffix>`` ..."""
    if num_jobs == 1:
        return [Path(path)]
    return labelled_paths(path, range(1, num_jobs + 1))


def draw_scenario_heatmaps(outcome, path, *, quantity: str = "utilization",
                           overwrite: bool = True, at: float | None = None,
                           windows: int | None = None) -> list[Path]:
    """One heatmap per job of a scenario outcome (its last result) at :func:`heatmap_paths`;
    with ``at`` or ``windows`` its links over time (:func:`draw_time_heatmaps`; the runs
    recorded their timelines). Returns the paths written."""
    written = []
    items = scenario_results(outcome, per_job=1)
    for target, job, picked in zip(heatmap_paths(path, len(items)), outcome.jobs, items):
        for label, result, topology in picked:
            name = label if label.startswith(job.name) else f"{job.name}: {label}"
            if at is not None or windows is not None:
                draw_time_heatmaps(topology, result, target, at=at, windows=windows,
                                   title=f"{name} on {topology.name}", overwrite=overwrite)
                written.append(target)
                continue
            draw_heatmap(topology, result, quantity=quantity, path=target,
                         title=f"{name} on {topology.name}", overwrite=overwrite)
            written.append(target)
    return written
