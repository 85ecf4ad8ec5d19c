"""Rank orders: the sequence in which ring-like algorithms (rings, lines, trees) visit ranks.

An order is a permutation of the ranks ``0..n-1``, computed from ``options.topology`` and
the placement (rank -> node). The walks come from :mod:`netsim.topology.walks`:

* ``auto`` (the default): the physical embedding of the algorithm's ``shape``. On a grid
  (mesh, torus, ring) whose ranks fill a sub-grid (every combination of the coordinates
  they use, e.g. the whole machine or one line along an axis): a ring follows
  :func:`~netsim.topology.walks.snake_cycle` over that sub-grid (the natural order along a
  line, which on a torus axis is its ring; the snake on 2xN; a Hamiltonian cycle on other
  grids with an even side), a line the snake path, a tree the Hilbert curve (1-D and 2-D;
  the snake path beyond). Ranks whose placement order already is such an embedding
  (consecutive ranks on neighbouring nodes, and the ring closing with a neighbour hop),
  ranks elsewhere (not a sub-grid) and switched machines keep their order (identity);
* ``natural``: rank order itself (placement order), no topology needed;
* ``row``: by node index, which on meshes and tori is row-major coordinate order;
* ``snake``: along :func:`~netsim.topology.walks.snake_cycle` over the whole grid;
* ``hilbert``: along :func:`~netsim.topology.walks.hilbert_path` (1-D or 2-D grids).

Ranks on a subset of the grid are ordered by their node's position along the walk
(``snake``, ``hilbert``) or along the walk of their own sub-grid (``auto``).

>>> from netsim.topology import mesh
>>> from netsim.algorithms.options import AlgoOptions
>>> rank_order("snake", 6, AlgoOptions(topology=mesh((2, 3)))).tolist()
[0, 1, 2, 5, 4, 3]
>>> rank_order("auto", 8, AlgoOptions(topology=mesh((2, 4)))).tolist()   # the T3000 ring
[0, 1, 2, 3, 7, 6, 5, 4]
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError, unknown_name
from ..topology.walks import hilbert_path, snake_cycle, snake_path
from .options import ORDERS, AlgoOptions

__all__ = ["ORDERS", "SHAPES", "rank_order", "grid_coords", "auto_order"]

#: What an algorithm lays over its ranks: a ring (closed), a line (open) or a tree.
SHAPES = ("ring", "line", "tree")


def rank_order(name: str, num_ranks: int, options: AlgoOptions, shape: str = "ring"
               ) -> np.ndarray:
    """The ranks in order ``name`` (a permutation of ``0..num_ranks-1``); ``shape`` is what
    the algorithm lays over them (``'ring'``, ``'line'`` or ``'tree'``; for ``auto``)."""
    if name not in ORDERS:
        raise unknown_name("rank order", name, ORDERS)
    if name == "natural" or (name == "auto" and options.topology is None):
        return np.arange(num_ranks, dtype=np.int64)
    nodes = options.node_of_rank(num_ranks) if options.topology is not None else None
    if nodes is None:
        raise InputError(f"rank order {name!r} needs a topology (options.topology)")
    if name == "auto":
        return auto_order(options.topology, nodes, shape)
    if name == "row":
        return np.argsort(nodes, kind="stable").astype(np.int64)
    _, dims = grid_coords(options.topology, nodes, why=f"rank order {name!r}")
    if name == "hilbert" and sum(d > 1 for d in dims) > 2:
        raise InputError(f"rank order 'hilbert' needs a 1-D or 2-D grid, got {dims}")
    walk = snake_cycle(dims) if name == "snake" else hilbert_path(
        tuple(d for d in dims if d > 1) or (1,))
    return _along(walk, np.asarray(nodes, np.int64))


def _along(walk: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Ranks sorted by the position of their cell along ``walk`` (flat cell indices)."""
    position = np.empty(walk.size, dtype=np.int64)
    position[walk] = np.arange(walk.size)
    return np.argsort(position[cells], kind="stable").astype(np.int64)


def auto_order(topology, nodes: np.ndarray, shape: str = "ring") -> np.ndarray:
    """The ``auto`` order of ranks placed on ``nodes`` (module docstring).

    >>> from netsim.topology import torus
    >>> auto_order(torus((4, 4)), np.array([0, 8, 4, 12])).tolist()   # a column: its ring
    [0, 2, 1, 3]
    """
    if shape not in SHAPES:
        raise unknown_name("rank order shape", shape, SHAPES)
    nodes = np.asarray(nodes, dtype=np.int64)
    n = nodes.size
    identity = np.arange(n, dtype=np.int64)
    dims = None if topology is None else topology.grid_dims
    if dims is None or n < 3 or np.unique(nodes).size != n \
            or nodes.min() < 0 or nodes.max() >= math.prod(dims):
        return identity
    coords = np.stack(np.unravel_index(nodes, dims), axis=1)
    axes = [np.unique(coords[:, d]) for d in range(len(dims))]
    sub = tuple(a.size for a in axes)
    if math.prod(sub) != n:           # not every combination of the coordinates: keep it
        return identity
    wrap = tuple(_wraps(topology, d, axes[d], dims[d]) for d in range(len(dims)))
    if _embedded(coords, dims, wrap, closed=shape == "ring"):
        return identity
    local = np.stack([np.searchsorted(axes[d], coords[:, d]) for d in range(len(dims))],
                     axis=1)
    cells = np.ravel_multi_index(tuple(local.T), sub).astype(np.int64)
    active = tuple(k for k in sub if k > 1) or (1,)
    if shape == "ring":
        walk = snake_cycle(sub)
    elif shape == "tree" and len(active) <= 2:
        walk = hilbert_path(active)   # size-1 dimensions change no flat index
    else:
        walk = snake_path(sub)
    return _along(walk, cells)


def _wraps(topology, dim: int, used: np.ndarray, size: int) -> bool:
    """Does dimension ``dim`` close into a ring through the used coordinates? (a torus
    or ring axis the ranks use entirely)."""
    return topology.family in ("torus", "ring") and used.size == size


def _embedded(coords: np.ndarray, dims, wrap, closed: bool) -> bool:
    """Are consecutive ranks (and, if ``closed``, the last and the first) neighbours?"""
    step = np.abs(np.diff(np.vstack([coords, coords[:1]]) if closed else coords, axis=0))
    sizes = np.asarray(dims)
    step = np.where(np.asarray(wrap, bool), np.minimum(step, sizes - step), step)
    return bool(np.all(step.sum(axis=1) == 1))


def grid_coords(topology, nodes: np.ndarray, why: str = "this algorithm"
                ) -> tuple[np.ndarray, tuple[int, ...]]:
    """Grid coordinates (n, D) of ``nodes`` on a mesh/torus/ring topology, and its dims."""
    dims = None if topology is None else topology.grid_dims
    if dims is None:
        family = None if topology is None else topology.family
        raise InputError(f"{why} needs a mesh, torus or ring topology, got {family!r}")
    nodes = np.asarray(nodes, dtype=np.int64)
    if nodes.size and (nodes.min() < 0 or nodes.max() >= math.prod(dims)):
        raise InputError(f"{why}: a rank is placed on a node outside the {dims} grid")
    return np.stack(np.unravel_index(nodes, dims), axis=1).astype(np.int64), dims
