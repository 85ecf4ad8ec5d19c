"""Shared machinery of the routers (private; the public surface is :mod:`.routing`).

Array helpers for CSR segments, the splitmix64 hash behind ECMP and plane choices, the
:class:`PathTable` a router returns, the table of node pairs and their parallel links, the
plane rule, and :class:`BaseRouter` (weakly keyed per-topology caches, pickling).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, NamedTuple, Sequence

import numpy as np

from ..errors import RoutingError
from ..topology.model import Topology

__all__ = ["PathTable", "Pairs", "BaseRouter", "expand_planes", "seg_ptr", "ramp", "gather",
           "segment_sum", "hash_choice", "read_only", "node_name", "no_path"]

_I = np.int64
_SALT_PLANE = 0x504C414E      # keeps plane choices independent of ECMP choices


# -- array helpers ----------------------------------------------------------------------
def seg_ptr(lens: np.ndarray) -> np.ndarray:
    """CSR pointer of consecutive segments of lengths ``lens``."""
    ptr = np.zeros(len(lens) + 1, dtype=_I)
    np.cumsum(lens, out=ptr[1:])
    return ptr


def ramp(lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR pointer of segments of ``lens`` and each element's position within its segment."""
    ptr = seg_ptr(lens)
    pos = np.arange(ptr[-1], dtype=_I) - np.repeat(ptr[:-1], lens)
    return ptr, pos


def gather(ptr: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segments ``idx`` of a CSR pointer: the new pointer and the flat positions to take."""
    starts = ptr[idx]
    lens = ptr[idx + 1] - starts
    new_ptr, pos = ramp(lens)
    return new_ptr, pos + np.repeat(starts, lens)


def segment_sum(values: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over each CSR segment (0 for an empty one), summed in path order."""
    out = np.zeros(len(ptr) - 1, dtype=np.float64)
    full = np.flatnonzero(ptr[1:] > ptr[:-1])
    if full.size:
        out[full] = np.add.reduceat(values, ptr[full])
    return out


def _splitmix_int(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


def _splitmix(x: np.ndarray) -> np.ndarray:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def hash_choice(seed: int, salt: int, columns: Sequence[np.ndarray], n: np.ndarray) -> np.ndarray:
    """Deterministic pseudo-random index in ``[0, n)`` per row of the integer ``columns``."""
    h = np.full(len(n), _splitmix_int((int(seed) * 0x100000001B3 + salt) & 0xFFFFFFFFFFFFFFFF),
                dtype=np.uint64)
    for col in columns:
        h = _splitmix(h ^ np.asarray(col, dtype=_I).view(np.uint64))
    return (h % np.asarray(n, dtype=np.uint64)).astype(_I)


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view (the caller's array itself stays writeable)."""
    view = a.view()
    view.flags.writeable = False
    return view


def node_name(topo: Topology, node: int) -> str:
    """Name of node index ``node``, for error messages."""
    return topo.node_names[int(node)]


def no_path(topo: Topology, src: int, dst: int, why: str = "") -> RoutingError:
    """The one-line error for an unreachable destination (``why`` may add a reason)."""
    return RoutingError(f"no path from {node_name(topo, src)!r} to {node_name(topo, dst)!r} "
                        f"in topology {topo.name!r}{why}")


# -- compiled paths -----------------------------------------------------------------------
class PathTable(NamedTuple):
    """What a :class:`Router` returns for n requests: CSR requests -> sub-flows -> links.

    ``sub_ptr`` (n+1), ``sub_frac`` (sub-flows; fractions of each request's bytes, summing
    to 1), ``path_ptr`` (sub-flows + 1) and ``path_links`` (link ids, in path order).
    """

    sub_ptr: np.ndarray
    sub_frac: np.ndarray
    path_ptr: np.ndarray
    path_links: np.ndarray

    @classmethod
    def from_paths(cls, paths: Sequence[Sequence[int]]) -> "PathTable":
        """One sub-flow (fraction 1) per request, following the given link ids."""
        lens = np.fromiter((len(p) for p in paths), dtype=_I, count=len(paths))
        path_ptr = seg_ptr(lens)
        links = (np.concatenate([np.asarray(p, dtype=_I) for p in paths]) if lens.sum()
                 else np.zeros(0, dtype=_I))
        n = len(paths)
        return cls(np.arange(n + 1, dtype=_I), np.ones(n), path_ptr, links)

    def reorder(self, idx: np.ndarray) -> "PathTable":
        """The table of requests ``idx`` (a selection or a permutation), in that order."""
        sub_ptr, subs = gather(self.sub_ptr, idx)
        path_ptr, pos = gather(self.path_ptr, subs)
        return PathTable(sub_ptr, self.sub_frac[subs], path_ptr, self.path_links[pos])

    @staticmethod
    def concat(tables: Sequence["PathTable"]) -> "PathTable":
        """Requests of ``tables`` one after the other."""
        subs = np.cumsum([0] + [len(t.sub_frac) for t in tables])
        nnz = np.cumsum([0] + [len(t.path_links) for t in tables])
        sub_ptr = np.concatenate([[0]] + [t.sub_ptr[1:] + s for t, s in zip(tables, subs)])
        path_ptr = np.concatenate([[0]] + [t.path_ptr[1:] + k for t, k in zip(tables, nnz)])
        return PathTable(sub_ptr.astype(_I), np.concatenate([t.sub_frac for t in tables]),
                         path_ptr.astype(_I),
                         np.concatenate([t.path_links for t in tables]).astype(_I))


# -- node pairs and planes ------------------------------------------------------------------
@dataclass(frozen=True)
class Pairs:
    """Distinct (src node, dst node) pairs of a topology and their parallel links by plane."""

    num_nodes: int
    keys: np.ndarray        # src * num_nodes + dst, sorted (so pairs are grouped by src)
    src: np.ndarray
    dst: np.ndarray
    ptr: np.ndarray         # CSR pair -> positions in ``links``
    links: np.ndarray       # link ids grouped by pair, by plane within a pair
    count: np.ndarray       # parallel links of each pair
    min_link: np.ndarray    # lowest link id of each pair
    of_link: np.ndarray     # pair of each link
    first: np.ndarray       # plane-0 link of each pair

    @classmethod
    def of(cls, topo: Topology) -> "Pairs":
        n = topo.num_nodes
        keys, of_link = np.unique(topo.link_src * n + topo.link_dst, return_inverse=True)
        links = np.lexsort((topo.plane, of_link)).astype(_I)
        count = np.bincount(of_link, minlength=len(keys)).astype(_I)
        ptr = seg_ptr(count)
        min_link = (np.minimum.reduceat(links, ptr[:-1]) if len(keys) else np.zeros(0, _I))
        return cls(n, keys, keys // n, keys % n, ptr, links, count, min_link,
                   of_link.astype(_I), links[ptr[:-1]])

    def lookup(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Pair ids of (u, v), -1 where there is no link u -> v."""
        key = np.asarray(u, dtype=_I) * self.num_nodes + np.asarray(v, dtype=_I)
        idx = np.minimum(np.searchsorted(self.keys, key), max(len(self.keys) - 1, 0))
        found = (self.keys[idx] == key) if len(self.keys) else np.zeros(len(key), bool)
        return np.where(found, idx, -1)

    def graph(self, mask: np.ndarray | None = None) -> sparse.csr_matrix:
        """Node adjacency (one entry per pair, optionally only pairs in ``mask``)."""
        from scipy import sparse             # loaded on use: 0.15 s of every start

        keep = np.ones(len(self.keys), bool) if mask is None else mask
        return sparse.csr_matrix((np.ones(int(keep.sum())), (self.src[keep], self.dst[keep])),
                                 shape=(self.num_nodes, self.num_nodes))


def expand_planes(pairs: Pairs, table: PathTable, planes: str | int, keys: np.ndarray,
                  seed: int) -> PathTable:
    """Turn paths of pair ids into paths of link ids by the ``planes`` rule."""
    sub_ptr, frac, path_ptr, hop = table
    if planes == 0 or not len(pairs.count) or pairs.count.max() == 1:
        return PathTable(sub_ptr, frac, path_ptr, pairs.first[hop])
    cnt = pairs.count[hop]
    top = int(cnt.max()) if cnt.size else 1
    if isinstance(planes, int) and not isinstance(planes, bool) and planes >= top:
        raise RoutingError(f"plane {planes} does not exist: the paths have at most {top} "
                           f"parallel links per hop")
    if top == 1:
        return PathTable(sub_ptr, frac, path_ptr, pairs.first[hop])
    lens = np.diff(path_ptr)
    per_sub = np.ones(len(frac), dtype=_I)
    full = np.flatnonzero(lens > 0)
    per_sub[full] = np.maximum.reduceat(cnt, path_ptr[full])
    if planes == "spray":
        copy = np.repeat(np.arange(len(frac), dtype=_I), per_sub)
        _, plane = ramp(per_sub)
        new_path_ptr, pos = gather(path_ptr, copy)
        hop = hop[pos]
        hop_plane = np.repeat(plane, lens[copy])
        links = pairs.links[pairs.ptr[hop] + hop_plane % pairs.count[hop]]
        cum = np.concatenate([[0], np.cumsum(per_sub)]).astype(_I)
        # Every copy keeps its sub-flow's weight, renormalised per request: 1/P for one path,
        # 1/(P1 + P2 + ...) each when a request was sprayed evenly over paths of P1, P2 ...
        # planes, i.e. striped evenly over all its parallel links (as NCCL over NVLinks).
        owner = np.repeat(np.arange(len(sub_ptr) - 1, dtype=_I), np.diff(sub_ptr))
        total = segment_sum(frac * per_sub, sub_ptr)
        return PathTable(cum[sub_ptr], (frac / total[owner])[copy], new_path_ptr, links)
    if planes == "hash":
        owner = np.repeat(np.arange(len(sub_ptr) - 1, dtype=_I), np.diff(sub_ptr))
        _, nth = ramp(np.diff(sub_ptr))
        choice = hash_choice(seed, _SALT_PLANE, [keys[owner], nth], per_sub)
    else:
        choice = np.full(len(frac), int(planes), dtype=_I)
    hop_plane = np.repeat(choice, lens)
    return PathTable(sub_ptr, frac, path_ptr, pairs.links[pairs.ptr[hop] + hop_plane % cnt])


class BaseRouter:
    """Plane handling, per-topology caches held weakly, pickling without the caches.

    A subclass implements ``_prepare(topo)`` (per-topology state with a ``pairs`` table,
    computed once per topology and router) and ``_pair_paths(...)``, which returns a
    :class:`PathTable` whose ``path_links`` are *pair* ids; :meth:`link_paths` then picks
    the parallel link of every hop by the ``planes`` rule.
    """

    def __init__(self, planes: str | int = "spray", seed: int = 0) -> None:
        if not (planes in ("spray", "hash") or
                (isinstance(planes, (int, np.integer)) and not isinstance(planes, bool)
                 and planes >= 0)):
            raise RoutingError(f"planes must be 'spray', 'hash' or a plane number >= 0, "
                               f"got {planes!r}")
        self.planes = planes if isinstance(planes, str) else int(planes)
        self.seed = int(seed)
        self._cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def _options(self) -> dict[str, Any]:
        return {"planes": self.planes, "seed": self.seed}

    @property
    def pair_only(self) -> bool:
        """Whether a path depends on (source, destination) alone, not on the flow key:
        :func:`~netsim.routing.route` then routes every distinct pair once."""
        return self.planes != "hash"

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._options().items())
        return f"{type(self).__name__}({args})"

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_cache"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._cache = weakref.WeakKeyDictionary()

    def _state(self, topo: Topology) -> Any:
        state = self._cache.get(topo)
        if state is None:
            state = self._cache[topo] = self._prepare(topo)
        return state

    def link_paths(self, topo: Topology, src: np.ndarray, dst: np.ndarray,
                   keys: np.ndarray) -> PathTable:
        state = self._state(topo)
        table = self._pair_paths(topo, state, src, dst, keys)
        return expand_planes(state.pairs, table, self.planes, keys, self.seed)

    def _prepare(self, topo: Topology) -> Any:
        raise NotImplementedError

    def _pair_paths(self, topo: Topology, state: Any, src: np.ndarray, dst: np.ndarray,
                    keys: np.ndarray) -> PathTable:
        raise NotImplementedError
