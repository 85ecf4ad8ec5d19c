"""Up/down (valley-free) routing with ECMP on switched fabrics (see :class:`UpDownRouter`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from ..errors import RoutingError
from .core import BaseRouter, Pairs, PathTable, hash_choice, no_path, ramp, seg_ptr
from ..topology.model import Topology

__all__ = ["UpDownRouter"]

_I = np.int64

_SALT_ECMP = 0x45434D50      # keeps ECMP choices independent of plane choices


@dataclass
class _TreeState:
    pairs: Pairs
    level: np.ndarray
    up: sparse.csr_matrix            # up links (level increases)
    down_rev: sparse.csr_matrix      # down links, reversed
    up_in: list[list[int]]           # node -> up pairs arriving at it
    down_out: list[list[int]]        # node -> down pairs leaving it
    anchor_out: np.ndarray           # single up-neighbour of a node, else -1
    anchor_in: np.ndarray            # single down-neighbour feeding a node, else -1
    up_rows: dict
    down_rows: dict
    ups: dict
    downs: dict
    anchor_paths: dict
    up_tables: dict                  # node a -> its up walks to every node, by length
    down_tables: dict                # node b -> the down walks from every node to it


def _levels(topo: Topology, pairs: Pairs) -> np.ndarray:
    """Tier attribute of every node if all have one, else hops from the nearest endpoint."""
    tiers = [a.get("tier") for a in topo.node_attrs]
    if all(t is not None for t in tiers):
        return np.asarray(tiers, dtype=np.float64)
    n = topo.num_nodes
    hosts = np.flatnonzero(~topo.is_switch)
    rows = np.concatenate([pairs.src, pairs.dst, np.full(len(hosts), n)])
    cols = np.concatenate([pairs.dst, pairs.src, hosts])
    graph = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n + 1, n + 1))
    dist = csgraph.shortest_path(graph, method="D", unweighted=True, indices=[n])[0]
    return dist[:n] - 1


class UpDownRouter(BaseRouter):
    """Shortest valley-free (up then down) paths with ECMP, for switched fabrics.

    Levels are the nodes' ``tier`` attribute when every node has one (fat_tree,
    leaf_spine), else each node's hop distance from the nearest non-switch node (NVSwitch:
    GPUs 0, switches 1). A path climbs links to higher levels, then descends; links within
    a level are not used. ``ecmp='hash'`` puts a request on one of its equal-cost paths
    chosen by a splitmix64 hash of (seed, key, src, dst); ``ecmp='spray'`` splits it evenly
    over all of them.
    Path sets are cached per pair of attachment switches (an endpoint with a single
    up-neighbour is routed from that switch) and enumerated in a fixed order.
    """

    def __init__(self, ecmp: str = "hash", seed: int = 0, *, planes: str | int = "spray") -> None:
        super().__init__(planes, seed)
        if ecmp not in ("hash", "spray"):
            raise RoutingError(f"ecmp must be 'hash' or 'spray', got {ecmp!r}")
        self.ecmp = ecmp

    def _options(self) -> dict[str, Any]:
        return {"ecmp": self.ecmp, **super()._options()}

    @property
    def pair_only(self) -> bool:
        return super().pair_only and self.ecmp != "hash"

    def _prepare(self, topo: Topology) -> _TreeState:
        pairs = Pairs.of(topo)
        level = _levels(topo, pairs)
        is_up = level[pairs.dst] > level[pairs.src]
        is_down = level[pairs.dst] < level[pairs.src]
        n = topo.num_nodes
        up_in: list[list[int]] = [[] for _ in range(n)]
        down_out: list[list[int]] = [[] for _ in range(n)]
        for q in np.flatnonzero(is_up).tolist():
            up_in[pairs.dst[q]].append(q)
        for q in np.flatnonzero(is_down).tolist():
            down_out[pairs.src[q]].append(q)
        out_deg = np.bincount(pairs.src, minlength=n)
        in_deg = np.bincount(pairs.dst, minlength=n)
        up_src = np.bincount(pairs.src[is_up], minlength=n)
        down_dst = np.bincount(pairs.dst[is_down], minlength=n)
        anchor_out = np.full(n, -1, dtype=_I)
        one = (out_deg == 1) & (up_src == 1)
        anchor_out[pairs.src[is_up & one[pairs.src]]] = pairs.dst[is_up & one[pairs.src]]
        anchor_in = np.full(n, -1, dtype=_I)
        one = (in_deg == 1) & (down_dst == 1)
        anchor_in[pairs.dst[is_down & one[pairs.dst]]] = pairs.src[is_down & one[pairs.dst]]
        return _TreeState(pairs, level, pairs.graph(is_up), pairs.graph(is_down).T.tocsr(),
                          up_in, down_out, anchor_out, anchor_in, {}, {}, {}, {}, {}, {}, {})

    @staticmethod
    def _rows(graph: sparse.csr_matrix, cache: dict, nodes: np.ndarray) -> None:
        missing = [int(x) for x in nodes if int(x) not in cache]
        if missing:
            dist = csgraph.shortest_path(graph, method="D", unweighted=True, indices=missing)
            cache.update(zip(missing, dist))

    def _up_paths(self, st: _TreeState, a: int, x: int) -> list[tuple[int, ...]]:
        """Shortest up paths a -> x as tuples of pair ids."""
        return _walks(st.ups, a, x, st.up_rows[a], st.up_in, st.pairs.src, ends_at=True)

    def _down_paths(self, st: _TreeState, x: int, b: int) -> list[tuple[int, ...]]:
        """Shortest down paths x -> b as tuples of pair ids."""
        return _walks(st.downs, b, x, st.down_rows[b], st.down_out, st.pairs.dst, ends_at=False)

    def _table(self, st: _TreeState, fixed: int, up: bool) -> dict:
        """Every shortest up walk from ``fixed`` to each node (``up``), or down walk from
        each node to ``fixed``, grouped by length h: h -> (the node at the walk's far end,
        (walks x h) pair ids), nodes ascending and each node's walks in :func:`_walks`'
        order."""
        cache = st.up_tables if up else st.down_tables
        if fixed not in cache:
            dist = (st.up_rows if up else st.down_rows)[fixed]
            by_length: dict[int, list] = {}
            for x in np.flatnonzero(np.isfinite(dist)).tolist():
                walks = self._up_paths(st, fixed, x) if up else self._down_paths(st, x, fixed)
                by_length.setdefault(int(dist[x]), []).append((x, walks))
            cache[fixed] = {}
            for h, entries in by_length.items():
                ends = np.array([x for x, walks in entries for _ in walks], dtype=_I)
                cache[fixed][h] = (ends, np.array([w for _, walks in entries for w in walks],
                                                  dtype=_I).reshape(ends.size, h))
        return cache[fixed]

    def _between(self, st: _TreeState, a: int, b: int) -> np.ndarray | None:
        """All shortest valley-free paths a -> b, (paths x hops) pair ids; None if none.
        In order: by top node x ascending, then each up walk a -> x, then each down walk
        x -> b."""
        key = (a, b)
        if key not in st.anchor_paths:
            total = st.up_rows[a] + st.down_rows[b]
            best = total.min()
            if not np.isfinite(best):
                st.anchor_paths[key] = None
                return None
            top = total == best
            climbs = st.up_rows[a][top]
            if climbs.min() == climbs.max():       # every top node as high: one join
                st.anchor_paths[key] = self._joined(st, a, b, top, int(climbs[0]), int(best))
            else:
                paths = [u + d for x in np.flatnonzero(top).tolist()
                         for u in self._up_paths(st, a, x) for d in self._down_paths(st, x, b)]
                st.anchor_paths[key] = np.asarray(paths, dtype=_I).reshape(len(paths), int(best))
        return st.anchor_paths[key]

    def _joined(self, st: _TreeState, a: int, b: int, top: np.ndarray, climb: int,
                best: int) -> np.ndarray:
        """:meth:`_between` where every top node is ``climb`` hops above a: the up walks
        of a and the down walks to b that meet at a top node, joined on it (each up walk
        with every down walk of its node, in order), without a Python loop over nodes."""
        up_x, up = self._table(st, a, True)[climb]
        down_x, down = self._table(st, b, False)[best - climb]
        keep = top[up_x]
        if not keep.all():
            up_x, up = up_x[keep], up[keep]
        keep = top[down_x]
        if not keep.all():
            down_x, down = down_x[keep], down[keep]
        if up_x.size == down_x.size and (up_x == down_x).all() and \
                (down_x[1:] > down_x[:-1]).all():
            return np.hstack([up, down])           # one walk each way per node (fat-trees)
        # down walks are grouped by node, nodes ascending: node x's start where x would go
        first = np.searchsorted(down_x, up_x)
        count = np.searchsorted(down_x, up_x, side="right") - first
        _, nth = ramp(count)
        return np.hstack([np.repeat(up, count, axis=0), down[np.repeat(first, count) + nth]])

    def _path_sets(self, topo: Topology, st: _TreeState, src: np.ndarray, dst: np.ndarray,
                   a: np.ndarray, b: np.ndarray):
        """Equal-cost path sets of the distinct (a, b) attachment pairs, flattened.

        Returns the set of each request and, per set, its number of paths, their length
        and the offset of its (paths x hops) block in the flat array of pair ids.
        """
        n = topo.num_nodes
        groups, g_of = np.unique(a * n + b, return_inverse=True)
        ga, gb = groups // n, groups % n
        self._rows(st.up, st.up_rows, np.unique(ga[ga != gb]))
        self._rows(st.down_rev, st.down_rows, np.unique(gb[ga != gb]))
        blocks = [np.zeros((1, 0), _I) if x == y else self._between(st, x, y)
                  for x, y in zip(ga.tolist(), gb.tolist())]
        for g, block in enumerate(blocks):
            if block is None:
                r = int(np.flatnonzero(g_of == g)[0])
                raise no_path(topo, src[r], dst[r])
        g_n = np.array([len(x) for x in blocks], dtype=_I)
        g_len = np.array([x.shape[1] for x in blocks], dtype=_I)
        g_start = seg_ptr(g_n * g_len)
        return g_of, g_n, g_len, g_start, np.concatenate([x.ravel() for x in blocks]).astype(_I)

    def _pair_paths(self, topo: Topology, st: _TreeState, src: np.ndarray, dst: np.ndarray,
                    keys: np.ndarray) -> PathTable:
        # An endpoint with a single up-neighbour (a host under its edge switch) is routed
        # from that switch, so path sets are per switch pair, not per host pair.
        a, b = st.anchor_out[src], st.anchor_in[dst]
        pre = (a >= 0) & (src != b)
        suf = (b >= 0) & (dst != a)
        a, b = np.where(pre, a, src), np.where(suf, b, dst)
        g_of, g_n, g_len, g_start, flat = self._path_sets(topo, st, src, dst, a, b)
        n_paths = g_n[g_of]
        if self.ecmp == "spray":
            sub_ptr, nth = ramp(n_paths)
            owner = np.repeat(np.arange(len(src), dtype=_I), n_paths)
            frac = 1.0 / n_paths[owner]
        else:
            sub_ptr, owner = np.arange(len(src) + 1, dtype=_I), np.arange(len(src), dtype=_I)
            nth = hash_choice(self.seed, _SALT_ECMP, [keys, src, dst], n_paths)
            frac = np.ones(len(src))
        g = g_of[owner]
        mid, p, s = g_len[g], pre[owner], suf[owner]
        path_ptr = seg_ptr(p + mid + s)
        out = np.empty(path_ptr[-1], dtype=_I)
        _, t = ramp(mid)
        out[np.repeat(path_ptr[:-1] + p, mid) + t] = flat[np.repeat(g_start[g] + nth * mid, mid)
                                                          + t]
        out[path_ptr[:-1][p]] = st.pairs.lookup(src, a)[owner[p]]
        out[path_ptr[1:][s] - 1] = st.pairs.lookup(b, dst)[owner[s]]
        return PathTable(sub_ptr, frac, path_ptr, out)


def _walks(memo: dict, fixed: int, y: int, dist: np.ndarray, pairs_at: list,
           far: np.ndarray, *, ends_at: bool) -> list[tuple[int, ...]]:
    """Every shortest walk between node ``fixed`` and node ``y`` in one direction of the
    tree (tuples of pair ids), memoised in ``memo``: built backwards from ``y``, through
    the pairs ``pairs_at[y]`` that touch ``y`` on the side of ``fixed`` (``far[q]``: their
    other node) and are one hop nearer to it by ``dist`` (hops between ``fixed`` and each
    node). ``ends_at``: the walk runs from ``fixed`` to ``y`` (up paths, keyed (fixed, y)),
    else from ``y`` to ``fixed`` (down paths, keyed (y, fixed))."""
    key = (fixed, y) if ends_at else (y, fixed)
    if key not in memo:
        if y == fixed:
            memo[key] = [()]
        else:
            near = [q for q in pairs_at[y] if dist[far[q]] == dist[y] - 1]
            memo[key] = [p + (q,) if ends_at else (q,) + p for q in near
                         for p in _walks(memo, fixed, int(far[q]), dist, pairs_at, far,
                                         ends_at=ends_at)]
    return memo[key]
