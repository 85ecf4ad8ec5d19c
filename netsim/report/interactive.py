"""An interactive HTML report of a scenario: the machine drawn as in the heatmaps with its
links coloured by utilisation per time window (a slider and a play button step through the
run), hover text per link, and zoomable curves, in one self-contained file (plotly.js is
written into the page: it opens without network access).

Needs Plotly (``pip install 'netsim[report]'``); :func:`interactive_report` says whether it
is installed, and ``netsim run --report`` writes the static page
(:mod:`netsim.report.html`) without it. The runs must have recorded their timelines
(:func:`netsim.run.recording_timelines`): the windows are exact
(:func:`netsim.report.windows.link_windows`).

>>> from netsim.topology import ring
>>> from netsim.engine import simulate
>>> from netsim.schedule.traffic import shift
>>> run = simulate(ring(4), shift(4, 1e6), record_timeline=True)
>>> fig = network_figure(ring(4), run, windows=5)            # doctest: +SKIP
>>> len(fig.frames), fig.layout.sliders[0].steps[1].label    # doctest: +SKIP
(5, '4')
>>> fig.layout.title.text                                    # doctest: +SKIP
'link utilisation in window 1/5 (0-4 us)'

Plotly is imported inside the functions only.
"""

from __future__ import annotations

import html
import importlib.util
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..units import format_size, format_time

__all__ = ["interactive_report", "network_figure", "busiest_links_figure",
           "write_interactive_report", "WINDOWS", "COLOUR_BINS"]

#: Time windows of a run's network picture (its slider's steps).
WINDOWS = 24
#: Links are drawn in this many colours (one line trace each, so a frame stays small).
COLOUR_BINS = 16
_FAILED = "#d62728"


def interactive_report() -> bool:
    """Is Plotly installed (the interactive report's one extra)?"""
    return importlib.util.find_spec("plotly") is not None


def _require_plotly():
    if not interactive_report():
        raise InputError("the interactive report needs Plotly: pip install 'netsim[report]'")
    import plotly.graph_objects as go

    return go


def _link_polylines(topology, geometry) -> list[tuple[list, list]]:
    """Per link, (xs, ys) of its drawing: its pieces joined by None (a wrap-around link is
    two pieces)."""
    out = []
    for pieces in geometry.paths:
        xs: list = []
        ys: list = []
        for piece in pieces:
            if xs:
                xs.append(None)
                ys.append(None)
            xs += piece[:, 0].round(4).tolist()
            ys += piece[:, 1].round(4).tolist()
        out.append((xs, ys))
    return out


def _midpoints(geometry) -> np.ndarray:
    from .heatmap import _point_along

    return np.array([_point_along(pieces[0], 0.5)[0] for pieces in geometry.paths]) \
        if geometry.paths else np.zeros((0, 2))


def _in_topology_order(topology, names: Sequence[str], values: np.ndarray) -> np.ndarray:
    """Columns of ``values`` (result link order, ``names``) in the topology's link order;
    0 for a link the run's machine did not have (a fabric of fewer planes)."""
    if tuple(names) == tuple(topology.link_names):
        return values
    column = {name: k for k, name in enumerate(names)}
    padded = np.concatenate([values, np.zeros((values.shape[0], 1))], axis=1)
    return padded[:, [column.get(name, len(names)) for name in topology.link_names]]


def _ops_in_flight(result, edges: np.ndarray) -> list[str]:
    """Per window, the ops running in it (started before its end, finished after its
    start), counted by tag."""
    start = np.asarray(result.op_start, dtype=float)
    finish = np.asarray(result.op_finish, dtype=float)
    tags = np.asarray(result.op_tags) if result.op_tags is not None and result.tags else None
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        running = (start < b) & (finish > a)
        count = int(running.sum())
        if tags is None or not count:
            out.append(f"{count} ops in flight")
            continue
        named = np.bincount(tags[running & (tags >= 0)], minlength=len(result.tags))
        parts = [f"{int(n)} {result.tags[t]}" for t, n in enumerate(named) if n]
        out.append(f"{count} ops in flight" + (f" ({', '.join(parts[:4])}"
                                               f"{', ...' if len(parts) > 4 else ''})"
                                               if parts else ""))
    return out


def network_figure(topology, result, *, windows: int = WINDOWS, title: str = ""):
    """The machine with every link coloured by its utilisation in each of ``windows``
    equal time windows of the run: one animation frame per window, a slider and
    play/pause buttons, one colour scale for all windows (0 to the largest of 1 and any
    window's value). Hovering on a link's marker (its middle) gives its name, ends, bytes
    and utilisation in the window and over the run, its peak number of concurrent flows
    and the ops in flight in that window. Failed links are drawn dashed red from the window
    they failed in. Returns a
    ``plotly.graph_objects.Figure``."""
    go = _require_plotly()
    from plotly.colors import sample_colorscale

    from .heatmap import _fault_links
    from .layout import layout, link_geometry
    from .timeline import time_unit
    from .windows import link_windows, window_label

    cut = link_windows(result, windows)
    util = _in_topology_order(topology, cut.names, cut.utilization)
    moved = _in_topology_order(topology, cut.names, cut.bytes)
    run_util = _in_topology_order(topology, cut.names, result.link_utilization[None, :])[0]
    run_bytes = _in_topology_order(topology, cut.names, result.link_bytes[None, :])[0]
    peak = _in_topology_order(topology, cut.names,
                              np.asarray(result.link_peak_flows)[None, :])[0]
    top = max(1.0, float(util.max(initial=0.0)))
    lay = layout(topology)
    geometry = link_geometry(topology, lay)
    lines = _link_polylines(topology, geometry)
    middle = _midpoints(geometry)
    colours = sample_colorscale("Viridis", [(b + 0.5) / COLOUR_BINS
                                            for b in range(COLOUR_BINS)])
    labels = [window_label(cut, k) for k in range(cut.count)]
    unit, factor = time_unit(max(float(cut.edges[-1]), 1e-12))
    in_flight = _ops_in_flight(result, cut.edges)
    names = topology.link_names
    ends = [(topology.node_names[int(s)], topology.node_names[int(d)])
            for s, d in zip(topology.link_src, topology.link_dst)]
    failed, _ = _fault_links(topology, (result.meta or {}).get("faults") or ())

    def frame_data(k: int) -> list:
        bins = np.minimum((util[k] / top * COLOUR_BINS).astype(int), COLOUR_BINS - 1)
        data = []
        for b in range(COLOUR_BINS):
            xs: list = []
            ys: list = []
            for i in np.flatnonzero(bins == b):
                xs += lines[i][0] + [None]
                ys += lines[i][1] + [None]
            data.append(go.Scatter(x=xs, y=ys))
        struck = {i: t for i, t in failed.items() if t < cut.edges[k + 1]}
        data.append(_failed_trace(go, lines, struck))
        text = [f"<b>{names[i]}</b> ({ends[i][0]} to {ends[i][1]})<br>"
                f"window {k + 1}/{cut.count}, {labels[k]}: utilisation {util[k, i]:.2f}, "
                f"{format_size(moved[k, i], binary=False)}<br>"
                f"whole run: utilisation {run_util[i]:.2f}, "
                f"{format_size(run_bytes[i], binary=False)}, "
                f"at most {int(peak[i])} flows at once<br>{in_flight[k]}"
                + (f"<br><b>failed at {format_time(struck[i])}</b>" if i in struck else "")
                for i in range(len(names))]
        data.append(go.Scatter(x=middle[:, 0], y=middle[:, 1],
                               marker={"color": util[k].round(4).tolist()}, text=text))
        return data

    data = frame_data(0)
    for b, trace in enumerate(data[:COLOUR_BINS]):
        trace.update(mode="lines", line={"color": colours[b], "width": 2.2},
                     hoverinfo="skip", showlegend=False, name=f"bin {b}")
    data[COLOUR_BINS].update(mode="lines", hoverinfo="skip", name="failed links",
                             showlegend=bool(failed),
                             line={"color": _FAILED, "width": 2.5, "dash": "dash"})
    planes = max((len(ids) for ids in topology.pair_links.values()), default=1)
    data[-1].update(mode="markers", hoverinfo="text", showlegend=False, name="links",
                    marker={"size": 7 if planes <= 2 else 5, "colorscale": "Viridis",
                            "cmin": 0.0, "cmax": top,
                            "line": {"width": 0.5, "color": "#333333"},
                            "colorbar": {"title": {"text": "utilisation<br>in the window",
                                                   "side": "right"}}})
    fixed = _node_traces(go, topology, lay, geometry)
    frames = [go.Frame(name=f"w{k}", data=frame_data(k), traces=list(range(len(data))),
                       layout={"title": {"text": _title(title, k, cut.count, labels[k])}})
              for k in range(cut.count)]
    fig = go.Figure(data=data + fixed, frames=frames)
    step = {"frame": {"duration": 0, "redraw": True}, "mode": "immediate",
            "transition": {"duration": 0}}
    fig.update_layout(
        title={"text": _title(title, 0, cut.count, labels[0]), "x": 0.02},
        xaxis={"visible": False}, yaxis={"visible": False, "scaleanchor": "x"},
        plot_bgcolor="white", height=_height(lay), margin={"l": 20, "r": 20, "t": 60,
                                                           "b": 20},
        hovermode="closest",
        legend={"x": 0.0, "y": 1.0, "xanchor": "left", "yanchor": "top",
                "bgcolor": "rgba(255,255,255,0.8)"},      # clear of the colour bar
        # the steps are named by their start (a span per step would overlap its
        # neighbours); the title says the whole span
        sliders=[{"active": 0, "x": 0.12, "len": 0.88, "y": 0.0, "pad": {"t": 40},
                  "currentvalue": {"prefix": f"window start ({unit}): "},
                  "steps": [{"label": f"{cut.edges[k] / factor:.3g}", "method": "animate",
                             "args": [[f"w{k}"], step]} for k in range(cut.count)]}],
        updatemenus=[{"type": "buttons", "direction": "left", "x": 0.11, "y": 0.0,
                      "xanchor": "right", "yanchor": "top", "pad": {"t": 70, "r": 10},
                      "buttons": [
                          {"label": "Play", "method": "animate",
                           "args": [None, {"frame": {"duration": 600, "redraw": True},
                                           "fromcurrent": True,
                                           "transition": {"duration": 0}}]},
                          {"label": "Pause", "method": "animate",
                           "args": [[None], step]}]}])
    return fig


def _title(title: str, k: int, count: int, label: str) -> str:
    lead = f"{html.escape(title)}: " if title else ""
    return f"{lead}link utilisation in window {k + 1}/{count} ({label})"


def _height(lay) -> int:
    span = np.ptp(lay.positions, axis=0) if lay.positions.size else np.ones(2)
    aspect = float(span[1] + 1.0) / float(span[0] + 1.0)
    return int(np.clip(560 * aspect, 420, 1100)) + 120


def _node_traces(go, topology, lay, geometry) -> list:
    pos = lay.positions
    switch = np.asarray(topology.is_switch, dtype=bool)
    out = [go.Scatter(x=pos[:, 0], y=pos[:, 1], mode="markers+text",
                      text=list(topology.node_names), textfont={"size": 9},
                      hovertext=[f"{name} ({'switch' if s else 'endpoint'})"
                                 for name, s in zip(topology.node_names, switch)],
                      hoverinfo="text", showlegend=False, name="nodes",
                      marker={"size": 24, "symbol": ["square" if s else "circle"
                                                     for s in switch],
                              "color": ["#5f6b7a" if s else "#f2f2f2" for s in switch],
                              "line": {"width": 1, "color": "#333333"}})]
    if geometry.ghosts:
        ghosts = np.array([(x, y) for x, y, _ in geometry.ghosts])
        out.append(go.Scatter(x=ghosts[:, 0], y=ghosts[:, 1], mode="markers+text",
                              text=[topology.node_names[n] for _, _, n in geometry.ghosts],
                              textfont={"size": 8, "color": "#8a8a8a"}, hoverinfo="skip",
                              showlegend=False, name="wrap copies",
                              marker={"size": 22, "color": "rgba(0,0,0,0)",
                                      "line": {"width": 1, "color": "#9a9a9a"}}))
    return out


def _failed_trace(go, lines, struck):
    """The failed links (drawn dashed red over their colour) of one frame."""
    xs: list = []
    ys: list = []
    for i in struck:
        xs += lines[i][0] + [None]
        ys += lines[i][1] + [None]
    return go.Scatter(x=xs, y=ys)


def busiest_links_figure(topology, result, *, windows: int = WINDOWS, top: int = 8,
                         title: str = ""):
    """The ``top`` busiest links' utilisation per time window as step lines (zoom, pan,
    hover); the run's mean per link in the legend."""
    go = _require_plotly()
    from .timeline import time_unit
    from .windows import link_windows

    cut = link_windows(result, windows)
    unit, factor = time_unit(max(float(cut.edges[-1]), 1e-12))
    order = [int(i) for i in np.argsort(-result.link_utilization, kind="stable")[:top]
             if result.link_bytes[i] > 0]
    fig = go.Figure()
    for i in order:
        values = cut.utilization[:, i]
        fig.add_trace(go.Scatter(
            x=(cut.edges / factor).tolist(), y=np.append(values, values[-1]).tolist(),
            mode="lines", line_shape="hv",
            name=f"{cut.names[i]} (run {result.link_utilization[i]:.2f})"))
    fig.update_layout(title={"text": f"{html.escape(title)}: the {len(order)} busiest links "
                                     f"per window", "x": 0.02},
                      xaxis={"title": {"text": f"time ({unit})"}},
                      yaxis={"title": {"text": "utilisation in the window"},
                             "range": [0, 1.05 * max(1.0, float(cut.utilization.max(
                                 initial=0.0)))]},
                      height=380, margin={"t": 50})
    return fig


def _curve_figure(go, job) -> Any | None:
    rows = [r for r in job.records if r.get("busbw_GBps") is not None and "size_bytes" in r]
    if len({r["size_bytes"] for r in rows}) < 2:
        return None
    fig = go.Figure()
    series: dict[str, list] = {}
    for r in rows:
        series.setdefault(str(r.get("topology", job.name)), []).append(r)
    for name, points in series.items():
        points.sort(key=lambda r: r["size_bytes"])
        fig.add_trace(go.Scatter(
            x=[r["size_bytes"] for r in points], y=[r["busbw_GBps"] for r in points],
            mode="lines+markers", name=name,
            text=[f"{format_size(r['size_bytes'])}: {r.get('algorithm', '')}"
                  for r in points], hovertemplate="%{text}<br>%{y:.3g} GB/s"))
    fig.update_layout(title={"text": f"{html.escape(job.name)}: bus bandwidth", "x": 0.02},
                      xaxis={"type": "log", "title": {"text": "message size (bytes)"}},
                      yaxis={"type": "log", "title": {"text": "busbw (GB/s)"}}, height=400)
    return fig


def _static_heatmap(label: str, result, topology) -> str:
    from .html import _figure, _heatmap_figure

    return _figure(_heatmap_figure(label, result, topology))


_STYLE_EXTRA = """
.plot { margin: .6em 0 1.6em; border: 1px solid #eee; }
p.note { font-size: .9em; color: #555; }
div.table { overflow-x: auto; max-height: 30em; overflow-y: auto; }
div.table td { max-width: 18em; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
div.table th { cursor: pointer; white-space: nowrap; position: sticky; top: 0; }
"""

# Click a column's header to sort the table by it (numbers as numbers), again to reverse.
_SORT_SCRIPT = """<script>
document.querySelectorAll("div.table table").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.from(body.rows);
      var up = th.dataset.order !== "up"; th.dataset.order = up ? "up" : "down";
      var key = function (row) { var t = row.cells[col].dataset.v; var n = parseFloat(t);
                                 return isNaN(n) ? t : n; };
      rows.sort(function (a, b) { var x = key(a), y = key(b);
        var c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0)
                                        : (typeof x === "number" ? -1 : 1);
        return up ? c : -c; });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
</script>"""


def _table(rows: Sequence[dict], caption: str | None = None) -> str:
    """A table whose columns sort on a click; long cells are cut, their full text shown
    on hover."""
    from .html import _cell

    columns = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(f"<th title=\"sort\">{html.escape(str(c))}</th>" for c in columns)
    body = []
    for row in rows:
        cells = []
        for c in columns:
            text, number = _cell(row.get(c))
            raw = html.escape(str(row.get(c, "")), quote=True)
            kind = ' class="num"' if number else ""
            cells.append(f'<td{kind} data-v="{raw}" title="{raw}">{text}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return (f'<div class="table"><table>{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def write_interactive_report(path, outcome, *, overwrite: bool = True,
                             windows: int = WINDOWS, per_job: int = 1) -> Path:
    """Write the interactive report of a scenario outcome (its runs recorded their
    timelines): the records, then per job its table, its busbw curve when it swept sizes,
    and for its last ``per_job`` results the network over time and the busiest links.
    Returns the path."""
    go = _require_plotly()
    from ..outputs import write_atomic
    from .heatmap import scenario_results
    from .html import _STYLE

    scenario = outcome.scenario
    parts = []
    if scenario.description:
        parts.append(f"<p>{html.escape(scenario.description)}</p>")
    parts.append(f'<p class="note">Each machine is drawn as in netsim\'s heatmaps (a link '
                 f'a-&gt;b on the right-hand side of its direction of travel); the slider '
                 f'and the Play button step through {windows} equal time windows of the '
                 f'run; hover on the marker in the middle of a link for its numbers. Curves '
                 f'zoom with a drag and reset with a double click.</p>')
    parts.append(_table(outcome.records, caption="all results (click a column to sort)"))
    inlined = False

    def plot(fig) -> str:
        nonlocal inlined
        text = fig.to_html(full_html=False, include_plotlyjs=not inlined,
                           auto_play=False, config={"displaylogo": False,
                                                    "responsive": True})
        inlined = True
        return f'<div class="plot">{text}</div>'

    for job, picked in zip(outcome.jobs, scenario_results(outcome, per_job)):
        parts.append(f"<h2>job {html.escape(job.name)} ({html.escape(job.kind)})</h2>")
        parts.append(_table(job.records))
        curve = _curve_figure(go, job)
        if curve is not None:
            parts.append(plot(curve))
        for label, result, topology in picked:
            name = f"{label} on {topology.name}"
            parts.append(f"<h3>{html.escape(name)}: makespan "
                         f"{html.escape(format_time(result.makespan))}</h3>")
            try:
                figures = [network_figure(topology, result, windows=windows, title=name),
                           busiest_links_figure(topology, result, windows=windows,
                                                title=name)]
            except InputError as err:       # no timeline (e.g. the packet model): still drawn
                parts.append(f'<p class="note">Not over time: {html.escape(str(err))}. '
                             f'The whole run:</p>' + _static_heatmap(label, result, topology))
                continue
            parts += [plot(fig) for fig in figures]
    title = f"netsim scenario {scenario.name}"
    page = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{_STYLE}{_STYLE_EXTRA}</style>\n"
            f"</head>\n<body>\n<h1>{html.escape(title)}</h1>\n" + "\n".join(parts)
            + f"\n{_SORT_SCRIPT}\n</body>\n</html>\n")
    return write_atomic(path, page, overwrite)
