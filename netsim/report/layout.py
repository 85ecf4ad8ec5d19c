"""Deterministic drawing positions for every topology family, and the shape of each link.

Positions are in *layout units*: neighbouring grid nodes and neighbouring hosts are 1 apart,
x to the right and y upwards (matplotlib's convention).

* mesh / torus / ring of several dims: coordinates ``(row, col)`` with col on x and row
  downwards; a third (fourth) dimension is tiled as copies side by side (one above the other);
  a ring or a 1-D grid is a row.
* ``ring`` without coordinates: a circle; ``full_mesh``: a circle.
* layered families (fat tree, leaf-spine, nvswitch, anything whose nodes carry a ``tier``
  attribute or ``(tier, x)`` coordinates): tiers as rows, hosts / GPUs at the bottom.
* anything else: the nodes' own 2-D coordinates read as ``(row, col)``, else a networkx
  ``spring_layout`` with a fixed seed.

:func:`link_paths` turns every directed link into a polyline: each direction of a cable is
drawn on the right-hand side of its direction of travel (so a->b and b->a are two parallel
lines), parallel links (planes) further out; a torus wrap-around link leaves the grid
towards a dashed "ghost" copy of its far end and re-enters at the opposite edge from a ghost of
its near end. No matplotlib here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Layout", "LinkGeometry", "layout", "node_positions", "link_geometry", "link_paths",
           "wrap_links", "lane_width"]

_GRID_FAMILIES = {"mesh", "torus"}
_LAYERED_FAMILIES = {"fat_tree", "leaf_spine", "nvswitch"}


@dataclass(frozen=True)
class Layout:
    """Node positions (``positions[i] = (x, y)``, layout units), the kind of picture
    (``'grid'``, ``'layered'``, ``'circle'`` or ``'generic'``), the radius (layout units)
    at which links stop short of a node's centre, and ``(x, y, text)`` captions to write
    (which tile of a 3-D grid is which)."""

    positions: np.ndarray
    kind: str
    node_radius: float
    notes: tuple[tuple[float, float, str], ...] = ()


def layout(topology) -> Layout:
    """The deterministic :class:`Layout` of ``topology`` (same input, same picture)."""
    family = topology.family
    if family in _GRID_FAMILIES or (family == "ring" and _all_coords(topology)):
        positions = _grid_positions(topology)
        return Layout(positions, "grid", 0.2, _tile_notes(topology, positions))
    if family in _LAYERED_FAMILIES or _has_tiers(topology):
        pos = _layered_positions(topology)
        return Layout(pos, "layered", 0.28 if family == "nvswitch" else 0.3)
    if family in ("ring", "full_mesh"):
        return Layout(_circle_positions(topology), "circle", 0.2)
    if _all_coords(topology, length=2):
        return Layout(_scaled(_coord_positions(topology), topology), "generic", 0.2)
    return Layout(_spring_positions(topology), "generic", 0.2)


def node_positions(topology) -> np.ndarray:
    """``(num_nodes, 2)`` array of x, y drawing positions (layout units)."""
    return layout(topology).positions


# -- positions per family ------------------------------------------------------------------
def _all_coords(topology, length: int | None = None) -> bool:
    coords = topology.coords
    return bool(coords) and all(c is not None and (length is None or len(c) == length)
                                for c in coords)


def _has_tiers(topology) -> bool:
    return all("tier" in attrs for attrs in topology.node_attrs)


def _grid_positions(topology) -> np.ndarray:
    """(row, col[, slab, slab-row]) coordinates: col -> x, row -> -y, higher dims tiled
    with room between tiles for the ghosts of wrap-around links."""
    coords = np.asarray([c if c is not None else (i,) for i, c in enumerate(topology.coords)],
                        dtype=float)
    if coords.ndim != 2:
        coords = np.arange(topology.num_nodes, dtype=float)[:, None]
    coords = np.pad(coords, ((0, 0), (0, max(0, 4 - coords.shape[1]))))
    if topology.family == "ring" or np.count_nonzero(np.ptp(coords, axis=0)) == 1:
        flat = coords.max(axis=1) if coords.shape[0] else coords[:, 0]
        return np.column_stack([flat, np.zeros_like(flat)])
    extent = coords.max(axis=0) + (2.5 if topology.family == "torus" else 1.5)
    x = coords[:, 1] + coords[:, 2] * extent[1]
    y = -(coords[:, 0] + coords[:, 3] * extent[0])
    return np.column_stack([x, y])


def _tile_notes(topology, positions: np.ndarray) -> tuple[tuple[float, float, str], ...]:
    """'dim 2 = k' above each tile of a grid with more than 2 dims."""
    coords = _grid_coords(topology)
    if coords is None or coords.shape[1] < 3 or np.ptp(coords[:, 2:], axis=0).max() == 0:
        return ()
    notes = []
    for key in sorted({tuple(c[2:]) for c in coords}):
        members = positions[(coords[:, 2:] == key).all(axis=1)]
        label = ", ".join(f"dim {d + 2} = {int(v)}" for d, v in enumerate(key))
        notes.append((float(members[:, 0].mean()), float(members[:, 1].max()) + 1.45, label))
    return tuple(notes)


def _layered_positions(topology) -> np.ndarray:
    """Tiers as rows (tier 0 at the bottom), x from the generator's ``(tier, x)`` coords."""
    n = topology.num_nodes
    tiers = np.asarray([attrs.get("tier", c[0] if c else 0) for attrs, c
                        in zip(topology.node_attrs, topology.coords)], dtype=float)
    if topology.family == "nvswitch" and not _has_tiers(topology):
        tiers = topology.is_switch.astype(float)
    xs = np.asarray([c[1] if c is not None and len(c) > 1 else math.nan
                     for c in topology.coords], dtype=float)
    for tier in np.unique(tiers):  # nodes without x: spread evenly over their tier
        missing = (tiers == tier) & np.isnan(xs)
        xs[missing] = np.arange(np.count_nonzero(missing), dtype=float)
    width = float(np.ptp(xs)) + 1 if n else 1.0
    levels = max(1, int(np.ptp(tiers)) if n else 1)
    gap = max(4.0 if topology.family == "nvswitch" else 2.0, width / (2.2 * (levels + 1)))
    return np.column_stack([xs, (tiers - tiers.min()) * gap])


def _circle_positions(topology) -> np.ndarray:
    """Nodes clockwise from the top on a circle whose neighbours are about 1 apart."""
    n = topology.num_nodes
    radius = max(1.0, n / (2 * math.pi))
    angle = math.pi / 2 - 2 * math.pi * np.arange(n) / max(n, 1)
    return np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])


def _coord_positions(topology) -> np.ndarray:
    coords = np.asarray(topology.coords, dtype=float)
    return np.column_stack([coords[:, 1], -coords[:, 0]])


def _spring_positions(topology) -> np.ndarray:
    """networkx ``spring_layout`` with seed 0 on the undirected graph (deterministic)."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(range(topology.num_nodes))
    graph.add_edges_from(zip(topology.link_src.tolist(), topology.link_dst.tolist()))
    placed = nx.spring_layout(graph, seed=0)
    return _scaled(np.asarray([placed[i] for i in range(topology.num_nodes)]), topology)


def _scaled(pos: np.ndarray, topology) -> np.ndarray:
    """Scale so that the median distance between linked nodes is 1 layout unit."""
    if topology.num_links == 0:
        return pos
    d = np.linalg.norm(pos[topology.link_src] - pos[topology.link_dst], axis=1)
    d = d[d > 0]
    return pos / float(np.median(d)) if d.size else pos


# -- link geometry ------------------------------------------------------------------------
def _grid_coords(topology) -> np.ndarray | None:
    if topology.family not in _GRID_FAMILIES or not _all_coords(topology):
        return None
    coords = np.asarray(topology.coords, dtype=float)
    return coords if coords.ndim == 2 else None


def wrap_links(topology) -> np.ndarray:
    """Bool per link: a torus wrap-around link (flagged, or a grid link whose coordinates
    differ by more than 1, as in a topology rebuilt from a result file)."""
    wrap = np.asarray(topology.wrap, dtype=bool).copy()
    coords = _grid_coords(topology)
    if coords is not None and topology.num_links:
        step = np.abs(coords[topology.link_src] - coords[topology.link_dst]).max(axis=1)
        wrap |= step > 1.5
    return wrap


def _link_dims(topology) -> np.ndarray:
    """Grid dimension of every link (from ``dim``, else from the coordinates), -1 if none."""
    dims = np.asarray(topology.dim, dtype=np.int64).copy()
    coords = _grid_coords(topology)
    if coords is not None and topology.num_links:
        diff = np.abs(coords[topology.link_src] - coords[topology.link_dst])
        dims = np.where(dims >= 0, dims, diff.argmax(axis=1))
    return dims


def _link_signs(topology, wrap: np.ndarray) -> np.ndarray:
    """+1 / -1 per grid link: the way it goes along its dimension (``sign``, else coords)."""
    signs = np.asarray(topology.sign, dtype=float).copy()
    coords = _grid_coords(topology)
    if coords is not None and topology.num_links:
        diff = coords[topology.link_dst] - coords[topology.link_src]
        step = np.sign(diff[np.arange(topology.num_links), np.abs(diff).argmax(axis=1)])
        signs = np.where(signs != 0, signs, np.where(wrap, -step, step))
    return signs


def _band(topology) -> tuple[np.ndarray, np.ndarray]:
    """Per link: its lane (0, 1, ...) on the right of its direction and the pair's lane count."""
    lanes = np.asarray(topology.plane, dtype=float)
    planes = np.zeros(topology.num_links)
    for (a, b), ids in topology.pair_links.items():
        planes[ids] = max(len(ids), len(topology.pair_links.get((b, a), ())))
    return lanes, planes


def lane_width(planes: float) -> float:
    """Distance (layout units) between the parallel lines of a pair with ``planes`` planes."""
    return min(0.1, 0.34 / (2 * max(planes, 1)))


@dataclass(frozen=True)
class LinkGeometry:
    """``paths[link]``: the polylines (layout units) that draw the link, arrowhead on the
    last; ``ghosts``: ``(x, y, node)`` rows, dashed copies of ``node`` placed beyond a torus
    edge where its wrap-around links arrive."""

    paths: list[list[np.ndarray]]
    ghosts: list[tuple[float, float, int]]


def link_geometry(topology, lay: Layout | None = None) -> LinkGeometry:
    """How to draw every link; see :func:`link_paths` and :class:`LinkGeometry`."""
    lay = layout(topology) if lay is None else lay
    pos, radius = lay.positions, lay.node_radius
    grid = lay.kind == "grid"
    wrap = wrap_links(topology) if grid else np.zeros(topology.num_links, bool)
    dims = _link_dims(topology) if grid else np.full(topology.num_links, -1)
    signs = _link_signs(topology, wrap) if grid else np.zeros(topology.num_links)
    lanes, planes = _band(topology)
    paths, ghosts = [], {}
    for lid in range(topology.num_links):
        s, d = int(topology.link_src[lid]), int(topology.link_dst[lid])
        offset = (lanes[lid] + 0.5) * lane_width(planes[lid])
        if dims[lid] >= 2:
            travel = _TILE_DIRECTIONS[min(int(dims[lid]), 3)] * signs[lid]
            paths.append(_tile_stubs(pos[s], pos[d], travel, offset, radius))
        elif wrap[lid]:
            pieces, ends = _stubs(pos[s], pos[d], offset, radius)
            paths.append(pieces)
            ghosts[tuple(np.round(ends[0], 6))] = d
            ghosts[tuple(np.round(ends[1], 6))] = s
        else:
            paths.append([_straight(pos[s], pos[d], offset, radius)])
    return LinkGeometry(paths, [(x, y, n) for (x, y), n in sorted(ghosts.items())])


def link_paths(topology, lay: Layout | None = None) -> list[list[np.ndarray]]:
    """The pieces of every link: a list of ``(k, 2)`` polylines (layout units) per link.

    A link is one straight piece on the right-hand side of its direction of travel, in lane
    ``plane`` of its pair, stopping ``node_radius`` short of both nodes. A torus wrap-around
    link is two stubs: one from its source to a ghost copy of its destination beyond the
    grid's edge, one from a ghost of its source beyond the opposite edge into the
    destination. Grids of 3 or 4 dims are tiled (dim 2 side by side, dim 3 stacked); a link
    along dim 2 is a short stub out of its source towards the upper right (+) or lower left
    (-) and one into its destination from the opposite side (dim 3: upper / lower left).
    """
    return link_geometry(topology, lay).paths


def _frame(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Unit direction p->q, its right-hand normal and the distance."""
    d = q - p
    length = float(np.hypot(*d))
    u = d / length if length > 0 else np.array([1.0, 0.0])
    return u, np.array([u[1], -u[0]]), length


def _straight(p, q, offset: float, radius: float) -> np.ndarray:
    u, n, length = _frame(p, q)
    trim = min(radius, 0.45 * length)
    return np.array([p + u * trim + n * offset, q - u * trim + n * offset])


def _stubs(p, q, offset: float, radius: float):
    """Out of ``p`` away from ``q`` (the way the ring continues) to a ghost of ``q`` one
    unit beyond, and from a ghost of ``p`` one unit before ``q`` into ``q``; both on the
    right-hand side of that direction of travel. Returns (pieces, ghost centres)."""
    u, _, _ = _frame(p, q)
    w = -u
    n = np.array([w[1], -w[0]])
    ghost_q, ghost_p = p + w, q - w
    leave = _straight(p, ghost_q, 0.0, radius) + n * offset
    enter = _straight(ghost_p, q, 0.0, radius) + n * offset
    return [leave, enter], (ghost_q, ghost_p)


#: Screen direction of the + way along grid dimensions 2 and 3 (tiles side by side/stacked).
_TILE_DIRECTIONS = {2: np.array([0.7071, 0.7071]), 3: np.array([-0.7071, 0.7071])}
TILE_STUB = 0.3   # layout units


def _tile_stubs(p, q, travel: np.ndarray, offset: float, radius: float) -> list[np.ndarray]:
    """A link to the same place in another tile: a short diagonal stub out of ``p`` along
    ``travel`` and one into ``q`` from the opposite side, right of the direction of travel."""
    n = np.array([travel[1], -travel[0]]) * offset
    leave = np.array([p + travel * radius, p + travel * (radius + TILE_STUB)]) + n
    enter = np.array([q - travel * (radius + TILE_STUB), q - travel * radius]) + n
    return [leave, enter]
