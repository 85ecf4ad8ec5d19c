"""Placement strategies: logical rank -> chip node, as pure functions of (topology, layout).

Every strategy sees the machine as a grid of cells (:func:`grid_view`): a mesh, torus or
ring is its own grid; a switched machine is viewed as rows of servers, one column per
local index: the rows are the topology's ``meta['groups']`` (a DGX cluster's nodes) or
else the endpoints behind the same best-connected switch (an NVSwitch node, a leaf).
A strategy orders the cells and hands them to ranks:

==============  ==========================================================================
row_major       rank r on cell r in C order (the last grid dimension fastest)
column_major    rank r on cell r in Fortran order (the first grid dimension fastest): on an
                8x4 Galaxy, ranks 0..7 fill column 0
snake           C order, every other row reversed (boustrophedon): consecutive ranks are
                neighbours
interleaved     row-major with the group dimension slowest: the members of a group sit
                ``ranks / degree`` cells apart (what a launcher that numbers data-parallel
                ranks fastest produces)
tiles           each group of ``group_dim`` (default: the fastest dimension of degree > 1,
                usually tp) on a rectangle, visited along a cycle when the rectangle has
                one; rectangles in snake order. ``shape`` such as ``(2, 4)`` or ``'2x4'``,
                else the most compact one that tiles the grid (on switched machines the
                one spanning the fewest servers)
hilbert         along a generalised Hilbert curve (any rectangle; 1-D or 2-D grids)
random          a seeded random permutation (``seed``)
explicit        a map read from a JSON or CSV file (``path``), see :func:`load_explicit`
==============  ==========================================================================

The simulated search (``search``) lives in :mod:`.search`, a client of the engine.

A strategy returns ``placement``: an int array, ``placement[rank]`` = node index.
"""

from __future__ import annotations

import csv
import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InputError, unknown_name
from ..topology.walks import hilbert_path, snake_cycle, snake_path
from .._inputs.jsonio import loads_json
from .._inputs.yamlio import read_text
from .layout import ParallelLayout

__all__ = ["GridView", "grid_view", "STRATEGIES", "FIXED_STRATEGIES", "register_strategy",
           "place", "why_not", "applicable_strategies", "load_explicit", "parse_shape",
           "tile_shape", "snake_walk", "cycle_walk", "hilbert_walk", "check_placement"]



# -- the machine as a grid of cells -------------------------------------------------------

@dataclass(frozen=True, eq=False)
class GridView:
    """The endpoints of a topology arranged as a grid: ``cells[coord]`` = node index.

    ``kind`` is ``'grid'`` (a mesh, torus or ring: the grid is the machine's) or
    ``'switched'`` (rows = endpoints behind one switch) or ``'flat'`` (one row).
    """

    dims: tuple[int, ...]
    cells: np.ndarray
    kind: str

    @property
    def size(self) -> int:
        return int(self.cells.size)

    @property
    def flat(self) -> np.ndarray:
        """Node index of every cell, in C order."""
        return self.cells.ravel()


def grid_view(topology) -> GridView:
    """The grid of cells the strategies walk over (see the module docstring)."""
    endpoints = np.asarray(topology.endpoints, dtype=np.int64)
    dims = topology.grid_dims
    if dims and math.prod(dims) == endpoints.size:
        return GridView(dims, endpoints.reshape(dims), "grid")
    rows = _meta_rows(topology, endpoints) or _switch_rows(topology, endpoints)
    if rows is not None and len(rows) > 1:
        cells = np.asarray(rows, dtype=np.int64)
        return GridView(cells.shape, cells, "switched")
    return GridView((1, endpoints.size), endpoints.reshape(1, -1), "flat")


def _meta_rows(topology, endpoints: np.ndarray) -> list[list[int]] | None:
    """The machine's own grouping (``meta['groups']``: endpoint indices per server), when it
    covers every endpoint with groups of one size."""
    groups = topology.meta.get("groups")
    if not groups or len({len(g) for g in groups}) != 1:
        return None
    rows = [[int(endpoints[int(i)]) for i in g] for g in groups]
    if sorted(n for r in rows for n in r) != sorted(endpoints.tolist()):
        return None
    return rows


def _switch_rows(topology, endpoints: np.ndarray) -> list[list[int]] | None:
    """Endpoints grouped by their best-connected switch (most bandwidth to it), if the
    groups are all the same size; rows ordered by their first endpoint."""
    is_switch = np.asarray(topology.is_switch, dtype=bool)
    src, dst, bw = topology.link_src, topology.link_dst, topology.bandwidth
    best: dict[int, int] = {}
    for e in endpoints.tolist():
        mask = (src == e) & is_switch[dst]
        if not mask.any():
            return None
        # Sum parallel links per switch; ties go to the lowest switch index.
        switches, inverse = np.unique(dst[mask], return_inverse=True)
        totals = np.bincount(inverse, weights=bw[mask])
        best[e] = int(switches[np.argmax(totals)])
    rows: dict[int, list[int]] = {}
    for e in endpoints.tolist():
        rows.setdefault(best[e], []).append(e)
    sizes = {len(r) for r in rows.values()}
    return list(rows.values()) if len(sizes) == 1 else None


# -- walks: orders of the cells of a grid (owned by netsim.topology.walks) -----------------

#: The placement names of the walks: ``snake`` is the boustrophedon *path*, ``cycle`` the
#: Hamiltonian cycle where one exists, ``hilbert`` the generalised Hilbert curve.
snake_walk = snake_path
cycle_walk = snake_cycle
hilbert_walk = hilbert_path


# -- tiles ---------------------------------------------------------------------------------

def parse_shape(shape: Any) -> tuple[int, ...]:
    """``'2x4'``, ``[2, 4]`` or ``(2, 4)`` -> ``(2, 4)``; a one-line error otherwise."""
    if isinstance(shape, str):
        parts = shape.lower().replace("*", "x").split("x")
    else:
        try:
            parts = list(shape)
        except TypeError:
            parts = [shape]
    try:
        out = tuple(int(p) for p in parts)
    except (TypeError, ValueError):
        out = ()
    if not out or min(out) < 1:
        raise InputError(f"tile shape must be sides such as 2x4, got {shape!r}")
    return out


def tile_shape(dims: Sequence[int], group_size: int, fewest_rows: bool = False
               ) -> tuple[int, ...] | None:
    """The most compact tile (smallest sum of sides; ties: fewest rows) of ``group_size``
    cells that tiles ``dims``, or None if there is none. ``fewest_rows`` puts the number
    of rows first (on switched machines a row is a server, and crossing servers costs)."""
    dims = tuple(dims)
    best = None
    for shape in itertools.product(*[[d for d in range(1, k + 1) if k % d == 0]
                                     for k in dims]):
        if math.prod(shape) == group_size:
            key = (shape[0] if fewest_rows else 0, sum(shape), shape)
            if best is None or key < best[0]:
                best = (key, shape)
    return None if best is None else best[1]


def _auto_shape(view: GridView, k: int) -> tuple[int, ...] | None:
    return tile_shape(view.dims, k, fewest_rows=view.kind != "grid")


def _group_dim(layout: ParallelLayout, group_dim: str | None) -> str:
    if group_dim is not None:
        layout.degree(group_dim)   # did-you-mean for unknown names
        return group_dim
    active = layout.active_dimensions()
    return active[0] if active else layout.order[0]


def _tiles_cells(view: GridView, layout: ParallelLayout, shape=None,
                 group_dim: str | None = None) -> np.ndarray:
    dim = _group_dim(layout, group_dim)
    k = layout.degree(dim)
    shape = parse_shape(shape) if shape is not None else _auto_shape(view, k)
    reason = _tile_problem(view.dims, k, shape, dim)
    if reason:
        raise InputError(f"tiles: {reason}")
    tiles_per_dim = tuple(n // s for n, s in zip(view.dims, shape))
    inner = np.stack(np.unravel_index(cycle_walk(shape), shape), axis=1)       # (k, nd)
    corners = np.stack(np.unravel_index(snake_walk(tiles_per_dim), tiles_per_dim), axis=1)
    coords = corners[:, None, :] * np.asarray(shape) + inner[None, :, :]       # (tiles, k, nd)
    tile_cells = np.ravel_multi_index(tuple(np.moveaxis(coords, -1, 0)), view.dims)
    cells = np.empty(layout.num_ranks, dtype=np.int64)
    cells[layout.group_array(dim)] = tile_cells
    return cells


def _tile_problem(dims, k: int, shape, dim: str) -> str | None:
    if shape is None:
        return (f"no rectangle of {k} cells ({dim} groups) tiles the "
                f"{'x'.join(map(str, dims))} grid")
    if len(shape) != len(dims):
        return f"tile shape {'x'.join(map(str, shape))} has {len(shape)} sides, the grid " \
               f"{'x'.join(map(str, dims))} has {len(dims)}"
    if math.prod(shape) != k:
        return f"tile shape {'x'.join(map(str, shape))} holds {math.prod(shape)} ranks, " \
               f"{dim} groups have {k}"
    if any(n % s for n, s in zip(dims, shape)):
        return f"tile shape {'x'.join(map(str, shape))} does not tile the " \
               f"{'x'.join(map(str, dims))} grid"
    return None


# -- the strategies ------------------------------------------------------------------------

def _row_major(view, layout, **_):
    return np.arange(layout.num_ranks, dtype=np.int64)


def _column_major(view, layout, **_):
    return np.arange(view.size, dtype=np.int64).reshape(view.dims).ravel(order="F")


def _snake(view, layout, **_):
    return snake_walk(view.dims)


def _interleaved(view, layout, group_dim: str | None = None, **_):
    groups = layout.group_array(_group_dim(layout, group_dim))     # (G, k)
    cells = np.empty(layout.num_ranks, dtype=np.int64)
    g, p = np.indices(groups.shape)
    cells[groups] = p * groups.shape[0] + g
    return cells


def _tiles(view, layout, shape=None, group_dim: str | None = None, **_):
    return _tiles_cells(view, layout, shape, group_dim)


def _hilbert(view, layout, **_):
    dims = tuple(k for k in view.dims if k > 1) or (1,)
    return hilbert_walk(dims)


def _random(view, layout, seed: int = 0, **_):
    return np.random.default_rng(seed).permutation(view.size).astype(np.int64)


Strategy = Callable[..., np.ndarray]
#: name -> function(view, layout, **params) returning the cell (C-order index) of each rank.
STRATEGIES: dict[str, Strategy] = {
    "row_major": _row_major, "column_major": _column_major, "snake": _snake,
    "interleaved": _interleaved, "tiles": _tiles, "hilbert": _hilbert, "random": _random,
}
#: Strategies that need no file and no simulation: the seeds of the search.
FIXED_STRATEGIES = ("row_major", "column_major", "snake", "interleaved", "tiles", "hilbert",
                    "random")


def register_strategy(name: str, function: Strategy) -> None:
    """Add a strategy: ``function(view, layout, **params)`` -> cell index per rank."""
    STRATEGIES[name] = function


def why_not(name: str, topology, layout: ParallelLayout, **params) -> str | None:
    """None if strategy ``name`` can place ``layout`` on ``topology``, else why not."""
    if name == "explicit":
        return None if params.get("path") or params.get("mapping") is not None \
            else "explicit needs a map file (path)"
    if name not in STRATEGIES:
        raise unknown_name("placement strategy", name, [*STRATEGIES, "explicit"])
    view = grid_view(topology)
    if name == "hilbert" and sum(k > 1 for k in view.dims) > 2:
        return f"hilbert needs a 1-D or 2-D grid, not {'x'.join(map(str, view.dims))}"
    if name == "tiles":
        dim = _group_dim(layout, params.get("group_dim"))
        k = layout.degree(dim)
        shape = params.get("shape")
        shape = parse_shape(shape) if shape is not None else _auto_shape(view, k)
        problem = _tile_problem(view.dims, k, shape, dim)
        return f"tiles: {problem}" if problem else None
    return None


def applicable_strategies(topology, layout: ParallelLayout, names: Sequence[str] | None = None,
                          **params) -> list[str]:
    """The strategies of ``names`` (default :data:`FIXED_STRATEGIES`) that apply here."""
    return [n for n in (names or FIXED_STRATEGIES) if why_not(n, topology, layout, **params)
            is None]


def place(name: str, topology, layout: ParallelLayout, **params) -> np.ndarray:
    """``placement[rank]`` = node index of strategy ``name`` (see the module docstring).

    ``params``: ``seed`` (random), ``shape`` and ``group_dim`` (tiles, interleaved),
    ``path`` or ``mapping`` (explicit). Raises a one-line InputError when the layout does
    not fit the machine or the strategy cannot place it.

    >>> from netsim.topology import mesh
    >>> from netsim.placement.layout import ParallelLayout
    >>> place("column_major", mesh((2, 4)), ParallelLayout(tp=2, dp=4)).tolist()
    [0, 4, 1, 5, 2, 6, 3, 7]
    """
    layout.check_fits(topology.num_endpoints, repr(topology.name))
    if name == "explicit":
        mapping = params.get("mapping")
        if mapping is None:
            if not params.get("path"):
                raise InputError("explicit placement needs a map file (path)")
            return load_explicit(params["path"], topology, layout)
        return check_placement(mapping, topology, layout, source="explicit placement")
    reason = why_not(name, topology, layout, **params)
    if reason:
        raise InputError(reason)
    view = grid_view(topology)
    cells = np.asarray(STRATEGIES[name](view, layout, **params), dtype=np.int64)
    return view.flat[cells]


# -- explicit maps -------------------------------------------------------------------------

def _node_of(value: Any, topology, where: str) -> int:
    if isinstance(value, str) and not value.strip().lstrip("-").isdigit():
        if value not in topology.node_index:
            raise InputError(f"{where}: {value!r} is not a node of {topology.name!r}")
        return topology.node_index[value]
    try:
        node = int(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: expected a node name or index, got {value!r}") from None
    if not 0 <= node < topology.num_nodes:
        raise InputError(f"{where}: node {node} is not in 0..{topology.num_nodes - 1}")
    return node


def check_placement(mapping: Any, topology, layout: ParallelLayout,
                    source: str = "placement") -> np.ndarray:
    """A list (position = rank) or a {rank: node} dict of node names or indices ->
    validated ``placement`` array; every error is one line naming ``source``."""
    if isinstance(mapping, dict):
        items = []
        for key, value in mapping.items():
            try:
                items.append((int(key), value))
            except (TypeError, ValueError):
                raise InputError(f"{source}: rank {key!r} is not an integer") from None
    else:
        items = list(enumerate(mapping))
    n = layout.num_ranks
    placement = np.full(n, -1, dtype=np.int64)
    owner: dict[int, int] = {}
    endpoints = set(np.asarray(topology.endpoints).tolist())
    for rank, value in items:
        where = f"{source}: rank {rank}"
        if not 0 <= rank < n:
            raise InputError(f"{where}: not a rank of the layout (0..{n - 1})")
        if placement[rank] >= 0:
            raise InputError(f"{where}: placed twice")
        node = _node_of(value, topology, where)
        if node not in endpoints:
            raise InputError(f"{where}: node {topology.node_names[node]!r} is a switch, not "
                             f"an endpoint")
        if node in owner:
            raise InputError(f"{where}: node {topology.node_names[node]!r} already holds "
                             f"rank {owner[node]}")
        owner[node] = rank
        placement[rank] = node
    missing = np.flatnonzero(placement < 0)
    if missing.size:
        raise InputError(f"{source}: no node for rank {int(missing[0])} (the layout has {n} "
                         f"ranks)")
    return placement


def load_explicit(path: str | Path, topology, layout: ParallelLayout) -> np.ndarray:
    """Read a rank -> node map and validate it against the machine and the layout.

    JSON: a list of nodes (position = rank), ``{"placement": [...]}`` or
    ``{"<rank>": node, ...}``. CSV: a header ``rank,node`` and one row per rank. Nodes are
    names (``'3_2'``, ``'gpu5'``) or indices.
    """
    path = Path(path)
    text = read_text(path, "placement map")
    if path.suffix.lower() == ".csv":
        mapping = _read_csv_map(text, path)
    else:
        doc = loads_json(text, str(path), what="placement map")
        if isinstance(doc, dict) and "placement" in doc and len(doc) > 1:
            extra = sorted(str(key) for key in doc if key != "placement")
            raise InputError(f"{path}: unknown key {extra[0]!r} beside 'placement' "
                             f"(a map file has only 'placement')")
        mapping = doc.get("placement", doc) if isinstance(doc, dict) else doc
        if not isinstance(mapping, (list, dict)):
            raise InputError(f"{path}: expected a list of nodes or a rank -> node object")
    return check_placement(mapping, topology, layout, source=str(path))


def _read_csv_map(text: str, path: Path) -> dict[int, str]:
    reader = csv.DictReader(text.splitlines())
    fields = [f.strip().lower() for f in reader.fieldnames or []]
    if "rank" not in fields or "node" not in fields:
        raise InputError(f"{path}: line 1: expected a header with columns rank,node")
    extra = [f for f in fields if f not in ("rank", "node")]
    if extra:
        raise InputError(f"{path}: line 1: unknown column {extra[0]!r} (a map has only "
                         f"rank,node)")
    mapping: dict[int, str] = {}
    for line, row in enumerate(reader, start=2):
        row = {k.strip().lower(): (v or "").strip() for k, v in row.items() if k}
        try:
            rank = int(row["rank"])
        except ValueError:
            raise InputError(f"{path}: line {line}: rank {row['rank']!r} is not an "
                             f"integer") from None
        if rank in mapping:
            raise InputError(f"{path}: line {line}: rank {rank} is placed twice")
        mapping[rank] = row["node"]
    return mapping
