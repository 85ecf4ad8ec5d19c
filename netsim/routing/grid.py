"""Dimension-order routing on meshes, tori and rings (see :class:`DimensionOrderRouter`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import RoutingError
from .core import BaseRouter, Pairs, PathTable, no_path, node_name, seg_ptr
from ..topology.model import Topology

__all__ = ["DimensionOrderRouter"]

_I = np.int64


@dataclass
class _GridState:
    pairs: Pairs
    dims: tuple[int, ...]
    strides: tuple[int, ...]
    hop_pair: np.ndarray     # (node * ndim + dim) * 2 + (sign < 0) -> pair id, -1 if none
    torus: np.ndarray        # per dim: has wrap-around links
    both_ways: np.ndarray    # per dim: has links with sign -1


class DimensionOrderRouter(BaseRouter):
    """Dimension-order routing on ``mesh``, ``torus`` and ``ring`` topologies.

    The path corrects one dimension at a time in ``order``; the default is the LAST
    dimension first, i.e. "XY" routing on a 2-D (rows, cols) mesh: along the row (the
    column index changes) first, then along the column. On a torus dimension it goes the
    shorter way round; when both ways are equal (even size k, distance k/2) it goes + if the
    source's coordinate along that dimension is even and - if it is odd, so that
    antipodal traffic splits evenly between the two directions. A dimension without -1 links
    (a unidirectional ring) is always travelled in the + direction.

    Relies on the grid conventions: ``params['dims']``, node index ==
    ``np.ravel_multi_index(coord, dims)``, links tagged with ``dim`` and ``sign``.
    """

    def __init__(self, order: Sequence[int] | None = None, *, planes: str | int = "spray",
                 seed: int = 0) -> None:
        super().__init__(planes, seed)
        self.order = None if order is None else tuple(int(d) for d in order)

    def _options(self) -> dict[str, Any]:
        return {"order": self.order, **super()._options()}

    def _prepare(self, topo: Topology) -> _GridState:
        dims = topo.params.get("dims")
        if not dims:
            raise RoutingError(f"dimension-order routing needs a grid topology with "
                               f"params['dims']; topology {topo.name!r} (family "
                               f"{topo.family!r}) has none")
        dims = tuple(int(k) for k in dims)
        nd, n_grid = len(dims), int(np.prod(dims))
        pairs = Pairs.of(topo)
        on = (topo.dim >= 0) & (topo.sign != 0) & (topo.link_src < n_grid)
        slot = (topo.link_src[on] * nd + topo.dim[on]) * 2 + (topo.sign[on] < 0)
        hop_pair = np.full(n_grid * nd * 2, -1,
                           dtype=np.int32 if len(pairs.keys) < 2**31 - 1 else _I)
        hop_pair[slot] = pairs.of_link[on]
        strides = tuple(int(np.prod(dims[d + 1:])) for d in range(nd))
        torus = np.array([bool((topo.wrap & (topo.dim == d)).any()) for d in range(nd)])
        both = np.array([bool(((topo.sign < 0) & (topo.dim == d)).any()) for d in range(nd)])
        return _GridState(pairs, dims, strides, hop_pair, torus, both)

    def _order(self, topo: Topology, nd: int) -> tuple[int, ...]:
        order = tuple(range(nd - 1, -1, -1)) if self.order is None else self.order
        if sorted(order) != list(range(nd)):
            raise RoutingError(f"dimension order {order} is not a permutation of the {nd} "
                               f"dimensions of topology {topo.name!r}")
        return order

    @staticmethod
    def _moves(state: _GridState, d: int, s: np.ndarray, t: np.ndarray):
        """Hops and direction (True = +) along dimension d from coordinate s to t."""
        k = state.dims[d]
        fwd = (t - s) % k
        if not state.both_ways[d]:
            return fwd, np.ones(len(s), dtype=bool)
        if state.torus[d]:
            bwd = (k - fwd) % k
            plus = (fwd < bwd) | ((fwd == bwd) & (s % 2 == 0))
            return np.where(plus, fwd, bwd), plus
        return np.abs(t - s), t > s

    def _pair_paths(self, topo: Topology, state: _GridState, src: np.ndarray, dst: np.ndarray,
                    keys: np.ndarray) -> PathTable:
        dims, nd = state.dims, len(state.dims)
        n_grid = len(state.hop_pair) // (2 * nd)
        off = np.flatnonzero((src >= n_grid) | (dst >= n_grid))
        if off.size:
            node = src[off[0]] if src[off[0]] >= n_grid else dst[off[0]]
            raise RoutingError(f"dimension-order routing: node {node_name(topo, node)!r} is not on "
                               f"the {dims} grid of topology {topo.name!r}")
        order = self._order(topo, nd)
        sc, dc = np.unravel_index(src, dims), np.unravel_index(dst, dims)
        moves = {d: self._moves(state, d, sc[d], dc[d]) for d in order}
        lens = np.sum([moves[d][0] for d in order], axis=0).astype(_I)
        path_ptr = seg_ptr(lens)
        # int32 arithmetic when it fits: the per-hop passes are memory bound
        small = max(len(state.hop_pair), int(path_ptr[-1])) < 2**31 - 1
        it = np.int32 if small else _I
        out = np.empty(path_ptr[-1], dtype=it)
        offset, node = path_ptr[:-1].astype(it), src.astype(it)
        for d in order:
            hops, plus = moves[d]
            self._walk_dim(state, d, sc[d].astype(it), hops.astype(it), plus, node, offset, out)
            offset += hops.astype(it)
            node += ((dc[d] - sc[d]) * state.strides[d]).astype(it)
        self._check_missing(topo, state, src, dst, path_ptr, out)
        n = len(src)
        return PathTable(np.arange(n + 1, dtype=_I), np.ones(n), path_ptr, out)

    @staticmethod
    def _walk_dim(state: _GridState, d: int, s: np.ndarray, hops: np.ndarray, plus: np.ndarray,
                  node: np.ndarray, offset: np.ndarray, out: np.ndarray) -> None:
        """Write the pair ids of every request's hops along dimension d into ``out``.

        The hop t steps from coordinate s uses hop-table slot ``A + coord * S`` with
        ``A = (base_node * ndim + d) * 2 + (direction is -)``, ``S = stride * ndim * 2`` and
        ``coord = s +- t`` (mod k where the dimension wraps). With ``j`` the flat index and
        ``P`` each request's first flat index, ``t = j - P``; folding P into per-request
        constants leaves two or three ``repeat`` passes per dimension.
        """
        it, nd, k = out.dtype, len(state.dims), state.dims[d]
        total = int(hops.sum())
        if not total:
            return
        first = np.zeros(len(hops), dtype=it)
        np.cumsum(hops[:-1], out=first[1:])
        j = np.arange(total, dtype=it)
        step = np.where(plus, 1, -1).astype(it)
        stride_slots = it.type(state.strides[d] * nd * 2)
        base = ((node - s * state.strides[d]) * nd + d) * 2 + (~plus).astype(it)
        if state.torus[d] or not state.both_ways[d]:
            coord = np.repeat(s - step * first, hops) + j * np.repeat(step, hops)
            coord %= it.type(k)
            slot = np.repeat(base, hops) + coord * stride_slots
        else:
            rate = step * stride_slots
            slot = (np.repeat(base + s * stride_slots - first * rate, hops)
                    + j * np.repeat(rate, hops))
        out[np.repeat(offset - first, hops) + j] = state.hop_pair[slot]

    @staticmethod
    def _check_missing(topo, state, src, dst, path_ptr, out) -> None:
        missing = np.flatnonzero(out < 0)
        if not missing.size:
            return
        p = missing[0]
        r = int(np.searchsorted(path_ptr, p, side="right") - 1)
        walk = out[path_ptr[r]:p]
        at = state.pairs.dst[walk[-1]] if walk.size else src[r]
        raise no_path(topo, src[r], dst[r], f": dimension-order routing needs a missing link "
                                             f"out of {node_name(topo, at)!r}")
