"""Walks: orders of the cells of a grid, each step one hop when the grid allows it.

The one owner of walks, used by rank orders (:mod:`netsim.algorithms.orders`) and by
placement strategies (:mod:`netsim.placement.strategies`). A walk over a grid of shape
``dims`` is an array of flat C-order (row-major) cell indices visiting every cell once:

* :func:`snake_path`: the boustrophedon *path* (C order, every other sub-walk reversed);
  consecutive cells are neighbours, the last cell is not next to the first in general;
* :func:`snake_cycle`: a Hamiltonian *cycle* when one exists (an even number of cells
  and at least two dimensions of size > 1): it snakes over columns 1.. and comes back
  along column 0, so the ring closes with a neighbour hop too (on 2xN it is the
  boustrophedon). With more than two dimensions, dimension 0 against the snake path
  through the others. Otherwise (odd cell count, 1-D) it is :func:`snake_path`;
* :func:`hilbert_path`: the generalised Hilbert ("gilbert") curve of any 1-D or 2-D
  rectangle, which keeps cells close along the walk close on the grid.

>>> snake_path((2, 3)).tolist()
[0, 1, 2, 5, 4, 3]
>>> snake_cycle((2, 3)).tolist()
[0, 1, 2, 5, 4, 3]
>>> snake_cycle((4, 2)).tolist()     # (0,0) (0,1) (1,1) (2,1) (3,1) (3,0) (2,0) (1,0)
[0, 1, 3, 5, 7, 6, 4, 2]
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..errors import InputError

__all__ = ["snake_path", "snake_cycle", "hilbert_path", "is_cycle"]


def _dims(dims: Sequence[int]) -> tuple[int, ...]:
    dims = tuple(int(k) for k in dims)
    if not dims or min(dims) < 1:
        raise InputError(f"a walk needs a grid of positive sides, got {dims}")
    return dims


def snake_path(dims: Sequence[int]) -> np.ndarray:
    """Flat cell indices in boustrophedon order (every other sub-walk reversed).

    >>> snake_path((2, 3, 2)).tolist()
    [0, 1, 3, 2, 4, 5, 11, 10, 8, 9, 7, 6]
    """
    dims = _dims(dims)
    if len(dims) == 1:
        return np.arange(dims[0], dtype=np.int64)
    inner = snake_path(dims[1:])
    stride = math.prod(dims[1:])
    rows = [r * stride + (inner if r % 2 == 0 else inner[::-1]) for r in range(dims[0])]
    return np.concatenate(rows).astype(np.int64)


def _cycle_cells(rows: int, cols: int) -> list[tuple[int, int]]:
    """A Hamiltonian cycle of a rows x cols grid, rows even: snake columns 1.., back on 0."""
    walk = [(0, c) for c in range(cols)]
    for r in range(1, rows):
        span = range(cols - 1, 0, -1) if r % 2 else range(1, cols)
        walk += [(r, c) for c in span]
    return walk + [(r, 0) for r in range(rows - 1, 0, -1)]


def snake_cycle(dims: Sequence[int]) -> np.ndarray:
    """Flat cell indices of a Hamiltonian cycle of the grid, when one exists (module
    docstring); else :func:`snake_path`.

    >>> snake_cycle((2, 4)).tolist()
    [0, 1, 2, 3, 7, 6, 5, 4]
    """
    full = _dims(dims)
    # dimensions of size 1 change no row-major index: drop them
    dims = tuple(d for d in full if d > 1) or (1,)
    if len(dims) == 1 or math.prod(dims) % 2:
        return snake_path(dims)
    inner = snake_path(dims[1:])          # a unit-step path through the other dimensions
    rows, cols = dims[0], inner.size
    if rows % 2 == 0:
        cells = _cycle_cells(rows, cols)
    else:
        cells = [(r, c) for c, r in _cycle_cells(cols, rows)]
    return np.array([r * cols + inner[c] for r, c in cells], dtype=np.int64)


def is_cycle(walk: np.ndarray, dims: Sequence[int], *, wrap: Sequence[bool] | None = None
             ) -> bool:
    """Is every step of ``walk``, the closing one included, a single hop on the grid?
    ``wrap[d]`` makes dimension d a ring (a torus axis).

    >>> is_cycle(snake_cycle((2, 4)), (2, 4)), is_cycle(snake_path((3, 3)), (3, 3))
    (True, False)
    """
    dims = _dims(dims)
    coords = np.stack(np.unravel_index(np.asarray(walk, np.int64), dims), axis=1)
    step = np.abs(np.roll(coords, -1, axis=0) - coords)
    if wrap is not None:
        sizes = np.asarray(dims)
        step = np.where(np.asarray(wrap, bool), np.minimum(step, sizes - step), step)
    return len(walk) > 1 and bool(np.all(step.sum(axis=1) == 1))


def hilbert_path(dims: Sequence[int]) -> np.ndarray:
    """Flat cell indices along the generalised Hilbert ("gilbert") curve of a rectangle.

    Follows J. Cerveny's gilbert2d (BSD-2-Clause): the curve covers any rows x cols
    rectangle with unit steps (its author allows one diagonal step on some rectangles whose
    sides are both odd) and is a straight line on 1-D grids.

    >>> hilbert_path((2, 2)).tolist()
    [0, 2, 3, 1]
    """
    dims = _dims(dims)
    if len(dims) == 1:
        return np.arange(dims[0], dtype=np.int64)
    if len(dims) != 2:
        raise InputError(f"a hilbert walk needs a 1-D or 2-D grid, got "
                         f"{'x'.join(map(str, dims))}")
    rows, cols = dims
    # gilbert works in (x, y) = (column, row); the major axis is the longer side.
    if cols >= rows:
        points = list(_gilbert(0, 0, cols, 0, 0, rows))
    else:
        points = list(_gilbert(0, 0, 0, rows, cols, 0))
    xs, ys = np.asarray(points).T
    return np.ravel_multi_index((ys, xs), dims).astype(np.int64)


def _sign(v: int) -> int:
    return (v > 0) - (v < 0)


def _gilbert(x: int, y: int, ax: int, ay: int, bx: int, by: int):
    """Cells of the rectangle spanned by major vector (ax, ay) and minor vector (bx, by)."""
    w, h = abs(ax + ay), abs(bx + by)
    dax, day, dbx, dby = _sign(ax), _sign(ay), _sign(bx), _sign(by)
    if h == 1 or w == 1:   # a single row or column: walk straight along it
        step_x, step_y, n = (dax, day, w) if h == 1 else (dbx, dby, h)
        for _ in range(n):
            yield x, y
            x, y = x + step_x, y + step_y
        return
    ax2, ay2, bx2, by2 = ax // 2, ay // 2, bx // 2, by // 2
    w2, h2 = abs(ax2 + ay2), abs(bx2 + by2)
    if 2 * w > 3 * h:   # long rectangle: split along the major axis only
        if w2 % 2 and w > 2:   # prefer even halves, so the parts join with unit steps
            ax2, ay2 = ax2 + dax, ay2 + day
        yield from _gilbert(x, y, ax2, ay2, bx, by)
        yield from _gilbert(x + ax2, y + ay2, ax - ax2, ay - ay2, bx, by)
        return
    if h2 % 2 and h > 2:
        bx2, by2 = bx2 + dbx, by2 + dby
    # standard case: up the first half, across the whole, back down the second half
    yield from _gilbert(x, y, bx2, by2, ax2, ay2)
    yield from _gilbert(x + bx2, y + by2, ax, ay, bx - bx2, by - by2)
    yield from _gilbert(x + (ax - dax) + (bx2 - dbx), y + (ay - day) + (by2 - dby),
                        -bx2, -by2, -(ax - ax2), -(ay - ay2))
