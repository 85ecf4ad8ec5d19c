"""Rank orders: the sequence in which ring-like algorithms (rings, chains) visit ranks.

An order is a permutation of the ranks ``0..n-1``, computed from ``options.topology`` and
the placement (rank -> node):

* ``natural``: rank order itself (placement order), no topology needed;
* ``row``: by node index, which on meshes and tori is row-major coordinate order;
* ``snake``: boustrophedon over the grid coordinates, so consecutive ranks sit on
  neighbouring nodes. When the number of rows (dimension 0) or of columns is even the walk
  is a Hamiltonian *cycle*: it snakes over columns 1.. and returns along column 0, so the
  ring closes with a neighbour hop too (on 2xN this is the plain boustrophedon). With an odd
  number of nodes no such cycle exists and the plain boustrophedon path is used. More than
  two dimensions: dimension 0 against a boustrophedon path through the others;
* ``hilbert``: the Hilbert curve, for 2-D grids whose sides are the same power of two.

Ranks on a subset of the grid are ordered by their node's position along the walk.

>>> from netsim.topology import mesh
>>> from netsim.algorithms.options import AlgoOptions
>>> rank_order("snake", 6, AlgoOptions(topology=mesh((2, 3)))).tolist()
[0, 1, 2, 5, 4, 3]
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError, unknown_name
from .options import AlgoOptions

__all__ = ["ORDERS", "rank_order", "grid_coords", "snake_walk",
           "hilbert_walk"]

ORDERS = ("natural", "row", "snake", "hilbert")


def rank_order(name: str, num_ranks: int, options: AlgoOptions) -> np.ndarray:
    """The ranks in order ``name`` (a permutation of ``0..num_ranks-1``)."""
    if name not in ORDERS:
        raise unknown_name("rank order", name, ORDERS)
    if name == "natural":
        return np.arange(num_ranks, dtype=np.int64)
    nodes = options.node_of_rank(num_ranks) if options.topology is not None else None
    if nodes is None:
        raise InputError(f"rank order {name!r} needs a topology (options.topology)")
    if name == "row":
        return np.argsort(nodes, kind="stable").astype(np.int64)
    _, dims = grid_coords(options.topology, nodes, why=f"rank order {name!r}")
    walk = snake_walk(dims) if name == "snake" else hilbert_walk(dims)
    position = np.empty(walk.size, dtype=np.int64)
    position[walk] = np.arange(walk.size)
    return np.argsort(position[nodes], kind="stable").astype(np.int64)


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


def _path(dims: tuple[int, ...]) -> np.ndarray:
    """Row-major indices of a boustrophedon path through a grid of shape ``dims``."""
    if len(dims) == 1:
        return np.arange(dims[0], dtype=np.int64)
    inner = _path(dims[1:])
    stride = math.prod(dims[1:])
    rows = [r * stride + (inner if r % 2 == 0 else inner[::-1]) for r in range(dims[0])]
    return np.concatenate(rows)


def _cycle(rows: int, cols: int) -> list[tuple[int, int]]:
    """A Hamiltonian cycle of a rows x cols grid, rows even: snake columns 1.., back on 0."""
    walk = [(0, c) for c in range(cols)]
    for r in range(1, rows):
        span = range(cols - 1, 0, -1) if r % 2 else range(1, cols)
        walk += [(r, c) for c in span]
    return walk + [(r, 0) for r in range(rows - 1, 0, -1)]


def snake_walk(dims: tuple[int, ...]) -> np.ndarray:
    """Row-major node indices of the snake walk over a grid (module docstring)."""
    # dimensions of size 1 change no row-major index: drop them
    dims = tuple(int(d) for d in dims if d > 1) or (1,)
    if len(dims) == 1 or math.prod(dims) % 2:
        return _path(dims)
    inner = _path(dims[1:])                 # a unit-step path through the other dimensions
    rows, cols = dims[0], inner.size
    if rows % 2 == 0:
        cells = _cycle(rows, cols)
    else:
        cells = [(r, c) for c, r in _cycle(cols, rows)]
    return np.array([r * cols + inner[c] for r, c in cells], dtype=np.int64)


def hilbert_walk(dims: tuple[int, ...]) -> np.ndarray:
    """Row-major node indices along the Hilbert curve of a 2^k x 2^k grid."""
    dims = tuple(dims)
    side = dims[0] if len(dims) == 2 else 0
    if len(dims) != 2 or dims[0] != dims[1] or side & (side - 1):
        raise InputError(f"rank order 'hilbert' needs a square 2-D grid with a power-of-two "
                         f"side, got {dims}")
    cells = []
    for d in range(side * side):
        x = y = 0
        t, s = d, 1
        while s < side:          # the classic d -> (x, y) walk of the Hilbert curve
            rx = 1 & (t // 2)
            ry = 1 & (t ^ rx)
            if ry == 0:
                if rx == 1:
                    x, y = s - 1 - x, s - 1 - y
                x, y = y, x
            x, y = x + s * rx, y + s * ry
            t //= 4
            s *= 2
        cells.append(x * side + y)
    return np.array(cells, dtype=np.int64)
