"""Fewest-hop routing on any topology (see :class:`ShortestPathRouter`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from .core import BaseRouter, Pairs, PathTable, no_path, seg_ptr
from ..topology.model import Topology

__all__ = ["ShortestPathRouter"]

_I = np.int64


@dataclass
class _GraphState:
    pairs: Pairs
    reverse: sparse.csr_matrix       # adjacency transposed: BFS from d gives distances to d
    src_start: np.ndarray            # first pair leaving each node that has one
    has_out: np.ndarray              # nodes with at least one pair leaving them
    rows: dict                       # dst -> (distance to dst per node, next pair per node)


class ShortestPathRouter(BaseRouter):
    """Fewest hops on any topology, as destination-based forwarding tables.

    For each distinct destination one BFS (``scipy.sparse.csgraph``) on the reversed graph
    gives every node's distance to it; the next hop at a node is its lowest-numbered link
    that gets one hop closer. Ties are thus broken by link id, hop by hop from the source,
    and all flows to one destination form a tree, as with real forwarding tables.
    """

    _BATCH_ENTRIES = 4_000_000       # destinations x pairs per vectorised pass

    def _prepare(self, topo: Topology) -> _GraphState:
        pairs = Pairs.of(topo)
        has_out = np.unique(pairs.src)
        return _GraphState(pairs, pairs.graph().T.tocsr(), np.searchsorted(pairs.src, has_out),
                           has_out, {})

    def _tables(self, st: _GraphState, dests: np.ndarray) -> None:
        """Distance and next-hop rows for destinations not yet cached."""
        missing = np.array([d for d in dests.tolist() if d not in st.rows], dtype=_I)
        pairs, n = st.pairs, st.pairs.num_nodes
        batch = max(1, self._BATCH_ENTRIES // max(len(pairs.keys), 1))
        for lo in range(0, len(missing), batch):
            chunk = missing[lo:lo + batch]
            dist = csgraph.shortest_path(st.reverse, method="D", unweighted=True, indices=chunk)
            closer = np.isfinite(dist[:, pairs.dst]) & (
                dist[:, pairs.dst] == dist[:, pairs.src] - 1)
            none = np.iinfo(_I).max
            cand = np.where(closer, pairs.min_link, none)
            nxt = np.full((len(chunk), n), -1, dtype=_I)
            if len(pairs.keys):
                best = np.minimum.reduceat(cand, st.src_start, axis=1)
                found = best < none
                nxt[:, st.has_out] = np.where(found, pairs.of_link[np.where(found, best, 0)], -1)
            for i, d in enumerate(chunk.tolist()):
                st.rows[d] = (dist[i], nxt[i])

    def _pair_paths(self, topo: Topology, st: _GraphState, src: np.ndarray, dst: np.ndarray,
                    keys: np.ndarray) -> PathTable:
        dests, row = np.unique(dst, return_inverse=True)
        self._tables(st, dests)
        dist = np.stack([st.rows[d][0] for d in dests.tolist()])
        nxt = np.stack([st.rows[d][1] for d in dests.tolist()])
        hops = dist[row, src]
        bad = np.flatnonzero(~np.isfinite(hops))
        if bad.size:
            raise no_path(topo, src[bad[0]], dst[bad[0]])
        lens = hops.astype(_I)
        path_ptr = seg_ptr(lens)
        out = np.empty(path_ptr[-1], dtype=_I)
        active, cur = np.arange(len(src), dtype=_I), src.astype(_I)
        step = 0
        while active.size:
            active = active[lens[active] > step]
            q = nxt[row[active], cur[active]]
            out[path_ptr[active] + step] = q
            cur[active] = st.pairs.dst[q]
            step += 1
        n = len(src)
        return PathTable(np.arange(n + 1, dtype=_I), np.ones(n), path_ptr, out)
