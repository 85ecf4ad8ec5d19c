"""Routing: turn (source node, destination node) requests into paths of link ids.

:func:`route` compiles a batch of requests into :class:`Routes`, a CSR structure
requests -> sub-flows -> links that the engine consumes without Python loops. A request
normally has one sub-flow; it has several when it is sprayed over equal-cost paths
(``ecmp='spray'``) or over parallel links (``planes='spray'``), each sub-flow carrying a
fraction of the request's bytes.

Routers are a one-method plugin seam (:class:`Router`): ``link_paths(topo, src, dst, keys)``
returns a :class:`PathTable` for requests with ``src != dst``; :func:`route` adds the
requests that stay on their node and the explicit paths given by the user. The built-in
routers work on node pairs first and resolve parallel links (planes) last, with one rule
for all of them (``planes=``):

* ``'spray'`` (default): one sub-flow per plane, fraction 1/P, where P is the largest
  number of parallel links at any hop of the path; sub-flow p takes plane ``p mod n`` at a
  hop with n parallel links. A request already sprayed evenly over equal-cost paths with
  P1, P2 ... planes is striped evenly over all P1 + P2 + ... sub-flows (NVSwitch with
  5/4/4/5 NVLinks per switch: 18 sub-flows of 1/18 each, not 1/4 per switch);
* ``'hash'``: one plane per sub-flow, ``hash(seed, key, sub-flow) mod P``;
* an int p: always plane p (``p mod n`` at a hop with fewer planes).

Routers keep per-topology caches (pair tables, distance rows, equal-cost path sets) keyed
weakly by the topology; the caches are dropped when a router is pickled. Randomness is a
splitmix64 hash of integers and an explicit seed, never Python's ``hash()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from ..errors import RoutingError
from ..kept import Kept
from .core import PathTable, gather, read_only, segment_sum
from .explicit import explicit_table
from .grid import DimensionOrderRouter
from ..topology.model import GRID_FAMILIES, Topology

__all__ = ["Routes", "PathTable", "Router", "DimensionOrderRouter", "UpDownRouter",
           "ShortestPathRouter", "default_router", "route", "path_latency"]

_I = np.int64


def path_latency(topo: Topology, path_ptr: np.ndarray, path_links: np.ndarray) -> np.ndarray:
    """Sum of link latencies (s) along each CSR path; 0 for an empty path."""
    if not topo.latency.any():
        return np.zeros(len(path_ptr) - 1)
    return segment_sum(topo.latency[path_links], np.asarray(path_ptr, dtype=_I))


@dataclass(frozen=True, eq=False)
class Routes:
    """Compiled routes of n requests (see the module docstring).

    Request i owns sub-flows ``sub_ptr[i]:sub_ptr[i+1]``; sub-flow s carries ``sub_frac[s]``
    of the request's bytes along links ``path_links[path_ptr[s]:path_ptr[s+1]]`` whose
    latencies add up to ``sub_latency[s]`` seconds. ``num_links`` is the topology's.
    """

    src: np.ndarray
    dst: np.ndarray
    sub_ptr: np.ndarray
    sub_req: np.ndarray
    sub_frac: np.ndarray
    path_ptr: np.ndarray
    path_links: np.ndarray
    sub_latency: np.ndarray
    num_links: int

    @classmethod
    def build(cls, topo: Topology, src: np.ndarray, dst: np.ndarray,
              table: PathTable) -> "Routes":
        """Routes of a :class:`PathTable`, adding owners and latencies; arrays read-only."""
        sub_req = np.repeat(np.arange(len(src), dtype=_I), np.diff(table.sub_ptr))
        arrays = [np.asarray(src, dtype=_I), np.asarray(dst, dtype=_I), table.sub_ptr, sub_req,
                  np.asarray(table.sub_frac, dtype=np.float64), table.path_ptr, table.path_links,
                  path_latency(topo, table.path_ptr, table.path_links)]
        return cls(*(read_only(a) for a in arrays), num_links=topo.num_links)

    @property
    def num_requests(self) -> int:
        return len(self.src)

    @property
    def num_subflows(self) -> int:
        return len(self.sub_req)

    @property
    def nnz(self) -> int:
        """Total number of (sub-flow, link) entries."""
        return len(self.path_links)

    @property
    def hops(self) -> np.ndarray:
        """Number of links of each sub-flow's path."""
        return np.diff(self.path_ptr)

    def subflows(self, request: int) -> range:
        return range(int(self.sub_ptr[request]), int(self.sub_ptr[request + 1]))

    def path(self, sub: int) -> np.ndarray:
        """Link ids of sub-flow ``sub``, in order."""
        return self.path_links[self.path_ptr[sub]:self.path_ptr[sub + 1]]

    @property
    def table(self) -> PathTable:
        return PathTable(self.sub_ptr, self.sub_frac, self.path_ptr, self.path_links)

    def incidence(self) -> sparse.csr_matrix:
        """Links x sub-flows CSR matrix of ones (a link used twice by one walk gets 2.0).

        Built once and cached; treat it as read-only.
        """
        cached = self.__dict__.get("_incidence")
        if cached is None:
            from scipy import sparse         # loaded on use: 0.15 s of every start

            csc = sparse.csc_matrix((np.ones(self.nnz), self.path_links, self.path_ptr),
                                    shape=(self.num_links, self.num_subflows))
            cached = csc.tocsr()
            cached.sum_duplicates()
            self.__dict__["_incidence"] = cached     # frozen dataclass: cache beside the fields
        return cached

    def link_bytes(self, nbytes: np.ndarray | float) -> np.ndarray:
        """Bytes crossing each link when request i carries ``nbytes[i]`` bytes."""
        per_sub = np.broadcast_to(np.asarray(nbytes, dtype=np.float64),
                                  (self.num_requests,))[self.sub_req] * self.sub_frac
        return np.bincount(self.path_links, weights=np.repeat(per_sub, self.hops),
                           minlength=self.num_links)

    def take(self, idx: Sequence[int] | np.ndarray) -> "Routes":
        """Routes of requests ``idx`` (a subset or a permutation), in that order."""
        idx = np.asarray(idx, dtype=_I)
        table = self.table.reorder(idx)
        _, subs = gather(self.sub_ptr, idx)
        arrays = [self.src[idx], self.dst[idx], table.sub_ptr,
                  np.repeat(np.arange(len(idx), dtype=_I), np.diff(table.sub_ptr)),
                  table.sub_frac, table.path_ptr, table.path_links, self.sub_latency[subs]]
        return Routes(*(read_only(a) for a in arrays), num_links=self.num_links)

    def validate(self, topo: Topology) -> None:
        """Raise :class:`RoutingError` unless every path is a walk src -> dst and every
        request's fractions sum to 1."""
        _check_walks(topo, self.src, self.dst, self.table, np.arange(self.num_requests), "path")

    def __repr__(self) -> str:
        return (f"Routes(requests={self.num_requests}, subflows={self.num_subflows}, "
                f"nnz={self.nnz})")


def _check_walks(topo: Topology, src: np.ndarray, dst: np.ndarray, table: PathTable,
                 flow_ids: np.ndarray, what: str) -> None:
    """Raise on the first request whose sub-flows are not connected walks src -> dst or
    whose fractions do not sum to 1 (``flow_ids`` name the requests in messages)."""
    sub_ptr, frac, path_ptr, links = table
    n_sub, lens = np.diff(sub_ptr), np.diff(path_ptr)
    req = np.repeat(np.arange(len(src)), n_sub)             # request of each sub-flow
    owner = np.repeat(req, lens)                              # request of each path entry

    def name(node: int) -> str:
        return repr(topo.node_names[int(node)])

    def fail(request: int, message: str) -> None:
        raise RoutingError(f"flow {flow_ids[request]}: {what} {message}")

    fsum = segment_sum(frac, sub_ptr)
    for r in np.flatnonzero((n_sub < 1) | (np.abs(fsum - 1.0) > 1e-9))[:1]:
        fail(r, f"fractions sum to {fsum[r]!r} over {n_sub[r]} sub-flows, not 1")
    for p in np.flatnonzero((links < 0) | (links >= topo.num_links))[:1]:
        fail(owner[p], f"has no link {links[p]} (topology {topo.name!r} has {topo.num_links} "
                       f"links)")
    for sub in np.flatnonzero((lens == 0) & (src[req] != dst[req]))[:1]:
        fail(req[sub], f"is empty but {name(src[req[sub]])} is not {name(dst[req[sub]])}")
    full = np.flatnonzero(lens > 0)
    first, last = links[path_ptr[full]], links[path_ptr[full + 1] - 1]
    for i in np.flatnonzero(topo.link_src[first] != src[req[full]])[:1]:
        fail(req[full[i]], f"starts at {name(topo.link_src[first[i]])}, not at its source "
                           f"{name(src[req[full[i]]])}")
    for i in np.flatnonzero(topo.link_dst[last] != dst[req[full]])[:1]:
        fail(req[full[i]], f"ends at {name(topo.link_dst[last[i]])}, not at its destination "
                           f"{name(dst[req[full[i]]])}")
    inner = np.ones(len(links), dtype=bool)                   # entries with a successor
    inner[path_ptr[1:][lens > 0] - 1] = False
    pos = np.flatnonzero(inner)
    for p in pos[topo.link_dst[links[pos]] != topo.link_src[links[pos + 1]]][:1]:
        fail(owner[p], f"breaks at link {topo.link_names[links[p]]!r} (ends at "
                       f"{name(topo.link_dst[links[p]])}, next starts at "
                       f"{name(topo.link_src[links[p + 1]])})")


# -- the plugin seam ------------------------------------------------------------------------
@runtime_checkable
class Router(Protocol):
    """Anything with ``link_paths``: paths of link ids for requests with ``src != dst``.

    ``src``, ``dst`` and ``keys`` (flow ids for hashing) are int64 arrays of equal length;
    the result has one entry per request, in order. Raise :class:`RoutingError` when a
    destination is unreachable.
    """

    def link_paths(self, topo: Topology, src: np.ndarray, dst: np.ndarray,
                   keys: np.ndarray) -> PathTable: ...


# -- entry points ------------------------------------------------------------------------------
def default_router(topo: Topology) -> Router:
    """The machine's own route table where it has one (``meta["routes"]``, read from a
    SimGrid platform), else dimension order on mesh/torus/ring, up/down ECMP on switched
    fabrics (hash on fat_tree and leaf_spine, spray on nvswitch, as NCCL stripes over all
    NVLinks), fewest hops elsewhere."""
    if topo.meta.get("routes"):                   # the machine's own table (SimGrid Full)
        from .table import TableRouter

        return TableRouter()
    if topo.family in GRID_FAMILIES:
        return DimensionOrderRouter()
    from .shortest import ShortestPathRouter      # scipy.sparse.csgraph: loaded when used
    from .updown import UpDownRouter

    if topo.family in ("fat_tree", "leaf_spine"):
        return UpDownRouter(ecmp="hash")
    if topo.family in ("nvswitch", "dgx_cluster"):   # dgx_cluster: topology/clusters.py
        return UpDownRouter(ecmp="spray")
    return ShortestPathRouter()


def _nodes(topo: Topology, values, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1 or not (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)):
        raise RoutingError(f"{what} nodes must be a 1-D array of node indices, got shape "
                           f"{arr.shape} of {arr.dtype}")
    arr = arr.astype(_I)
    if arr.size and 0 <= arr.min() and arr.max() < topo.num_nodes:
        return arr              # two reductions, not two masks of 33M (big collectives)
    bad = np.flatnonzero((arr < 0) | (arr >= topo.num_nodes))
    if bad.size:
        raise RoutingError(f"flow {bad[0]}: {what} node {arr[bad[0]]} is not a node of topology "
                           f"{topo.name!r} ({topo.num_nodes} nodes)")
    return arr


def _merge(n: int, parts: list[tuple[np.ndarray, PathTable]]) -> PathTable:
    """One table in request order from tables of disjoint, sorted request subsets."""
    if len(parts) == 1:
        return parts[0][1]
    if not parts:
        return PathTable.from_paths([])
    order = np.concatenate([idx for idx, _ in parts])
    return PathTable.concat([t for _, t in parts]).reorder(np.argsort(order, kind="stable"))


def _as_table(table: PathTable) -> PathTable:
    """A plugin's table with the canonical dtypes."""
    sub_ptr, frac, path_ptr, links = table
    return PathTable(np.asarray(sub_ptr, dtype=_I), np.asarray(frac, dtype=np.float64),
                     np.asarray(path_ptr, dtype=_I), np.asarray(links, dtype=_I))


def route(topo: Topology, src, dst, *, keys=None, router: Router | None = None,
          paths: Mapping[int, Sequence[int | str]] | None = None) -> Routes:
    """Compile requests ``src[i] -> dst[i]`` (node indices) into :class:`Routes`.

    ``keys`` are flow ids for ECMP and plane hashing (default ``arange(n)``); ``router``
    defaults to :func:`default_router` (pass one router to several calls to reuse its
    per-topology caches); ``paths`` maps a request index to an explicit list of link ids
    (or names), which wins over the router after a check that it is a connected walk from
    the request's source to its destination. A request with ``src == dst`` gets one
    sub-flow with an empty path. The router's own paths are trusted; :meth:`Routes.validate`
    checks them.

    >>> from netsim.topology.grid import mesh
    >>> t = mesh((4, 4))
    >>> r = route(t, [t.node("0_0")], [t.node("2_3")])
    >>> [t.link_names[l] for l in r.path(0)]
    ['0_0->0_1', '0_1->0_2', '0_2->0_3', '0_3->1_3', '1_3->2_3']
    """
    src, dst = _nodes(topo, src, "source"), _nodes(topo, dst, "destination")
    if len(src) != len(dst):
        raise RoutingError(f"{len(src)} sources but {len(dst)} destinations")
    n = len(src)
    keys = np.arange(n, dtype=_I) if keys is None else np.asarray(keys, dtype=_I)
    if keys.shape != (n,):
        raise RoutingError(f"keys must have one entry per flow ({n}), got shape {keys.shape}")
    keep = _keeps(router, n, paths)
    if keep:
        found = _kept_routes.find((n,), (src, dst, keys), (router, topo))
        if found is not None:
            return found[0]
    routes = _route(topo, src, dst, keys, router, paths)
    if keep:
        _kept_routes.put((n,), (src, dst, keys), routes, (router, topo),
                         held=sum(np.asarray(getattr(routes, f)).nbytes
                                  for f in _ROUTE_ARRAYS))
    return routes


#: route() keeps its last results of at least this many requests, per router and
#: topology: a size sweep routes the same sends at every size (the scaled schedule of
#: run.scaled_builds), and on 256 ranks of dgx-h100-cluster routing them again costs 0.3 s
#: a size. netsim.kept holds them (the last four, within 1/16 of what the process may
#: still add); Routes are not changed in place, so the kept one is handed out as it is.
MEMO_FROM = 4096
_kept_routes = Kept()
_ROUTE_ARRAYS = ("src", "dst", "sub_ptr", "sub_req", "sub_frac", "path_ptr", "path_links",
                 "sub_latency")


def _keeps(router, n: int, paths) -> bool:
    """Whether route() keeps this call's routes: netsim's own routers (their paths are a
    function of the topology, the requests and their keys; a plugin's need not be), at
    least :data:`MEMO_FROM` requests, no explicit paths."""
    from .core import BaseRouter

    return not paths and n >= MEMO_FROM and isinstance(router, BaseRouter)


def _route(topo: Topology, src: np.ndarray, dst: np.ndarray, keys: np.ndarray, router,
           paths) -> Routes:
    """:func:`route` after the checks, without the kept routes."""
    n = len(src)
    parts: list[tuple[np.ndarray, PathTable]] = []
    free = np.ones(n, dtype=bool)                     # requests not yet given a path
    if paths:
        idx, table = explicit_table(topo, n, paths)
        _check_walks(topo, src[idx], dst[idx], table, idx, "explicit path")
        parts.append((idx, table))
        free[idx] = False
    moving = src != dst
    every = n > 0 and not paths and bool(moving.all())   # the common case: no index arrays
    staying = np.zeros(0, _I) if every else np.flatnonzero(free & ~moving)
    if staying.size:
        parts.append((staying, PathTable(np.arange(staying.size + 1, dtype=_I),
                                         np.ones(staying.size), np.zeros(staying.size + 1, _I),
                                         np.zeros(0, _I))))
    routed = None if every else np.flatnonzero(free & moving)
    del free, moving
    if every or routed.size:
        router = default_router(topo) if router is None else router
        r_src, r_dst, r_keys = ((src, dst, keys) if every    # no copies
                                else (src[routed], dst[routed], keys[routed]))
        inverse = None
        if r_src.size >= PAIR_DEDUPE_FROM and getattr(router, "pair_only", False):
            # A collective repeats a few pairs millions of times (a ring on n ranks: n
            # pairs, 2n(n-1) sends): route each distinct pair once, then gather.
            r_src, r_dst, inverse = _distinct_pairs(r_src, r_dst, topo.num_nodes)
            r_keys = np.zeros(r_src.size, dtype=_I)        # unused by a pair_only router
        table = _as_table(router.link_paths(topo, r_src, r_dst, r_keys))
        if len(table.sub_ptr) != r_src.size + 1:
            raise RoutingError(f"router {router!r} returned {len(table.sub_ptr) - 1} requests "
                               f"for {r_src.size}")
        if inverse is not None and every:
            return _gathered_routes(topo, src, dst, table, inverse)
        if inverse is not None:
            table = _gathered(table, inverse)
        parts.append((np.arange(n, dtype=_I) if every else routed, table))
    return Routes.build(topo, src, dst, _merge(n, parts))


#: Route distinct (source, destination) pairs once from this many requests on, when the
#: router's paths depend on the pair alone (``router.pair_only``).
PAIR_DEDUPE_FROM = 4096


def _distinct_pairs(src: np.ndarray, dst: np.ndarray, num_nodes: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (src, dst) pairs (sorted by src, then dst) and, per request, the index
    of its pair. A dense mark over all node pairs when that table is no larger than the
    requests (a 64x64 torus: 16.8M pairs against a ring's 33.5M sends; 0.2 s), else a
    unique + binary search."""
    key = src * np.int64(num_nodes)
    key += dst
    space = int(num_nodes) ** 2
    if space <= max(1 << 24, key.size):
        mark = np.zeros(space, dtype=bool)
        mark[key] = True
        pairs = np.flatnonzero(mark)
        del mark
        where = np.empty(space, dtype=np.int32 if pairs.size < 2**31 else _I)
        where[pairs] = np.arange(pairs.size)
        inverse = where[key]
    else:
        try:                                    # numpy >= 2.3: a hash table, no sort
            pairs = np.sort(np.unique(key, sorted=False))
        except TypeError:
            pairs = np.unique(key)
        inverse = np.searchsorted(pairs, key)
    return pairs // num_nodes, pairs % num_nodes, inverse


def _gathered_routes(topo: Topology, src: np.ndarray, dst: np.ndarray, table: PathTable,
                     inverse: np.ndarray) -> Routes:
    """:class:`Routes` of requests ``src[i] -> dst[i]``, request i taking the paths of
    request ``inverse[i]`` of ``table`` (one per distinct pair): its latencies computed per
    pair, and with one sub-flow of one link per request (a ring on its machine's ring)
    three gathers and one range, each array allocated once (big arrays are memory bound)."""
    n = src.size
    latency = path_latency(topo, table.path_ptr, table.path_links)
    if np.all(np.diff(table.sub_ptr) == 1) and np.all(np.diff(table.path_ptr) == 1):
        sub_ptr = np.arange(n + 1, dtype=_I)
        arrays = [src, dst, sub_ptr, sub_ptr[:-1], table.sub_frac[inverse], sub_ptr,
                  table.path_links[inverse], latency[inverse]]
        return Routes(*(read_only(a) for a in arrays), num_links=topo.num_links)
    full = _gathered(table, inverse)
    subs = gather(table.sub_ptr, inverse)[1]
    sub_req = np.repeat(np.arange(n, dtype=_I), np.diff(full.sub_ptr))
    arrays = [src, dst, full.sub_ptr, sub_req, full.sub_frac, full.path_ptr, full.path_links,
              latency[subs]]
    return Routes(*(read_only(a) for a in arrays), num_links=topo.num_links)


def _gathered(table: PathTable, inverse: np.ndarray) -> PathTable:
    """Request i of the result is request ``inverse[i]`` of ``table``; without the
    general gather when every request has one sub-flow and every path one length."""
    sub_ptr, frac, path_ptr, links = table
    if np.all(np.diff(sub_ptr) == 1):
        new_sub_ptr, subs = np.arange(inverse.size + 1, dtype=_I), inverse
    else:
        new_sub_ptr, subs = gather(sub_ptr, inverse)
    lens = np.diff(path_ptr)
    if lens.size and np.all(lens == lens[0]):
        hops = int(lens[0])
        new_path_ptr = np.arange(subs.size + 1, dtype=_I) * hops
        new_links = links.reshape(-1, hops)[subs].ravel() if hops else links[:0]
    else:
        new_path_ptr, pos = gather(path_ptr, subs)
        new_links = links[pos]
    return PathTable(new_sub_ptr, frac[subs], new_path_ptr, new_links)


def __getattr__(name: str):
    # The routers that need scipy.sparse.csgraph load on first use: a run whose paths are
    # all explicit, or on a grid, never imports csgraph (about 0.1 s).
    if name == "ShortestPathRouter":
        from .shortest import ShortestPathRouter
        return ShortestPathRouter
    if name == "UpDownRouter":
        from .updown import UpDownRouter
        return UpDownRouter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
