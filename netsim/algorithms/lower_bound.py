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

The bound is the larger of the two. Both are exact arithmetic statements; the engine
merges events within a relative 1e-9 (``executor._REL_TOL``), so its makespan can be
below the exact one by about that much per event on a chain: a caller that prunes
compares ``bound * (1 - SLACK)``.

>>> from netsim.topology import ring
>>> from netsim.schedule import ScheduleBuilder
>>> b = ScheduleBuilder(2); first = b.send(0, 1, 1e9); _ = b.send(1, 0, 1e9, deps=[first])
>>> schedule_bound(ring(2, bandwidth=1e9, latency=1e-6), b.build(), [0, 1])   # 2 x (L + B/C)
2.000002
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..schedule import COMPUTE, SEND

__all__ = ["schedule_bound", "critical_path", "link_load", "SLACK"]

#: Relative margin a pruning caller takes off the bound (module docstring): 1000 events
#: on one chain, each merged up to 1e-9 early.
SLACK = 1e-6


def schedule_bound(topology, schedule, placement: Sequence[int], *, router=None,
                   overhead=0.0, not_before: np.ndarray | None = None,
                   routes=None) -> float:
    """Lower bound (s) on the makespan of ``schedule`` with rank r on ``placement[r]``
    (the larger of :func:`critical_path` and :func:`link_load`; module docstring).
    ``routes`` are the sends' routes (:func:`netsim.engine.route_schedule`), computed here
    when not given; ``overhead`` one value or one per op (s), as the engine takes it."""
    if routes is None:
        from ..engine import route_schedule

        routes = route_schedule(topology, schedule, np.asarray(placement, dtype=np.int64),
                                router)
    sub_bytes, sub_cap = _subflows(topology, schedule, routes)
    return max(critical_path(schedule, routes, sub_bytes, sub_cap, overhead=overhead,
                             not_before=not_before),
               link_load(topology, routes, sub_bytes))


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


def critical_path(schedule, routes, sub_bytes: np.ndarray, sub_cap: np.ndarray, *,
                  overhead=0.0, not_before: np.ndarray | None = None) -> float:
    """The DAG's longest path, every op costing at least what the module docstring says, s.

    Ops are taken in blocks of consecutive ops none of which depends on another of its
    block (builders add a step's sends together), each block in a few numpy operations.
    """
    n = schedule.num_ops
    if n == 0:
        return 0.0
    cost = _op_costs(schedule, routes, sub_bytes, sub_cap, overhead)
    floor = np.zeros(n) if not_before is None else np.asarray(not_before, np.float64)
    dep_ptr, dep_idx = schedule.dep_ptr, schedule.dep_idx
    counts = np.diff(dep_ptr)
    owner = np.repeat(np.arange(n), counts)
    last_dep = np.full(n, -1, dtype=np.int64)       # the latest op each op depends on
    if dep_idx.size:
        np.maximum.at(last_dep, owner, dep_idx)
    finish = np.zeros(n)
    start = 0
    while start < n:
        end = _block_end(last_dep, start)
        release = floor[start:end].copy()
        lo, hi = dep_ptr[start], dep_ptr[end]
        if hi > lo:
            np.maximum.at(release, owner[lo:hi] - start, finish[dep_idx[lo:hi]])
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


def _op_costs(schedule, routes, sub_bytes, sub_cap, overhead) -> np.ndarray:
    """Least time from an op's release to its finish, s (module docstring)."""
    n = schedule.num_ops
    cost = np.where(schedule.kind == COMPUTE, np.asarray(schedule.seconds, np.float64), 0.0)
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
    over = np.asarray(overhead, dtype=np.float64)
    over = over[send_ops] if over.ndim else np.full(send_ops.size, float(over))
    cost[send_ops] = over + per_send
    return cost
