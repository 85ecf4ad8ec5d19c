"""A lower bound on the makespan of one built, placed schedule, without simulating it.

:func:`schedule_bound` is what ``--algo auto`` uses to skip candidates that cannot win
(:func:`netsim.run.collective.run_collective`). Unlike :mod:`netsim.algorithms.bounds`
(what any algorithm needs), it bounds *this* schedule on *this* machine, and it holds for
every max-min execution of it by the fluid engine (:mod:`netsim.engine.executor`):

* **critical path**. An op is released when its last dependency finishes (and not before
  its ``not_before``); a compute then takes ``seconds``, a barrier nothing, and a send of
  B bytes finishes when its last sub-flow does. Sub-flow p carries f_p B bytes along a
  path of latency L_p whose smallest link capacity is c_p; it starts draining ``overhead
  + L_p`` after the release, and its rate never exceeds c_p (max-min allocations never
  exceed a link's capacity), so it ends no earlier than ``overhead + L_p + f_p B / c_p``
  after the release. By induction over the DAG in op order (every dependency points to
  an earlier op), every op finishes no earlier than its longest path of such costs, and
  the makespan (the last finish) is at least the longest path of the whole DAG.
* **link load**. A link of capacity c carries the bytes of every sub-flow whose path
  crosses it, at a total rate of at most c, so it is busy for at least (those bytes) / c,
  all of it before the makespan.

The bound is the larger of the two. Both are exact arithmetic statements about the
model. The engine completes a flow, and releases an op, up to a relative 1e-9 of the
event time early (``executor._REL_TOL``: events that close are one), so along a chain of
k ops its times can be early by up to 2k x 1e-9 of the makespan, and a link can end with
as many flows each up to that much short of drained. :func:`engine_floor` takes that off
(at least :data:`SLACK`): what a caller that prunes compares with simulated times.

>>> from netsim.topology import ring
>>> from netsim.schedule import ScheduleBuilder
>>> b = ScheduleBuilder(2); first = b.send(0, 1, 1e9); _ = b.send(1, 0, 1e9, deps=[first])
>>> schedule_bound(ring(2, bandwidth=1e9, latency=1e-6), b.build(), [0, 1])   # 2 x (L + B/C)
2.000002
"""

from __future__ import annotations

import sys
import weakref
from typing import Sequence

import numpy as np

from ..schedule import COMPUTE, SEND

__all__ = ["schedule_bound", "engine_floor", "critical_path", "link_load", "compute_chain",
           "SLACK"]

#: False: the longest path in numpy blocks only, even when numba is imported (tests
#: compare the two).
COMPILED = True
#: Ops from which the compiled longest path runs (once numba is imported).
COMPILED_FROM = 32

#: The least relative margin :func:`engine_floor` takes off a bound.
SLACK = 1e-6
#: Machines of up to this many nodes look pair rows up in a table of every (source,
#: destination) key (:meth:`_PairTerms._rows`): 16 MB at most.
DENSE_NODES = 2048


def engine_floor(bound: float, schedule) -> float:
    """``bound`` (s) less what the engine's merging of close events can take off a
    simulated time of ``schedule`` (module docstring): 2e-9 per op, at least
    :data:`SLACK`, relative. No simulated makespan of the schedule is below it.

    >>> from netsim.schedule import ScheduleBuilder
    >>> engine_floor(1.0, ScheduleBuilder(2).build())      # no ops: the least margin
    0.999999
    """
    return bound * (1.0 - max(SLACK, 2e-9 * schedule.num_ops))


def schedule_bound(topology, schedule, placement: Sequence[int], *, router=None,
                   overhead=0.0, not_before: np.ndarray | None = None,
                   routes=None) -> float:
    """Lower bound (s) on the makespan of ``schedule`` with rank r on ``placement[r]``
    (the larger of :func:`critical_path` and :func:`link_load`; module docstring).
    ``routes`` are the sends' routes (:func:`netsim.engine.route_schedule`), computed here
    when not given; ``overhead`` one value or one per op (s), as the engine takes it.

    When the router's paths depend on the (source, destination) pair alone
    (``router.pair_only``) and the schedule names no explicit paths, every distinct pair is
    routed once per machine and router and kept (:class:`_PairTerms`): the bound of the
    next schedule on the same machine reads them instead of routing its sends again.
    """
    placement = np.asarray(placement, dtype=np.int64)
    if routes is None and not schedule.paths:
        from ..routing import default_router

        router = default_router(topology) if router is None else router
        if getattr(router, "pair_only", False):
            drain, load = _PairTerms.of(topology, router).terms(topology, schedule,
                                                                placement)
            return max(_longest_path(schedule, drain, overhead, not_before), load)
    if routes is None:
        from ..engine import route_schedule

        routes = route_schedule(topology, schedule, placement, router)
    sub_bytes, sub_cap = _subflows(topology, schedule, routes)
    return max(critical_path(schedule, routes, sub_bytes, sub_cap, overhead=overhead,
                             not_before=not_before),
               link_load(topology, routes, sub_bytes))


class _PairTerms:
    """Per machine and router: every (source node, destination node) pair routed so far,
    as lines ``latency + bytes x r`` (one per sub-flow: r = fraction / smallest capacity on
    its path; one line when they share a latency) and link fractions (CSR by pair)."""

    #: topology -> {id(router): (router, its _PairTerms)}
    _cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @classmethod
    def of(cls, topology, router) -> "_PairTerms":
        per_router = cls._cache.setdefault(topology, {})
        held = per_router.get(id(router))
        if held is None or held[0] is not router:
            if len(per_router) > 8:          # a few routers per machine; keep it bounded
                per_router.clear()
            held = per_router[id(router)] = (router, cls(router))
        return held[1]

    def __init__(self, router) -> None:       # no reference to the machine: the cache
        self.router = router                   # is weak on it
        self.keys = np.zeros(0, dtype=np.int64)            # src * nodes + dst, sorted
        self.line_ptr = np.zeros(1, dtype=np.int64)
        self.line_lat = self.line_rate = np.zeros(0)
        self.link_ptr = np.zeros(1, dtype=np.int64)
        self.link_idx = np.zeros(0, dtype=np.int64)
        self.link_frac = np.zeros(0)
        self._matrix = None                    # the link table as a sparse matrix (_load)
        self._index = None                     # row of every key, when dense (_rows)

    def terms(self, topology, schedule, placement: np.ndarray) -> tuple[np.ndarray, float]:
        """(per op: least time from its start to its finish once released, the link-load
        bound in s) of a schedule's sends: computes and barriers get 0 here."""
        send_ops = np.flatnonzero(schedule.kind == SEND)
        drain = np.zeros(schedule.num_ops)
        if send_ops.size == 0:
            return drain, 0.0
        nodes = topology.num_nodes
        key = placement[schedule.src[send_ops]] * nodes + placement[schedule.dst[send_ops]]
        pair = self._rows(topology, key)
        nbytes = schedule.nbytes[send_ops]
        count = np.diff(self.line_ptr)
        if (count[pair] == 1).all():
            line = self.line_ptr[pair]
            drain[send_ops] = self.line_lat[line] + _times(nbytes, self.line_rate[line])
        else:
            owner = np.repeat(np.arange(send_ops.size), count[pair])
            line = _ranges(self.line_ptr[pair], count[pair])
            each = self.line_lat[line] + _times(nbytes[owner], self.line_rate[line])
            best = np.full(send_ops.size, -np.inf)
            np.maximum.at(best, owner, each)
            drain[send_ops] = best
        pair_bytes = np.bincount(pair, weights=nbytes, minlength=self.keys.size)
        load = self._load(pair_bytes, topology.num_links)
        bandwidth = np.asarray(topology.bandwidth, dtype=np.float64)
        return drain, float((load / bandwidth).max()) if load.size else 0.0

    def _load(self, pair_bytes: np.ndarray, num_links: int) -> np.ndarray:
        """Bytes per link of ``pair_bytes`` (per held pair): one sparse product over the
        link entries of the pairs that carry bytes. The table holds every pair any
        schedule on this machine needed (a sweep's ten candidates: all n^2 on 256 ranks),
        and a repeat over all of it at every bound would take 40% of `--algo auto` there."""
        from scipy.sparse import csr_matrix

        if self._matrix is None or self._matrix.shape != (self.keys.size, num_links):
            self._matrix = csr_matrix((self.link_frac, self.link_idx, self.link_ptr),
                                      shape=(self.keys.size, num_links))
        used = np.flatnonzero(pair_bytes)           # (a scan of the table, not a sort)
        if used.size * 4 < self.keys.size:          # a few pairs (a ring's): their rows
            return self._matrix[used].T @ pair_bytes[used]
        return self._matrix.T @ pair_bytes

    def _rows(self, topology, key: np.ndarray) -> np.ndarray:
        """Row of every pair key, routing the pairs not seen yet. On machines of up to
        :data:`DENSE_NODES` nodes the rows are read from a table of every possible key
        (4 bytes each: 4 MB at 1,024 nodes) instead of a binary search of the held keys:
        a torus 32x32 ``--algo auto`` sweep bounds six candidates of 2-4M sends per size,
        and the searches were a quarter of its time."""
        pos, missing = self._find(topology.num_nodes, key)
        if missing.any():
            self._add(topology, np.unique(key[missing]))
            pos, _ = self._find(topology.num_nodes, key)
        return pos

    def _find(self, nodes: int, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row of every key, which keys are not held yet) by the table or the search."""
        if nodes <= DENSE_NODES:
            pos = self._dense(nodes)[key].astype(np.int64)
            return pos, pos < 0
        pos = np.searchsorted(self.keys, key).clip(0, max(self.keys.size - 1, 0))
        if self.keys.size == 0:
            return pos, np.ones(key.size, dtype=bool)
        return pos, self.keys[pos] != key

    def _dense(self, nodes: int) -> np.ndarray:
        """Row of every key src * nodes + dst (-1: not held), made when the keys change."""
        if self._index is None or self._index.size != nodes * nodes:
            self._index = np.full(nodes * nodes, -1, dtype=np.int32)
            self._index[self.keys] = np.arange(self.keys.size, dtype=np.int32)
        return self._index

    def _add(self, topology, new: np.ndarray) -> None:
        """Route the pair keys ``new`` (sorted, none held yet) and merge them in."""
        from ..routing import route

        nodes = topology.num_nodes
        routes = route(topology, new // nodes, new % nodes, router=self.router)
        bandwidth = np.asarray(topology.bandwidth, dtype=np.float64)
        hops = np.diff(routes.path_ptr)
        cap = np.full(hops.size, np.inf)
        if routes.path_links.size:
            cap[hops > 0] = np.minimum.reduceat(bandwidth[routes.path_links],
                                                routes.path_ptr[:-1][hops > 0])
        rate = routes.sub_frac / cap
        lat = routes.sub_latency
        # One line per pair when its sub-flows share a latency (sprayed planes): the
        # steepest; else every sub-flow's line (the max over them is the same).
        subs = np.diff(routes.sub_ptr)
        first = routes.sub_ptr[:-1]
        flat = (np.maximum.reduceat(lat, first) == np.minimum.reduceat(lat, first)
                if lat.size else np.ones(new.size, dtype=bool))
        keep = ~flat[routes.sub_req]
        keep[first[flat]] = True
        line_rate = rate.copy()
        line_rate[first[flat]] = np.maximum.reduceat(rate, first)[flat]
        new_lines = np.where(flat, 1, subs)
        new_links = np.bincount(np.repeat(routes.sub_req, hops), minlength=new.size)
        self._merge(new, new_lines, lat[keep], line_rate[keep], new_links,
                    routes.path_links, np.repeat(routes.sub_frac, hops))

    def _merge(self, new, new_lines, new_lat, new_rate, new_links, new_idx, new_frac):
        """Held rows and new rows (CSR by pair) as one table sorted by key."""
        keys = np.concatenate([self.keys, new])
        order = np.argsort(keys, kind="stable")

        def gather(ptr, extra_counts, *columns):
            counts = np.concatenate([np.diff(ptr), extra_counts])[order]
            starts = np.concatenate([ptr[:-1], ptr[-1] + np.concatenate(
                [[0], np.cumsum(extra_counts)[:-1]])]).astype(np.int64)[order]
            take = _ranges(starts, counts)
            out_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
            return (out_ptr, *(np.concatenate(c)[take] for c in columns))

        self.line_ptr, self.line_lat, self.line_rate = gather(
            self.line_ptr, new_lines, (self.line_lat, new_lat), (self.line_rate, new_rate))
        self.link_ptr, self.link_idx, self.link_frac = gather(
            self.link_ptr, new_links, (self.link_idx, new_idx), (self.link_frac, new_frac))
        self.keys = keys[order]
        self._matrix = self._index = None


def _times(nbytes: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """bytes x (s per byte), 0 for no bytes (even at an infinite time per byte)."""
    with np.errstate(invalid="ignore"):
        return np.where(nbytes > 0, nbytes * rate, 0.0)


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(s, s + c)`` of every (start, count)."""
    total = int(counts.sum())
    first = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    return first + np.arange(total, dtype=np.int64)


def _subflows(topology, schedule, routes) -> tuple[np.ndarray, np.ndarray]:
    """Bytes of every sub-flow, and the smallest capacity on its path (inf: no link)."""
    send_ops = np.flatnonzero(schedule.kind == SEND)
    sub_bytes = schedule.nbytes[send_ops][routes.sub_req] * routes.sub_frac
    hops = np.diff(routes.path_ptr)
    sub_cap = np.full(hops.size, np.inf)
    crossing = hops > 0
    if routes.path_links.size:
        caps = np.asarray(topology.bandwidth, dtype=np.float64)[routes.path_links]
        sub_cap[crossing] = np.minimum.reduceat(caps, routes.path_ptr[:-1][crossing])
    return sub_bytes, sub_cap


def link_load(topology, routes, sub_bytes: np.ndarray) -> float:
    """max over links of (bytes crossing it) / capacity, s."""
    if routes.path_links.size == 0:
        return 0.0
    per_entry = np.repeat(sub_bytes, np.diff(routes.path_ptr))
    load = np.bincount(routes.path_links, weights=per_entry, minlength=topology.num_links)
    return float((load / np.asarray(topology.bandwidth, dtype=np.float64)).max())


def compute_chain(schedule, ranks: np.ndarray | None = None) -> tuple[float, int]:
    """(s, rank): the longest chain of dependent computes of ``schedule`` (only those on
    the ranks of the boolean mask ``ranks``, when given; the others, sends and barriers
    cost nothing), and the rank with the most such compute seconds (-1: none).

    A compute of c seconds finishes c after its release, which is no earlier than its
    dependencies' finish, so no run of the schedule is shorter. An in-network all-reduce
    whose P switches reduce one piece at a time at r bytes/s chains S/P / r s of reductions
    on each switch: that is the bound of the switches' reduce resources.

    >>> from netsim.schedule import ScheduleBuilder
    >>> b = ScheduleBuilder(2); w = b.compute(1, 2.0); _ = b.send(1, 0, 1e9, deps=[w])
    >>> _ = b.compute(0, 1.0); compute_chain(b.build())
    (2.0, 1)
    >>> compute_chain(b.build(), ranks=np.array([True, False]))
    (1.0, 0)
    """
    timed = (schedule.kind == COMPUTE) & (np.asarray(schedule.seconds) > 0)
    if ranks is not None:
        timed &= np.asarray(ranks, dtype=bool)[np.maximum(schedule.src, 0)]
    if not timed.any():
        return 0.0, -1
    seconds = np.where(timed, np.asarray(schedule.seconds, np.float64), 0.0)
    # the longest path counts every compute's seconds: give the others none
    total = _longest_path(_with_seconds(schedule, seconds), np.zeros(schedule.num_ops),
                          0.0, None)
    # a label for the bound's detail, not part of the bound: the rank with the most
    # seconds of computes of its own (a compute's rank is its src)
    per_rank = np.bincount(schedule.src[timed], weights=seconds[timed])
    return total, int(np.argmax(per_rank))


def _with_seconds(schedule, seconds: np.ndarray):
    """``schedule`` with the computes' ``seconds`` replaced (arrays shared, not copied)."""
    from dataclasses import replace

    return replace(schedule, seconds=seconds)


def critical_path(schedule, routes, sub_bytes: np.ndarray, sub_cap: np.ndarray, *,
                  overhead=0.0, not_before: np.ndarray | None = None) -> float:
    """The DAG's longest path, every op costing at least what the module docstring says, s."""
    return _longest_path(schedule, _op_costs(schedule, routes, sub_bytes, sub_cap),
                         overhead, not_before)


def _longest_path(schedule, drain: np.ndarray, overhead, not_before) -> float:
    """Longest path with op cost ``drain`` (sends: from start to finish) + compute seconds
    + the sends' overhead. Ops are taken in blocks of consecutive ops none of which depends
    on another of its block (builders add a step's sends together), each block in a few
    numpy operations."""
    n = schedule.num_ops
    if n == 0:
        return 0.0
    cost = drain + np.where(schedule.kind == COMPUTE, np.asarray(schedule.seconds, np.float64),
                            0.0)
    sends = schedule.kind == SEND
    over = np.asarray(overhead, dtype=np.float64)
    cost[sends] += over[sends] if over.ndim else float(over)
    floor = np.zeros(n) if not_before is None else np.asarray(not_before, np.float64)
    dep_ptr, dep_idx = schedule.dep_ptr, schedule.dep_idx
    # numba paid for already: compiled from a few dozen ops up (dgx-h100 bounds of 56-224
    # ops: 6-7 us against 16-470 us in numpy blocks; the same floats)
    if COMPILED and "numba" in sys.modules and n > COMPILED_FROM:
        from ._lower_bound_kernel import longest_path

        return longest_path(cost, floor, dep_ptr, dep_idx)
    has = np.diff(dep_ptr) > 0
    last_dep = np.full(n, -1, dtype=np.int64)       # the latest op each op depends on
    if dep_idx.size:
        last_dep[has] = np.maximum.reduceat(dep_idx, dep_ptr[:-1][has])
    finish = np.zeros(n)
    start = 0
    while start < n:
        end = _block_end(last_dep, start)
        release = floor[start:end].copy()
        lo, hi = dep_ptr[start], dep_ptr[end]
        if hi > lo:
            waits = has[start:end]
            latest = np.maximum.reduceat(finish[dep_idx[lo:hi]], dep_ptr[start:end][waits] - lo)
            release[waits] = np.maximum(release[waits], latest)
        finish[start:end] = release + cost[start:end]
        start = end
    return float(finish.max())


def _block_end(last_dep: np.ndarray, start: int) -> int:
    """End of the longest run of ops from ``start`` that depend only on ops before it:
    galloping windows, so the search costs about the block's length."""
    width = 64
    n = last_dep.size
    while True:
        stop = min(start + width, n)
        inside = np.flatnonzero(last_dep[start + 1:stop] >= start)
        if inside.size:
            return start + 1 + int(inside[0])
        if stop == n:
            return n
        width *= 4


def _op_costs(schedule, routes, sub_bytes, sub_cap) -> np.ndarray:
    """Least time of every send from its start (release + overhead) to its finish, s
    (module docstring); 0 for other ops."""
    cost = np.zeros(schedule.num_ops)
    send_ops = np.flatnonzero(schedule.kind == SEND)
    if send_ops.size == 0:
        return cost
    with np.errstate(divide="ignore", invalid="ignore"):
        drain = np.where(sub_bytes > 0, sub_bytes / sub_cap, 0.0)
    sub_time = routes.sub_latency + drain
    per_send = np.zeros(send_ops.size)
    has = np.diff(routes.sub_ptr) > 0
    if sub_time.size:
        per_send[has] = np.maximum.reduceat(sub_time, routes.sub_ptr[:-1][has])
    cost[send_ops] = per_send
    return cost
