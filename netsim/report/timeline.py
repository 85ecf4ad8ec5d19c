"""Runs over time: the utilisation of the hottest links (a strip of step plots) and, for small
runs, a Gantt chart of every rank's sends and computes.

>>> from netsim.topology import ring
>>> from netsim.engine import simulate
>>> from netsim.schedule.traffic import shift
>>> topo = ring(4)
>>> result = simulate(topo, shift(4, 1e6), record_timeline=True)
>>> draw_link_timeline(result, topo, "links.png")            # doctest: +SKIP

matplotlib is imported inside the drawing functions only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from .figure import new_figure, save_figure

__all__ = ["LinkTimeline", "link_timeline", "draw_link_timeline", "gantt_bars", "draw_gantt",
           "time_unit", "GANTT_MAX_RANKS", "GANTT_MAX_OPS"]

GANTT_MAX_RANKS = 64
GANTT_MAX_OPS = 5000
_COMPUTE = "#d9d9d9"   # compute bars: light grey, hatched (sends take the colours)


def time_unit(seconds: float) -> tuple[str, float]:
    """(unit, factor) to show times up to ``seconds``: ``('us', 1e-6)``."""
    for factor, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if seconds >= factor:
            return unit, factor
    return "ns", 1e-9


@dataclass(frozen=True)
class LinkTimeline:
    """Step functions of link utilisation: ``edges`` (s, length k+1) and ``values``
    (``(len(links), k)``, fraction of each link's bandwidth, 0 in idle gaps) of ``links``."""

    links: tuple[int, ...]
    edges: np.ndarray
    values: np.ndarray


def link_timeline(result, links: Sequence[int]) -> LinkTimeline:
    """Utilisation over time of the links ``links`` (ids) from ``result.timeline``."""
    if result.timeline is None:
        raise InputError("the result has no timeline: simulate(..., record_timeline=True)")
    links = tuple(int(i) for i in links)
    column = {lid: k for k, lid in enumerate(links)}
    edges, rows = [0.0], []
    for t0, t1, ids, rates in result.timeline:
        if t0 > edges[-1]:                       # a gap with nothing transferring
            edges.append(float(t0))
            rows.append(np.zeros(len(links)))
        row = np.zeros(len(links))
        for lid, rate in zip(np.asarray(ids).tolist(), np.asarray(rates).tolist()):
            if lid in column:
                row[column[lid]] = rate / result.link_bandwidth[lid]
        edges.append(float(t1))
        rows.append(row)
    if result.makespan > edges[-1]:
        edges.append(float(result.makespan))
        rows.append(np.zeros(len(links)))
    values = np.asarray(rows).T if rows else np.zeros((len(links), 0))
    return LinkTimeline(links, np.asarray(edges), values)


def _hottest_links(result, top: int) -> list[int]:
    """Ids of the ``top`` links with the highest utilisation (ties: lower id first)."""
    util = result.link_utilization
    order = np.argsort(-util, kind="stable")[:max(int(top), 0)]
    return [int(i) for i in order if util[i] > 0]


def draw_link_timeline(result, topology, path=None, top: int = 8, *,
                       title: str | None = None, overwrite: bool = True, ax=None):
    """One strip per link for the ``top`` most utilised links: their utilisation (0..1 of
    the link's bandwidth) over the run as a filled step plot. Needs a result simulated with
    ``record_timeline=True``. Saves to ``path`` and returns the :class:`LinkTimeline` drawn.

    In a notebook: with ``ax=`` (matplotlib axes) the strips are stacked bands of that one
    axes (busiest on top, each band's height 0..1), or with neither ``ax`` nor ``path`` on a
    new figure; either way it returns the matplotlib Figure (saved too if ``path``).

    >>> from netsim.topology import ring
    >>> from netsim.engine import simulate
    >>> from netsim.schedule.traffic import shift
    >>> run = simulate(ring(4), shift(4, 1e6), record_timeline=True)
    >>> fig = draw_link_timeline(run, ring(4), top=2)
    >>> type(fig).__name__, len(fig.axes)
    ('Figure', 2)
    """
    links = _hottest_links(result, top)
    data = link_timeline(result, links)
    if not links:
        raise InputError("no link carried any bytes: nothing to draw")
    unit, factor = time_unit(float(data.edges[-1]))
    names = topology.link_names if topology is not None else result.link_names
    default = (f"{result.topology}: utilisation of the {len(links)} busiest links "
               f"(1 = the link's full bandwidth)")
    if ax is not None:
        _link_bands(ax, data, [names[lid] for lid in links], factor, unit)
        ax.set_title(title or default, fontsize=10)
        fig = ax.figure
    else:
        fig = new_figure(8.0, 0.9 + 0.55 * len(links))
        axes = fig.subplots(len(links), 1, sharex=True, squeeze=False)[:, 0]
        fig.subplots_adjust(left=0.3, right=0.97, top=1 - 0.45 / (0.9 + 0.55 * len(links)),
                            bottom=0.5 / (0.9 + 0.55 * len(links)), hspace=0.15)
        for strip, lid, row in zip(axes, links, data.values):
            strip.stairs(row, data.edges / factor, fill=True, color="#3b528b", alpha=0.85)
            strip.set_ylim(0, 1.05)
            strip.set_yticks([0, 1])
            strip.tick_params(labelsize=7)
            strip.set_ylabel(f"{names[lid]}\nmean {result.link_utilization[lid]:.2f}",
                             rotation=0, ha="right", va="center", fontsize=8)
            strip.grid(axis="x", color="#dddddd", linewidth=0.5)
        axes[-1].set_xlabel(f"time ({unit})")
        axes[-1].set_xlim(0, data.edges[-1] / factor)
        fig.suptitle(title or default, fontsize=10)
    if path is not None:
        save_figure(fig, path, overwrite)
    return fig if ax is not None or path is None else data


def _link_bands(ax, data: LinkTimeline, names: Sequence[str], factor: float,
                unit: str) -> None:
    """The strips of :func:`draw_link_timeline` as bands of one axes: link k's band spans
    y in [k, k + 1) (axis inverted, busiest on top), utilisation u drawn 0.9 u high."""
    for k, row in enumerate(data.values):
        base = k + 0.95
        ax.stairs(base - 0.9 * row, data.edges / factor, baseline=base, fill=True,
                  color="#3b528b", alpha=0.85)
        ax.axhline(base, color="#cccccc", linewidth=0.5)
    ax.set_ylim(len(names), 0)
    ax.set_yticks([k + 0.5 for k in range(len(names))], list(names), fontsize=7)
    ax.set_xlim(0, data.edges[-1] / factor)
    ax.set_xlabel(f"time ({unit})")
    ax.grid(axis="x", color="#dddddd", linewidth=0.5)


# -- Gantt chart ------------------------------------------------------------------------------
@dataclass(frozen=True)
class GanttBar:
    """One bar: ``rank`` row, ``lane`` within the row, start/finish (s), ``kind``
    ('send' or 'compute'), the op id, its tag ('' if none) and, for a send, its
    destination rank (-1 otherwise)."""

    rank: int
    lane: int
    start: float
    finish: float
    kind: str
    op: int
    tag: str
    dst: int


def gantt_bars(result, schedule) -> list[GanttBar]:
    """Sends (on the sender's row) and computes as bars; overlapping bars of one rank get
    separate lanes (greedy interval partitioning)."""
    from ..schedule import COMPUTE, SEND

    bars: list[GanttBar] = []
    lane_ends: dict[int, list[float]] = {}
    ops = [i for i in range(schedule.num_ops) if schedule.kind[i] in (SEND, COMPUTE)]
    ops.sort(key=lambda i: (result.op_start[i], i))
    for i in ops:
        rank, start, finish = int(schedule.src[i]), float(result.op_start[i]), \
            float(result.op_finish[i])
        ends = lane_ends.setdefault(rank, [])
        lane = next((k for k, end in enumerate(ends) if end <= start), len(ends))
        ends[lane:lane + 1] = [finish]
        send = schedule.kind[i] == SEND
        tag = schedule.tags[schedule.tag[i]] if schedule.tag[i] >= 0 else ""
        bars.append(GanttBar(rank, lane, start, finish, "send" if send else "compute", i, tag,
                             int(schedule.dst[i]) if send else -1))
    return bars


def _check_small(schedule) -> None:
    if schedule.num_ranks > GANTT_MAX_RANKS or schedule.num_ops > GANTT_MAX_OPS:
        raise InputError(f"a Gantt chart is for small runs (at most {GANTT_MAX_RANKS} ranks "
                         f"and {GANTT_MAX_OPS} ops); this one has {schedule.num_ranks} ranks "
                         f"and {schedule.num_ops} ops")


def _rank_labels(schedule, placement, topology) -> list[str]:
    labels = []
    for r in range(schedule.num_ranks):
        node = None if placement is None or r >= len(placement) else placement[r]
        if node is not None and topology is not None and not isinstance(node, str):
            node = topology.node_names[int(node)]
        labels.append(f"rank {r}" + (f" @ {node}" if node is not None else ""))
    return labels


def draw_gantt(result, schedule, placement, path=None, *, topology=None,
               title: str | None = None, overwrite: bool = True, ax=None):
    """A row per rank, its sends (coloured by tag, '->d' written on wide bars) and computes
    (hatched) as bars over time, saved to ``path``; a thin line from release to start
    shows the wait for latency and overheads. ``placement`` (node index or name per rank;
    None: the result's) and ``topology`` name the rows. Small runs only (:data:`GANTT_MAX_RANKS`,
    :data:`GANTT_MAX_OPS`). Returns the bars drawn.

    In a notebook: with ``ax=`` (matplotlib axes) it draws there, or with neither ``ax``
    nor ``path`` on a new figure, and returns the matplotlib Figure (saved too if ``path``).

    >>> from netsim.topology import ring
    >>> from netsim.engine import simulate
    >>> from netsim.schedule.traffic import shift
    >>> sends = shift(4, 1e6)
    >>> fig = draw_gantt(simulate(ring(4), sends), sends, None)
    >>> type(fig).__name__, len(fig.axes[0].get_yticks())
    ('Figure', 4)
    """
    _check_small(schedule)
    placement = result.placement if placement is None else placement
    bars = gantt_bars(result, schedule)
    lanes = {r: 1 + max((b.lane for b in bars if b.rank == r), default=0)
             for r in range(schedule.num_ranks)}
    unit, factor = time_unit(max(float(result.makespan), 1e-12))
    notebook = ax is not None or path is None
    if ax is None:
        height = 1.2 + 0.28 * sum(lanes.values())
        fig = new_figure(9.0, height)
        ax = fig.add_axes((0.16, 0.6 / height, 0.66, 1 - 1.0 / height))
    fig = ax.figure
    tops = _row_tops(lanes)
    colors = _tag_colors(bars)
    for bar in bars:
        _draw_bar(ax, bar, tops, colors, factor, result)
    for rank in range(1, schedule.num_ranks):
        ax.axhline(tops[rank], color="#cccccc", linewidth=0.6)
    ax.set_yticks([tops[r] + lanes[r] / 2 for r in range(schedule.num_ranks)],
                  _rank_labels(schedule, placement, topology), fontsize=8)
    ax.set_ylim(sum(lanes.values()), 0)
    ax.set_xlim(0, max(float(result.makespan), 1e-12) / factor * 1.01)
    ax.set_xlabel(f"time ({unit})")
    ax.grid(axis="x", color="#dddddd", linewidth=0.5)
    _gantt_legend(ax, colors, any(b.kind == "compute" for b in bars))
    ax.set_title(title or f"{result.topology}: sends and computes per rank "
                 f"(makespan {result.makespan / factor:.4g} {unit})", fontsize=10)
    if path is not None:
        save_figure(fig, path, overwrite)
    return fig if notebook else bars


def _row_tops(lanes: dict[int, int]) -> dict[int, float]:
    tops, y = {}, 0.0
    for rank in sorted(lanes):
        tops[rank] = y
        y += lanes[rank]
    return tops


def _tag_colors(bars: list[GanttBar]) -> dict[str, Any]:
    from matplotlib import colormaps

    tags = sorted({b.tag for b in bars if b.kind == "send"})
    palette = colormaps["tab10"]
    return {tag: palette(k % 10) for k, tag in enumerate(tags)}


def _draw_bar(ax, bar: GanttBar, tops, colors, factor: float, result) -> None:
    y = tops[bar.rank] + bar.lane + 0.15
    start, width = bar.start / factor, (bar.finish - bar.start) / factor
    release = float(result.op_release[bar.op]) / factor
    if release < start:
        ax.plot([release, start], [y + 0.35, y + 0.35], color="#999999", linewidth=0.8)
    if bar.kind == "compute":
        ax.broken_barh([(start, width)], (y, 0.7), facecolor=_COMPUTE, edgecolor="#555555",
                       hatch="///", linewidth=0.5)
        return
    ax.broken_barh([(start, width)], (y, 0.7), facecolor=colors[bar.tag], edgecolor="white",
                   linewidth=0.5)
    if width > 0.06 * result.makespan / factor:
        ax.text(start + width / 2, y + 0.35, f"->{bar.dst}", ha="center", va="center",
                fontsize=6, color="white")


def _gantt_legend(ax, colors: dict[str, Any], computes: bool) -> None:
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=c, label=f"send{': ' + tag if tag else ''}")
               for tag, c in colors.items()]
    if computes:
        handles.append(Patch(facecolor=_COMPUTE, edgecolor="#555555", hatch="///",
                             label="compute"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7,
              frameon=False)
