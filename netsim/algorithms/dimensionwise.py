"""Dimension-wise algorithms for meshes, tori and rings: one axis at a time.

The ranks must fill a box of the grid (every node of a sub-grid, one rank each, any
placement). Along axis a the ranks that share every other coordinate form a *line*,
ordered by their coordinate on a; lines of one axis work side by side.

* reduce-scatter: ring reduce-scatter along axis 0 on the whole buffer, then along axis 1
  on the shard each rank kept, and so on; the rank at coordinates x ends with its block;
* all-gather: the same backwards, from the last axis to axis 0;
* all-reduce: reduce-scatter then all-gather (2 sum_a (k_a - 1) steps instead of 2(n-1),
  same bandwidth term; the Dally-Towles dimension-ordered scheme of
  hardware-specs section 5.5);
* all-to-all: along axis a every rank sends straight to each member of its line the data
  whose destination has that member's coordinate on a, forwarding what it received on
  earlier axes (S (k_a - 1)/k_a bytes per rank and axis).

Rings on a mesh close over the line with a multi-hop link back; on a torus or ring they
close with the wrap link.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from .options import AlgoOptions
from .orders import grid_coords
from .plan import Plan, blocks, no_deps, settle
from .registry import reason_from, register
from .rings import ring_steps

__all__ = ["grid_layout", "grid_reason", "reduce_scatter_axes", "all_gather_axes"]


def grid_layout(num_ranks: int, options: AlgoOptions) -> np.ndarray:
    """Rank at every cell of the box the ranks fill: an int array of the box's shape."""
    nodes = options.node_of_rank(num_ranks)
    coords, _ = grid_coords(options.topology, nodes, why="dimensionwise")
    cell, shape = [], []
    for axis in coords.T:
        values, index = np.unique(axis, return_inverse=True)
        cell.append(index.ravel())
        shape.append(values.size)
    if math.prod(shape) != num_ranks:
        raise InputError(f"dimensionwise needs the ranks to fill a box of the grid; "
                         f"{num_ranks} ranks span {'x'.join(map(str, shape))} cells")
    rank_at = np.full(shape, -1, dtype=np.int64)
    rank_at[tuple(cell)] = np.arange(num_ranks)
    if (rank_at < 0).any():
        raise InputError("dimensionwise needs one rank per node of a box of the grid; "
                         "two ranks share a node")
    return rank_at


#: Why the dimension-wise algorithms cannot run here (None if they can).
grid_reason = reason_from(grid_layout, "dimensionwise")


def _lines(rank_at: np.ndarray, axis: int) -> np.ndarray:
    """(lines, k) ranks of every line along ``axis``, ordered by their coordinate on it."""
    return np.moveaxis(rank_at, axis, -1).reshape(-1, rank_at.shape[axis])


def _line_chunks(slot_pieces: np.ndarray, axis: int) -> np.ndarray:
    """(lines, k, q) pieces of the chunk each line position owns on ``axis``."""
    shape = slot_pieces.shape[:-1]
    before, k = math.prod(shape[:axis]), shape[axis]
    after = math.prod(shape[axis + 1:])
    split = slot_pieces.reshape(before, k, -1)
    prefix = np.arange(before * after) // after       # line -> its coordinates before axis
    return split[prefix]


def reduce_scatter_axes(plan: Plan, rank_at: np.ndarray, slot_pieces: np.ndarray,
                        ready: np.ndarray, slices: int) -> np.ndarray:
    """Ring reduce-scatter along axis 0, 1, ...; the rank at cell x keeps slot_pieces[x]."""
    for axis, k in enumerate(rank_at.shape):
        if k > 1:
            ready = settle(plan, ring_steps(
                plan, _lines(rank_at, axis), _line_chunks(slot_pieces, axis), ready,
                reduce_scatter=True, all_gather=False, slices=slices, tag=f"rs-axis{axis}"))
    return ready


def all_gather_axes(plan: Plan, rank_at: np.ndarray, slot_pieces: np.ndarray,
                    ready: np.ndarray, slices: int) -> np.ndarray:
    """Ring all-gather along the last axis, ..., axis 0 (the reverse of the above)."""
    for axis in reversed(range(rank_at.ndim)):
        if rank_at.shape[axis] > 1:
            ready = settle(plan, ring_steps(
                plan, _lines(rank_at, axis), _line_chunks(slot_pieces, axis), ready,
                reduce_scatter=False, all_gather=True, slices=slices, tag=f"ag-axis{axis}"))
    return ready


def _register_phases(op: str, summary: str, *, reduce_scatter: bool, all_gather: bool):
    """Register ``op``'s dimension-wise algorithm: the reduce-scatter axes, the all-gather
    axes, or both in turn (all-reduce), on the box the ranks fill."""
    @register(op, "dimensionwise", summary, requires="grid", check=grid_reason)
    def build(num_ranks: int, size: float, options: AlgoOptions):
        c = options.chunks
        rank_at = grid_layout(num_ranks, options)
        plan = Plan(op, num_ranks, size, num_ranks * c, options)
        slot_pieces = blocks(num_ranks, c)[rank_at]        # cell x holds the block of its rank
        ready = no_deps(num_ranks)
        if reduce_scatter:
            ready = reduce_scatter_axes(plan, rank_at, slot_pieces, ready, c)
        if all_gather:
            all_gather_axes(plan, rank_at, slot_pieces, ready, c)
        return plan.build()
    return build


allreduce = _register_phases(
    "allreduce", "ring reduce-scatter along each grid axis in turn, then ring all-gather back",
    reduce_scatter=True, all_gather=True)
reducescatter = _register_phases(
    "reducescatter", "ring reduce-scatter along each grid axis in turn",
    reduce_scatter=True, all_gather=False)
allgather = _register_phases(
    "allgather", "ring all-gather along each grid axis in turn (last axis first)",
    reduce_scatter=False, all_gather=True)


@register("alltoall", "dimensionwise", "route along one grid axis, then the next, "
          "forwarding (direct sends within each line)", requires="grid", check=grid_reason)
def alltoall(num_ranks: int, size: float, options: AlgoOptions):
    n = num_ranks
    rank_at = grid_layout(n, options)
    plan = Plan("alltoall", n, size, n * n, options)
    cell = np.stack(np.unravel_index(np.argsort(rank_at.ravel()), rank_at.shape), axis=1)
    ready = no_deps(n)
    for axis, k in enumerate(rank_at.shape):
        if k == 1:
            continue
        lines = _lines(rank_at, axis)
        received = []
        for t in range(1, k):
            src, dst = lines.ravel(), np.roll(lines, -t, axis=1).ravel()
            ids = plan.sends(src, dst, deps=ready[src], nbytes=(n // k) * plan.piece_bytes,
                             pieces=lambda: [_forwarded(rank_at, cell, axis, s, d)
                                             for s, d in zip(src, dst)])
            back = np.empty(n, dtype=np.int64)
            back[dst] = ids                                # rank -> what it got at offset t
            received.append(back)
        ready = settle(plan, np.hstack([ready, np.stack(received, axis=1)]))
    return plan.build()


def _forwarded(rank_at: np.ndarray, cell: np.ndarray, axis: int, src: int, dst: int
               ) -> np.ndarray:
    """Blocks (i, j) rank ``src`` holds before ``axis`` whose destination j lies on
    ``dst``'s coordinate along ``axis``: i agrees with src from ``axis`` on, j before it."""
    n = rank_at.size
    x, target = cell[src], cell[dst][axis]
    free = (slice(None),) * axis
    origins = rank_at[free + tuple(x[axis:])].ravel()
    targets = rank_at[tuple(x[:axis]) + (target,)].ravel()
    return (origins[:, None] * n + targets[None, :]).ravel()
