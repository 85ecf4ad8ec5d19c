"""Alike in-network planes: run a few per class, expand to every plane (exact).

An in-network reduction (:mod:`netsim.algorithms.innetwork`) runs in planes, one reducing
switch each, that are independent: every op of plane s involves switch s only, its streams
chain its own ops, and its sends cross only the links between the ranks and switch s.
Planes whose switches have the same reduction rate and whose links have the same
capacities and latencies, rank by rank, are isomorphic: the same ops on the same kind of
links, so max-min gives them the same rates at every moment and the same op times.
Running one plane per class (with the bytes a plane carries) then gives every plane's
times, and each link of another plane of the class carries what the corresponding link
of the simulated plane carries.

* the builder groups the planes by what the topology says of them
  (:func:`netsim.algorithms.innetwork_planes.plane_classes`) and builds
  :func:`built_planes` of them (two per class, for the engine's symmetry search) when
  ``options.extra["planes"]`` asks for it, describing them in ``schedule.meta["planes"]``;
* :func:`plane_map` checks at run time, by routing every (rank, switch) pair of every plane,
  that the routes of a plane map link by link onto those of its class's simulated plane
  (same sub-flows, fractions, capacities, latencies) and that no two planes share a link;
  None when they do not (then every plane runs);
* :func:`expand_result` turns the run of the simulated planes into the result of the
  whole schedule: per-op times of every plane's ops in the full build's op order, per-link
  loads of every plane's links, the full flow count.

:func:`netsim.engine.stage.simulate` is the one caller in a run: it finds what cannot be
told apart, runs one representative and expands.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..schedule import SEND
from ..kept import Kept
from .result import Deferred

__all__ = ["PlaneMap", "COPIES", "built_planes", "plane_map", "expand_result", "PerPlane"]


def _rate(topo, node: int):
    """A switch's reduction rate (bytes/s) or None, as the builder reads it."""
    rate = topo.node_attrs[node].get("reduce_bandwidth")
    return float(rate) if rate else None


#: Planes built per class: two, not one, so that the engine's symmetry search, which gives
#: up when its classes are more than half the flows (EngineConfig.symmetry_max_class_share),
#: still finds the classes inside a plane (they merge the two copies): one NVLS plane alone
#: has as many classes as half its flows, and without them the engine solves every flow
#: (figures in benchmarks/RESULTS.md, "engine defaults").
COPIES = 2


def built_planes(classes: list[list[int]]) -> list[int]:
    """The planes to build: the first :data:`COPIES` of every class, ascending.

    >>> built_planes([[0, 3], [1, 2, 4, 5], [6]])
    [0, 1, 2, 3, 6]
    """
    return sorted(s for members in classes for s in members[:COPIES])


@dataclass(frozen=True)
class PlaneMap:
    """How the run of one plane per class expands to every plane (see :func:`plane_map`).

    ``links[k]``: (members of class k, links of its first plane) link ids, row i the
    links of member i that correspond to row 0's; ``flows[k]``: sub-flows of one plane of
    class k; ``built[k]``: how many planes of class k were simulated; ``ops``: how the
    ops of the full schedule take those of the simulated one (:class:`_OpLayout`);
    ``switches``: every plane's switch node, in plane order.
    """

    links: tuple[np.ndarray, ...]
    flows: tuple[int, ...]
    built: tuple[int, ...]
    ops: "_OpLayout"
    switches: tuple[int, ...]
    classes: tuple[tuple[int, ...], ...]


def _plane_block(schedule, planes: dict) -> int | None:
    """Where the planes' ops start in ``schedule`` (a wrapper such as nccl may put shared
    ops without sends before and after them), or None if they are not found whole: the
    first send of each fixes the one place they can start."""
    kinds, kind = np.asarray(planes["kinds"]), schedule.kind
    sends, own = np.flatnonzero(kind == SEND), np.flatnonzero(kinds == SEND)
    if not sends.size or sends.size != own.size:     # a send outside the planes
        return None
    offset = int(sends[0] - own[0])
    if offset < 0 or offset + kinds.size > kind.size \
            or not np.array_equal(kind[offset:offset + kinds.size], kinds):
        return None
    return offset


def plane_map(machine, schedule, nodes: np.ndarray, router=None) -> PlaneMap | None:
    """Check that the planes of ``schedule.meta["planes"]`` (some built per class) are
    isomorphic and share no link on ``machine`` under ``router``; return the map from the
    simulated planes to every plane, or None (build every plane) when they are not.

    Routes are compared pair by pair, so the router must route by (source, destination)
    alone (``router.pair_only``: spray, not a hash of the flow id).
    """
    planes = schedule.meta.get("planes")
    if planes is None:
        return None
    # all the map depends on: the machine and router (the same objects), the nodes, the
    # schedule's shape (not its bytes) and its planes; a sweep's sizes ask again
    described = sorted(planes.items())
    values = (bool(schedule.paths), tuple(schedule.extra_nodes), schedule.num_ops,
              tuple((k, v) for k, v in described if not isinstance(v, np.ndarray)))
    arrays = (np.asarray(nodes), schedule.kind, schedule.src, schedule.dst, schedule.dep_ptr,
              schedule.dep_idx, *(v for _, v in described if isinstance(v, np.ndarray)))
    kept = _maps.find(values, arrays, (machine, router))
    if kept is not None:
        return kept[0]
    found = _plane_map(machine, schedule, planes, np.asarray(nodes), router)
    _maps.put(values, arrays, found, (machine, router))
    return found


#: The last four maps, with all that each depended on (plane_map).
_maps = Kept()


def _plane_map(machine, schedule, planes: dict, nodes: np.ndarray, router) -> PlaneMap | None:
    """:func:`plane_map` of the ``planes`` of ``schedule.meta``."""
    from ..routing import default_router

    router = default_router(machine) if router is None else router
    if schedule.paths or not getattr(router, "pair_only", False):
        return None
    offset = _plane_block(schedule, planes)
    if offset is None:
        return None
    n, switches = int(nodes.size), [int(v) for v in planes["switches"]]
    classes = [list(c) for c in planes["classes"]]
    built = built_planes(classes)
    if tuple(schedule.extra_nodes) != tuple(switches[s] for s in built):
        return None
    for members in classes:         # the builder grouped by these; the machine may differ
        if len({(_rate(machine, switches[s]), machine.can_reduce(switches[s]))
                for s in members}) > 1:
            return None
    pairs = _first_plane_pairs(schedule, n, classes, built)
    if pairs is None:
        return None
    routes = _member_routes(machine, router, switches, nodes, classes, *pairs[:3])
    member_links = _member_links(machine, routes, classes, pairs[1], pairs[3])
    if member_links is None:
        return None
    links_out, flows = member_links
    layout = _OpLayout.of(schedule.num_ops, offset, planes, classes, built)
    if not layout.independent(schedule):
        return None
    return PlaneMap(tuple(links_out), tuple(flows),
                    tuple(len([s for s in c if s in built]) for c in classes), layout,
                    tuple(switches), tuple(tuple(c) for c in classes))


def _first_plane_pairs(schedule, n: int, classes: list[list[int]], built: list[int]):
    """The (rank, direction) pairs the sends of every class's first plane use: per pair
    its rank, class, direction (1: rank -> switch) and how many sends use it; None when a
    send joins two ranks or two switches."""
    # The switch rank of every class's first plane (the one compared with its members).
    first = {n + built.index(members[0]): c for c, members in enumerate(classes)}
    sends = np.flatnonzero(schedule.kind == SEND)
    src, dst = schedule.src[sends], schedule.dst[sends]
    up = dst >= n                   # rank -> switch; else switch -> rank
    if ((src >= n) == up).any():    # a send between two ranks or two switches
        return None
    rank, switch = np.where(up, src, dst), np.where(up, dst, src)
    of_class = np.full(n + len(built), -1, dtype=np.int64)
    of_class[list(first)] = list(first.values())
    k = of_class[switch]
    keep = k >= 0                   # sends of the first plane of a class
    key = (up[keep] * len(classes) + k[keep]) * n + rank[keep]
    pairs, per_pair = np.unique(key, return_counts=True)
    return (pairs % n, (pairs // n) % len(classes), pairs // (n * len(classes)), per_pair)


def _member_routes(machine, router, switches, nodes, classes, p_rank, p_k, p_up):
    """Routes of every pair of every class, for every member plane of that class, class
    by class and member by member."""
    from ..routing import route

    req_pair, req_plane = [], []
    for c, members in enumerate(classes):
        mine = np.flatnonzero(p_k == c)
        for s in members:
            req_pair.append(mine)
            req_plane.append(np.full(mine.size, s))
    req_pair, req_plane = np.concatenate(req_pair), np.concatenate(req_plane)
    switch_node = np.asarray(switches, dtype=np.int64)[req_plane]
    rank_node = np.asarray(nodes, dtype=np.int64)[p_rank[req_pair]]
    going_up = p_up[req_pair].astype(bool)
    return route(machine, np.where(going_up, rank_node, switch_node),
                 np.where(going_up, switch_node, rank_node), router=router)


def _member_links(machine, routes, classes, p_k, per_pair):
    """Per class, its members' links (members x links of the first plane, row i the links
    of member i that correspond to row 0's) and the sub-flows of one plane; None when a
    member's routes differ in shape from the first plane's, map a link inconsistently, or
    two planes share a link."""
    subs = np.diff(routes.sub_ptr)
    lengths = np.diff(routes.path_ptr)
    links_out, flows, seen = [], [], 0
    at = 0
    for c, members in enumerate(classes):
        mine = int((p_k == c).sum())
        rows = [np.arange(at + i * mine, at + (i + 1) * mine) for i in range(len(members))]
        at += mine * len(members)
        per_plane = [_plane_routes(routes, r, subs, lengths) for r in rows]
        if not all(_same_shape(machine, per_plane[0], other) for other in per_plane[1:]):
            return None
        table = np.stack([p[3] for p in per_plane])             # members x incidences
        a, first_at = np.unique(table[0], return_index=True)
        table = table[:, first_at]                              # one column per link
        # Consistent: the same simulated link always maps to the same member link.
        for i in range(1, len(members)):
            if np.unique(np.stack([per_plane[0][3], per_plane[i][3]]), axis=1).shape[1] \
                    != a.size:
                return None
        links_out.append(table)
        seen += table.size
        flows.append(int((subs[rows[0]] * per_pair[p_k == c]).sum()))
    every = np.concatenate([t.ravel() for t in links_out])
    if np.unique(every).size != seen:        # two planes share a link (or map twice)
        return None
    return links_out, flows


def _plane_routes(routes, rows: np.ndarray, subs: np.ndarray, lengths: np.ndarray):
    """(sub-flows per request, fractions, path lengths, links) of requests ``rows``."""
    sub_rows = np.concatenate([np.arange(routes.sub_ptr[r], routes.sub_ptr[r + 1])
                               for r in rows.tolist()]) if rows.size else np.zeros(0, int)
    links = np.concatenate([routes.path_links[routes.path_ptr[s]:routes.path_ptr[s + 1]]
                            for s in sub_rows.tolist()]) if sub_rows.size else np.zeros(0, int)
    return subs[rows], routes.sub_frac[sub_rows], lengths[sub_rows], np.asarray(links)


def _same_shape(machine, a, b) -> bool:
    """Same sub-flows, fractions and path lengths, link by link the same capacity and
    latency."""
    return (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
            and np.array_equal(a[2], b[2])
            and np.array_equal(machine.bandwidth[a[3]], machine.bandwidth[b[3]])
            and np.array_equal(machine.latency[a[3]], machine.latency[b[3]]))


@dataclass(frozen=True)
class _OpLayout:
    """Where the ops of every plane are, in the built schedule and in the full one.

    Both builds go chunk by chunk, plane by plane (:func:`netsim.algorithms.innetwork._build`): chunk j of
    the built one holds the built planes' ops (``built_at[i]``, ``group[i]`` ops for plane
    ``built[i]``), chunk j of the full one every plane's (``full_at[s]``); a plane not
    built has the times of the first plane of its class (``source[s]``, a built index).
    The ``offset`` ops before the planes and those after them are shared, kept once.
    """

    num_ops: int
    offset: int
    chunks: int
    group: np.ndarray
    built_at: np.ndarray
    full_at: np.ndarray
    source: np.ndarray

    @classmethod
    def of(cls, num_ops: int, offset: int, planes: dict, classes: list[list[int]],
           built: list[int]) -> "_OpLayout":
        group = np.asarray(planes["group"], dtype=np.int64)    # ops of one plane, built
        source = np.empty(sum(len(c) for c in classes), dtype=np.int64)
        for members in classes:
            source[members] = built.index(members[0])
        for i, s in enumerate(built):
            source[s] = i
        sizes = group[source]
        return cls(num_ops, offset, int(planes["chunks"]), group,
                   np.concatenate([[0], np.cumsum(group)[:-1]]),
                   np.concatenate([[0], np.cumsum(sizes)[:-1]]), source)

    def independent(self, schedule) -> bool:
        """Whether no op of a built plane waits for an op of another plane (or for a shared
        op after the planes): then each plane's times are its own."""
        per = int(self.group.sum())
        start, end = self.offset, self.offset + self.chunks * per
        plane = np.full(schedule.num_ops, -1, dtype=np.int64)     # -1: shared
        plane[start:end] = np.tile(np.repeat(np.arange(self.group.size), self.group),
                                   self.chunks)
        ptr = np.asarray(schedule.dep_ptr)
        waits = np.repeat(np.arange(schedule.num_ops), np.diff(ptr))
        on = np.asarray(schedule.dep_idx)
        inside = plane[waits] >= 0
        return bool(((plane[on[inside]] == plane[waits[inside]])
                     | (on[inside] < start)).all())

    def expand(self, values: np.ndarray) -> np.ndarray:
        """Per-op ``values`` of the built schedule -> those of the full one (block copies,
        no index array of the full length)."""
        values = np.asarray(values)
        per, full = int(self.group.sum()), int(self.group[self.source].sum())
        start, end = self.offset, self.offset + self.chunks * per
        out = np.empty(self.num_ops - self.chunks * per + self.chunks * full, values.dtype)
        out[:start] = values[:start]
        out[start + self.chunks * full:] = values[end:]
        built = values[start:end].reshape(self.chunks, per)
        into = out[start:start + self.chunks * full].reshape(self.chunks, full)
        for s, i in enumerate(self.source.tolist()):
            g, a, b = int(self.group[i]), int(self.full_at[s]), int(self.built_at[i])
            into[:, a:a + g] = built[:, b:b + g]
        return out


class PerPlane(Deferred):
    """Per-op values of the built planes' run, standing for those of the full schedule
    (``layout.expand``) until :class:`~netsim.engine.result.Result` is asked for them: a
    sweep on GB200 NVL72 keeps 2 of 18 planes' ops per size, not 4 arrays of 12M ops."""

    __slots__ = ("layout",)

    def __init__(self, values: np.ndarray, layout: _OpLayout):
        self.values, self.layout = np.asarray(values), layout

    @property
    def size(self) -> int:
        lay = self.layout
        per, full = int(lay.group.sum()), int(lay.group[lay.source].sum())
        return lay.num_ops + lay.chunks * (full - per)

    def _full(self) -> np.ndarray:
        return self.layout.expand(self.values)


def expand_result(result, pm: PlaneMap, nodes: np.ndarray):
    """The result of the full schedule from the run of a few planes per class (``pm`` from
    :func:`plane_map`): per-op arrays in the full build's op order (:class:`PerPlane`,
    laid out when first read), every plane's links loaded as its class's simulated plane,
    the full sub-flow count."""
    link_bytes, busy = result.link_bytes.copy(), result.link_busy.copy()
    peak = result.link_peak_flows.copy()
    flows = int(result.num_flows)
    for table, one, built in zip(pm.links, pm.flows, pm.built):
        for arr in (link_bytes, busy, peak):
            arr[table[1:]] = arr[table[0]][None, :]
        flows += (table.shape[0] - built) * one
    def per_op(values):
        return None if values is None else PerPlane(values, pm.ops)

    meta = {**result.meta, "planes": {"planes": len(pm.switches),
                                      "simulated": int(sum(pm.built))}}
    return replace(result, op_release=per_op(result.op_release),
                   op_start=per_op(result.op_start), op_finish=per_op(result.op_finish),
                   op_tags=per_op(result.op_tags),
                   op_ids=None,          # a collective's ops are their index
                   link_bytes=link_bytes, link_busy=busy, link_peak_flows=peak,
                   num_flows=flows, meta=meta,
                   placement=np.concatenate([np.asarray(nodes, np.int64),
                                             np.asarray(pm.switches, np.int64)]))
