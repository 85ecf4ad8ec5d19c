"""In-network reduction (NVLink SHARP / NVLS, InfiniBand SHARP): switches reduce.

Every switch with ``reduce: True`` that is cabled to the node of every rank is one
*plane* (one level of switches: multi-level SHARP trees are not modelled); each rank's
block (chunk r, owned by rank r) is split evenly over the P planes. The switches run as
extra ranks n, n+1, ... whose nodes are listed in ``schedule.extra_nodes``.

* reduce-scatter (``multimem.ld_reduce``): for every chunk c and plane s, every rank sends
  its copy of piece (c, s) to switch s, which reduces the n copies and sends the result to
  rank c. With the switch attribute ``reduce_bandwidth`` (bytes/s) the reduction is a
  compute op of (piece bytes) / reduce_bandwidth s on the switch, one piece at a time;
* all-gather (``multimem.st``): rank c sends piece (c, s) to switch s, which multicasts it
  to every rank (itself included: the store lands in every GPU's copy);
* all-reduce: both. Per rank and direction that is S (N+1)/N bytes, about half of a ring.

With ``options.chunks`` = C every piece is cut in C chunks that pipeline: chunk j of a
stream (a rank's copies to a switch, the switch's results to a rank, ...) follows chunk
j-1, so the multicast of early chunks overlaps the reduction of later ones.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import InputError
from .options import AlgoOptions
from .innetwork_planes import built_planes, plane_classes
from .plan import Plan, serial_computes
from .registry import reason_from, register

__all__ = ["reducing_switches", "switch_reason"]


def reducing_switches(num_ranks: int, options: AlgoOptions) -> list[int]:
    """Node indices of the reducing switches cabled to the node of every rank (the planes)."""
    topo = options.topology
    if topo is None:
        raise InputError("innetwork needs a topology with a reducing switch (reduce: true)")
    reducing = {int(v) for v in np.flatnonzero(topo.is_switch) if topo.can_reduce(int(v))}
    if not reducing:
        raise InputError(f"innetwork needs a switch with reduce: true; topology "
                         f"{topo.name!r} has none")
    nodes = set(options.node_of_rank(num_ranks).tolist())
    for node in nodes:
        reducing &= set(topo.link_dst[topo.link_src == node].tolist())
    if not reducing:
        raise InputError(f"innetwork needs a reducing switch cabled to every rank; none of "
                         f"{topo.name!r} is (multi-level SHARP trees are not modelled)")
    return sorted(reducing)


#: Why in-network reduction cannot run here (None if it can).
switch_reason = reason_from(reducing_switches, "innetwork")


def _plan(op: str, num_ranks: int, size: float, options: AlgoOptions):
    """(plan, every plane's switch, the classes of alike planes, of which only
    :func:`.innetwork_planes.built_planes` are built, when ``options.extra["planes"]`` asks
    for it and nothing is annotated, else None)."""
    switches = reducing_switches(num_ranks, options)
    classes = None
    if options.extra.get("planes") and options.extra.get("annotate") is False:
        classes = plane_classes(options.node_of_rank(num_ranks), options.topology, switches)
        if len(built_planes(classes)) == len(switches):    # every plane built: no saving
            classes = None
    built = len(switches) if classes is None else len(built_planes(classes))
    # Pieces are those of every plane (bytes per piece do not depend on what is built).
    plan = Plan(op, num_ranks, size, num_ranks * len(switches) * options.chunks, options,
                extra_ranks=built)
    return plan, switches, classes


class _Streams:
    """Last op of every stream (a pipelined flow of chunks along one path), so chunk j of a
    stream starts after chunk j-1 of it: that is what lets phases overlap in a pipeline."""

    def __init__(self) -> None:
        self.last: dict[str, np.ndarray] = {}

    def after(self, name: str, shape) -> np.ndarray:
        return self.last.get(name, np.full(shape, -1, dtype=np.int64))

    def record(self, name: str, ids: np.ndarray) -> np.ndarray:
        self.last[name] = ids
        return ids


def _one_link_each(num_ranks: int, options: AlgoOptions, switches: list[int]) -> bool:
    """Whether every rank's node has exactly one link to every reducing switch (NVL72):
    then a rank's copies to a switch all take that link, whatever the router."""
    topo = options.topology
    nodes = np.asarray(options.node_of_rank(num_ranks), dtype=np.int64)
    if np.unique(nodes).size != nodes.size:
        return False
    to = np.isin(topo.link_src, nodes) & np.isin(topo.link_dst, switches)
    pairs = topo.link_src[to] * topo.num_nodes + topo.link_dst[to]
    return bool(to.sum() == nodes.size * len(switches) and np.unique(pairs).size == to.sum())


def _reduce_at_switch(plan: Plan, s: int, node: int, j: int, options: AlgoOptions,
                      streams: _Streams, together: bool = False, *, P: int,
                      rank: int) -> np.ndarray:
    """Chunk j of plane s, phase 1; returns (n,): when rank c holds its piece reduced.

    ``together``: a rank's n copies to the switch leave together (their previous chunks
    did, by induction), take the same one link and carry the same bytes, so under max-min
    they drain at one rate and finish together; then "the n copies of piece c have
    arrived" is "every copy has arrived", one barrier. Same times, and the copies of
    different owners become alike (the engine's symmetry classes merge them).
    ``P`` is the number of planes, ``rank`` the switch's rank in the schedule.
    """
    n, C = plan.n, options.chunks
    ranks = np.arange(n, dtype=np.int64)
    src, owner = np.repeat(ranks, n), np.tile(ranks, n)
    up = streams.record(f"up{s}", plan.sends(
        src, rank, pieces=(((owner * P + s) * C + j))[:, None],
        deps=streams.after(f"up{s}", n * n)))
    copies = up.reshape(n, n).T                     # row c: the n copies of c's piece
    if together:
        copies = np.broadcast_to(plan.barriers(up[None, :]), (n, 1))
    rate = options.topology.node_attrs[node].get("reduce_bandwidth")
    if rate:
        copies = _serial_reductions(plan, rank, copies, plan.piece_bytes / float(rate),
                                    streams.after(f"alu{s}", ()))
        streams.record(f"alu{s}", copies[-1])
    return streams.record(f"down{s}", plan.sends(
        rank, ranks, pieces=((ranks * P + s) * C + j)[:, None],
        deps=[copies, streams.after(f"down{s}", n)]))


def _serial_reductions(plan: Plan, switch: int, copies: np.ndarray, seconds: float,
                       previous) -> np.ndarray:
    """One compute op per piece (row of ``copies``) on the switch, each after the previous
    (one ALU), as one block of ops."""
    return serial_computes(plan, switch, seconds, copies, int(previous))


def _multicast(plan: Plan, s: int, j: int, ready: np.ndarray | None, C: int,
               streams: _Streams, *, P: int, rank: int) -> None:
    """Chunk j of plane s (of ``P``; the switch is ``rank``), phase 2: rank c stores its
    piece on the switch, which sends it to every rank."""
    n = plan.n
    ranks = np.arange(n, dtype=np.int64)
    piece = (ranks * P + s) * C + j
    stored = streams.record(f"store{s}", plan.sends(
        ranks, rank, pieces=piece[:, None], deps=[ready, streams.after(f"store{s}", n)]))
    streams.record(f"cast{s}", plan.sends(
        rank, np.tile(ranks, n), pieces=np.repeat(piece, n)[:, None],
        deps=[np.repeat(stored, n), streams.after(f"cast{s}", n * n)]))


def _build(op: str, num_ranks: int, size: float, options: AlgoOptions, *, reduce: bool,
           gather: bool):
    """Chunk by chunk (options.chunks), plane by plane: the chunks pipeline through.

    With ``options.extra["planes"]`` (and no annotation) only the first planes of every
    class of alike planes (:func:`.innetwork_planes.built_planes`) are built, each as its
    own switch rank; ``meta["planes"]`` then says how the full build lays out its ops, for
    :func:`netsim.engine.planes.plane_map` (the engine's stage checks, simulates these
    planes and expands the result to every plane).
    """
    plan, switches, classes = _plan(op, num_ranks, size, options)
    built = list(range(len(switches))) if classes is None else built_planes(classes)
    streams = _Streams()
    together = reduce and _one_link_each(num_ranks, options, switches)
    group = [0] * len(built)                    # ops of one plane and chunk, per built one
    # Chunk j >= 2 is chunk 1 with every op and every dependency (on its own chunk or the
    # one before: the streams) one chunk of ops later: written as such (:func:`_tiled`),
    # not added op block by op block, unless the ops carry their pieces (annotation).
    tile = TILE and not plan.annotate and options.chunks > 2
    firsts = []                                 # ops before each chunk added
    for j in range(2 if tile else options.chunks):
        firsts.append(len(plan))
        for k, s in enumerate(built):
            start, rank = len(plan), num_ranks + k
            ready = (_reduce_at_switch(plan, s, switches[s], j, options, streams, together,
                                       P=len(switches), rank=rank) if reduce else None)
            if gather:
                _multicast(plan, s, j, ready, options.chunks, streams, P=len(switches),
                           rank=rank)
            group[k] = len(plan) - start
    schedule = plan.build()
    if tile:
        schedule = _tiled(schedule, firsts[1], options.chunks)
    meta = schedule.meta
    if classes is not None:
        meta = {**meta, "planes": {"switches": tuple(switches), "chunks": options.chunks,
                                   "classes": tuple(tuple(c) for c in classes),
                                   "group": tuple(group), "kinds": schedule.kind}}
    return replace(schedule, meta=meta,
                   extra_nodes=tuple(int(switches[s]) for s in built))


#: False: add every chunk's ops (tests compare the two builds).
TILE = True


def _tiled(schedule, per_chunk: int, chunks: int):
    """``schedule`` of two chunks (``per_chunk`` ops each, the second's dependencies on
    the first or itself) extended to ``chunks`` chunks: chunk j >= 2 is chunk 1 with its op
    ids and dependencies shifted by (j - 1) x ``per_chunk``."""
    if schedule.num_ops != 2 * per_chunk:
        raise AssertionError("innetwork: the chunks of a build differ in size")
    second = slice(per_chunk, 2 * per_chunk)
    more = chunks - 1

    def column(values: np.ndarray) -> np.ndarray:
        return np.concatenate([values[:per_chunk], np.tile(values[second], more)])

    lo, hi = int(schedule.dep_ptr[per_chunk]), int(schedule.dep_ptr[2 * per_chunk])
    counts = np.diff(schedule.dep_ptr[per_chunk:2 * per_chunk + 1])
    deps = schedule.dep_idx[lo:hi]
    shift = np.repeat(np.arange(more, dtype=np.int64) * per_chunk, deps.size)
    dep_idx = np.concatenate([schedule.dep_idx[:lo], np.tile(deps, more) + shift])
    dep_ptr = np.concatenate([schedule.dep_ptr[:per_chunk + 1],
                              lo + np.cumsum(np.tile(counts, more))])
    return replace(schedule, kind=column(schedule.kind), src=column(schedule.src),
                   dst=column(schedule.dst), nbytes=column(schedule.nbytes),
                   seconds=column(schedule.seconds), tag=column(schedule.tag),
                   dep_ptr=dep_ptr, dep_idx=dep_idx)


@register("allreduce", "innetwork", "NVLS/SHARP: switches reduce (ld_reduce) and multicast "
          "(st); S(N+1)/N bytes per rank and direction", requires="reducing-switch",
          check=switch_reason, pipelined=True, size_linear=True)
def allreduce(num_ranks: int, size: float, options: AlgoOptions):
    return _build("allreduce", num_ranks, size, options, reduce=True, gather=True)


@register("reducescatter", "innetwork", "NVLS/SHARP: every rank sends each chunk to the "
          "switches, which reduce it and send it to its owner", requires="reducing-switch",
          check=switch_reason, pipelined=True, size_linear=True)
def reducescatter(num_ranks: int, size: float, options: AlgoOptions):
    return _build("reducescatter", num_ranks, size, options, reduce=True, gather=False)


@register("allgather", "innetwork", "NVLS multicast: each rank stores its block on the "
          "switches, which send it to every rank", requires="reducing-switch",
          check=switch_reason, pipelined=True, size_linear=True)
def allgather(num_ranks: int, size: float, options: AlgoOptions):
    return _build("allgather", num_ranks, size, options, reduce=False, gather=True)
