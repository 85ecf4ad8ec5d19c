"""Placement maps: which rank (and which group of ranks) sits on which chip.

>>> from netsim.topology import mesh
>>> topo = mesh((4, 4))
>>> placement = list(range(16))
>>> groups = [r // 4 for r in range(16)]        # four tensor-parallel groups of 4
>>> draw_placement_map(topo, placement, groups, "groups.png")    # doctest: +SKIP

matplotlib is imported inside the drawing functions only.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InputError
from .figure import draw_nodes, figure_for, save_figure
from .layout import layout, link_geometry

__all__ = ["rank_groups", "draw_placement_map"]

_UNPLACED = "#ffffff"
_SWITCH = "#5f6b7a"


def rank_groups(groups: Any, num_ranks: int) -> list[Any]:
    """Group id of every rank from a per-rank sequence of ids, a mapping group -> ranks,
    or a sequence of rank lists (group id = position). Ranks in no group get None."""
    if isinstance(groups, Mapping):
        pairs = groups.items()
    elif len(groups) and not isinstance(groups[0], (str, bytes)) and \
            isinstance(groups[0], Sequence | np.ndarray):
        pairs = enumerate(groups)
    else:
        if len(groups) != num_ranks:
            raise InputError(f"groups gives {len(groups)} ids for {num_ranks} ranks")
        return list(groups)
    out: list[Any] = [None] * num_ranks
    for gid, ranks in pairs:
        for rank in ranks:
            if not 0 <= int(rank) < num_ranks:
                raise InputError(f"group {gid!r}: rank {rank} is not one of the "
                                 f"{num_ranks} placed ranks")
            if out[int(rank)] is not None:
                raise InputError(f"rank {rank} is in groups {out[int(rank)]!r} and {gid!r}")
            out[int(rank)] = gid
    return out


def _nodes(topology, placement: Sequence) -> list[int]:
    nodes = [topology.node(p) if isinstance(p, str) else int(p) for p in placement]
    bad = [n for n in nodes if not 0 <= n < topology.num_nodes]
    if bad:
        raise InputError(f"placement names node {bad[0]}, not a node of {topology.name!r}")
    if len(set(nodes)) != len(nodes):
        raise InputError("placement puts two ranks on the same node")
    return nodes


def draw_placement_map(topology, placement: Sequence, groups: Any, path=None, *,
                       title: str | None = None, overwrite: bool = True, ax=None):
    """Draw ``topology`` with each placed chip filled with its group's colour and labelled
    with the group id (and the rank when it fits); unplaced endpoints are white, links
    light grey. ``placement[r]`` is the node (index or name) of rank r; ``groups`` see
    :func:`rank_groups`. Saves to ``path`` and returns node name -> (group id, RGBA
    colour) for placed ranks.

    In a notebook: with ``ax=`` (matplotlib axes) it draws there (the legend goes inside
    ``ax``), or with neither ``ax`` nor ``path`` on a new figure, and returns the matplotlib
    Figure (saved too if ``path`` is given).

    >>> from netsim.topology import mesh
    >>> fig = draw_placement_map(mesh((2, 2)), [0, 1, 2, 3], [0, 0, 1, 1])
    >>> type(fig).__name__, fig.axes[0].get_title()
    ('Figure', 'mesh-2x2: placement of 4 ranks by group')
    """
    from matplotlib.colors import to_rgba

    from .figure import _font_size, canvas_on

    nodes = _nodes(topology, placement)
    gids = rank_groups(groups, len(nodes))
    colors = _group_colors(gids)
    faces: list[Any] = [_SWITCH if s else _UNPLACED for s in topology.is_switch]
    texts: list[str | None] = [None] * topology.num_nodes
    lay = layout(topology)
    geometry = link_geometry(topology, lay)
    canvas = figure_for(lay, [f"{len(nodes)} ranks in {len(colors)} groups; chip text: "
                              f"group id, then rank"], right=1.6, geometry=geometry) \
        if ax is None else canvas_on(ax, lay, geometry)
    labels = {node: (f"{'-' if gid is None else gid}", f"r{rank}")
              for rank, (node, gid) in enumerate(zip(nodes, gids))}
    # both lines where a legible font fits them (the font shrinks to the chip); else the
    # group alone, and the caption says so instead of promising ranks it cannot show
    both = _font_size([line for pair in labels.values() for line in pair], lay.node_radius,
                      canvas.scale, 9.0) >= 4.5
    for rank, (node, gid) in enumerate(zip(nodes, gids)):
        faces[node] = colors.get(gid, _UNPLACED)
        group, name = labels[node]
        texts[node] = f"{group}\n{name}" if both else group
    if ax is None and not both:
        caption = canvas.fig.texts[-1]
        caption.set_text(caption.get_text().replace(
            "chip text: group id, then rank", "chip text: group id (ranks too small to print; "
            "the JSON output lists each rank's chip)"))
    _draw_links(canvas.ax, geometry)
    draw_nodes(canvas.ax, topology, lay, canvas.scale, faces=faces, texts=texts,
               ghosts=geometry.ghosts)
    _legend(canvas, colors)
    canvas.ax.set_title(title or f"{topology.name}: placement of {len(nodes)} ranks by group",
                        fontsize=11)
    if path is not None:
        save_figure(canvas.fig, path, overwrite)
    if ax is not None or path is None:
        return canvas.fig
    return {topology.node_names[n]: (g, to_rgba(faces[n])) for n, g in zip(nodes, gids)}


def _group_colors(gids: list[Any]) -> dict[Any, tuple[float, ...]]:
    """A qualitative colour per distinct group id, in order of first appearance."""
    from matplotlib import colormaps

    order = list(dict.fromkeys(g for g in gids if g is not None))
    palette = colormaps["tab10" if len(order) <= 10 else "tab20"]
    return {g: tuple(palette(k % palette.N)) for k, g in enumerate(order)}


def _draw_links(ax, geometry) -> None:
    from matplotlib.collections import LineCollection

    pieces = [piece for pieces in geometry.paths for piece in pieces]
    ax.add_collection(LineCollection(pieces, colors="#c8c8c8", linewidths=0.8, zorder=1))


def _legend(canvas, colors: dict[Any, tuple[float, ...]]) -> None:
    from matplotlib.patches import Patch

    if not colors or len(colors) > 24:
        return
    handles = [Patch(facecolor=c, edgecolor="#333333", label=f"group {g}")
               for g, c in colors.items()]
    if canvas.side is None:                  # the caller's axes: the legend goes inside them
        canvas.ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0),
                         fontsize=8, frameon=False)
        return
    x, y, _, h = canvas.side
    canvas.fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(x - 0.01, y + h),
                      fontsize=8, frameon=False)
