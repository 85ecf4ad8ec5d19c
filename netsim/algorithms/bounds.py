"""Lower bounds on the time of a collective: the machine's (whatever the algorithm) and the
algorithm's (on the links its run used).

:func:`lower_bound` returns the largest of the bounds that apply to ``(op, topology, size,
ranks, placement)``; :func:`all_bounds` lists each of them. A run's machine efficiency is
``bound / simulated time`` (1.0: nothing can do better on this machine); its efficiency is
the same against :func:`algorithm_bound` (1.0: nothing of its kind can do better on its
links). Sizes follow
nccl-tests (S = all-reduce buffer, all-gather output, reduce-scatter input, one rank's
all-to-all send buffer, broadcast/reduce buffer); n is the number of ranks, B_out(r) and
B_in(r) the total bandwidth (bytes/s) of the links leaving and entering rank r's node.

**injection** (per endpoint; Chan, Heimlich, Purkayastha & van de Geijn 2007, bandwidth
column of their lower-bound table, in its multi-port form; Thakur, Rabenseifner & Gropp
2005 for the same n-terms). T >= max over ranks r of max(out_r / B_out(r), in_r / B_in(r)):

=============  ===========================  ===========================  =================
op             bytes out of rank r          bytes into rank r            why
=============  ===========================  ===========================  =================
allreduce      S, and 2 (n-1) S over all     S, and 2 (n-1) S over all    reductions at
               ranks together               ranks together               endpoints only
allreduce,     S                            S                            every input
in-network                                                                element leaves,
                                                                          every output
                                                                          element enters
allgather      -                            (n-1)/n S                    the others' blocks
reducescatter  (n-1)/n S                    -                            its other blocks
alltoall       (n-1)/n S                    (n-1)/n S                    one block per peer
broadcast      S (root)                     S (each non-root)
reduce         S (each non-root)            S (root)
=============  ===========================  ===========================  =================

Reducing at endpoints, each element takes n-1 transfers to gather and n-1 to spread its
sum: 2 (n-1) S leave and enter the ranks together, T >= 2 (n-1) S / sum_r B_out(r) (and
B_in). On ranks of equal bandwidth that is 2 (n-1)/n S / B, the bound nccl-tests derives
its busbw from (``t = (S/B) 2(n-1)/n``) and that the ring meets (Patarasuk & Yuan 2009).
It is not a bound on each rank: where ranks differ, a tree leaf on a slow link moves only
S (hence the per-rank S, which holds for every rank). When some switch of the
machine can reduce (``reduce: true``, NVLS / SHARP), the in-network bound S / B applies
instead (hardware-specs 5.4): data can be combined on the way, so only S must leave and
S must enter each rank.

**bisection** (only when the ranks occupy every endpoint of the machine; cf. Dally &
Towles 2004 ch. 3 and hardware-specs 5.5). Split the ranks into halves of floor(n/2) and
ceil(n/2); these bytes must cross the cut in each direction, so T >= bytes / W, W being
the machine's bisection bandwidth (bytes/s, the cut of an actual balanced split, see
:func:`netsim.topology.bisection_bandwidth`):

* alltoall: floor(n/2) ceil(n/2) S/n (each pair exchanges S/n). On a k x k mesh with m
  bytes per pair this is k^3 m / (4B), on a torus k^3 m / (8B);
* allgather, reducescatter: floor(n/2) S/n (the blocks owned on one side, needed or
  produced on the other);
* allreduce: S (the other half's contribution, however combined).

**latency**: information must travel from every rank whose input an output depends on, in
at least one message: T >= alpha + max over such (source, destination) pairs of the
smallest total link latency between their nodes. For allreduce, allgather, reducescatter
and alltoall every ordered pair counts; for broadcast the root to each rank, for reduce
each rank to the root. The textbook ceil(log2 n) alpha of Chan et al. assumes one message
in flight per node; netsim's nodes may send to many peers at once (a direct broadcast
through a switch takes two hops, not ceil(log2 n)), so that bound is not valid here and the
distance bound is used instead.

**compute** (only with a reduction rate gamma, bytes/s, and no reducing switch; Chan et al.
2007, compute column): an allreduce, reducescatter or reduce needs (n-1) S bytes of
reduction work in total, so some rank does at least (n-1)/n S / gamma.

**Two bounds per run.** The bounds above, over every link, are the *machine's*: the best any
algorithm could do. A run is also judged against the *algorithm's* bound
(:func:`algorithm_bound`), the same arguments on the links its run used (those that carried
bytes), with S per rank only if it reduced in-network, and its own sends' bytes per node
(:func:`traffic_bound`): T >= max over nodes v of bytes_v / B_used(v), s, and its longest
chain of in-switch reductions (:func:`reduction_bound`). Closed forms:

* ring or line pipeline (all-reduce): 2(n-1)/n S / B_ring, B_ring the bandwidth of the
  ring's own link out of a rank (bytes/s): one direction of a two-way ring, the GPU's
  links into an NVSwitch, never the switch's reduction;
* in-network (NVLS/SHARP) all-reduce: S / B_inj per rank, the bytes through each reducing
  switch over its used links, and S / (P r) when its P switches reduce one piece at a time
  at r bytes/s each (``reduce_bandwidth``: the switches' reduce resources);
* direct / one-shot: the rank's own bytes ((n-1) S for one-shot) over its injection links;
* double binary tree: about 2 S per rank over the links its two trees use.

A group (``--axis``, ``--nodes``, fewer ranks than endpoints) is bounded on the links it
can use (:func:`group_links`: the routes between its nodes), not the whole machine's.

>>> from netsim.topology import ring
>>> b = lower_bound("allreduce", ring(4, bandwidth=1e9), 4e9, 4)
>>> b.name, b.seconds
('injection', 3.0)
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import InputError, unknown_name
from ..schedule.ops import OPS
from ..units import format_rate, format_size, format_time

__all__ = ["Bound", "lower_bound", "all_bounds", "injection_bound", "bisection_bound",
           "latency_bound", "compute_bound", "in_network_reduction", "BOUND_OPS",
           "algorithm_bound", "traffic_bound", "node_traffic", "reduction_bound",
           "group_links",
           "GROUP_LINKS_LIMIT"]

#: The collectives the bounds know: every op.
BOUND_OPS = OPS
_ALL_PAIRS = ("allreduce", "allgather", "reducescatter", "alltoall")
# Beyond this many ranks the latency bound measures distances from rank 0 only (still a
# valid bound: rank 0's data must reach everyone), to keep it O(links log nodes).
_ALL_SOURCES_LIMIT = 1024


@dataclass(frozen=True)
class Bound:
    """A lower bound: ``seconds``, the ``name`` of the argument and a one-line ``detail``."""

    seconds: float
    name: str
    detail: str


def _nodes(topology, num_ranks: int, placement) -> np.ndarray:
    """Node index of each rank: ``placement[:num_ranks]`` or the first endpoints."""
    if placement is None:
        return topology.first_endpoints(num_ranks)
    nodes = np.asarray(placement, dtype=np.int64)[:num_ranks]
    if nodes.size < num_ranks:
        raise InputError(f"placement names {nodes.size} nodes for {num_ranks} ranks")
    return nodes


def in_network_reduction(topology) -> bool:
    """True if some switch of ``topology`` can reduce in-network (``reduce: true``)."""
    return any(topology.can_reduce(int(v)) for v in np.flatnonzero(topology.is_switch))


def _per_rank_bytes(op: str, size: float, n: int, root: int, in_network: bool):
    """(bytes that must leave, bytes that must enter) each rank, arrays of n (see module)."""
    out, into = np.zeros(n), np.zeros(n)
    share = (n - 1) / n * size
    if op == "allreduce":
        # Every rank sends and receives at least S (each element either leaves it, or is
        # the sum it sends out; it receives each sum or what makes it). The 2(n-1)/n S of
        # the ring holds for the ranks together, not each one (a leaf of a tree moves S):
        # :func:`injection_bound` adds it as 2(n-1) S over all the ranks' bandwidth.
        out[:], into[:] = size, size
    elif op == "allgather":
        into[:] = share
    elif op == "reducescatter":
        out[:] = share
    elif op == "alltoall":
        out[:], into[:] = share, share
    elif op == "broadcast":
        out[root], into[:] = size, size
        into[root] = 0.0
    elif op == "reduce":
        out[:], into[root] = size, size
        out[root] = 0.0
    return out, into


_INJECTION_TEXT = {"allreduce": "the ranks send and receive 2(n-1) S together",
                   "allgather": "receives (n-1)/n S",
                   "reducescatter": "sends (n-1)/n S", "alltoall": "sends and receives (n-1)/n S",
                   "broadcast": "root sends S, each other rank receives S",
                   "reduce": "each non-root sends S, the root receives S"}


def injection_bound(op: str, topology, size: float, num_ranks: int, placement=None, *,
                    root: int = 0, links: np.ndarray | None = None,
                    in_network: bool | None = None) -> Bound | None:
    """Per-endpoint bound (s): the busiest rank's bytes over its own links; see the module.

    ``links`` (a boolean mask over the links, None: all) counts only those links in B_out
    and B_in: the links a group of ranks can use, or those an algorithm's run used.
    ``in_network`` says whether an all-reduce may reduce in the switches (None: whenever
    some switch can, the machine's best). None when the bound does not apply: one rank,
    two ranks sharing a node (their exchange needs no link), or nothing to move.
    """
    n = int(num_ranks)
    nodes = _nodes(topology, n, placement)
    if n < 2 or np.unique(nodes).size < n or float(size) <= 0:
        return None
    if in_network is None:
        in_network = in_network_reduction(topology)
    in_network = op == "allreduce" and bool(in_network)
    out, into = _per_rank_bytes(op, float(size), n, root % n, in_network)
    b_out_all, b_in_all = _degree_bandwidth(topology, links)
    b_out, b_in = b_out_all[nodes], b_in_all[nodes]
    with np.errstate(divide="ignore", invalid="ignore"):
        times = np.maximum(np.where(out > 0, out / b_out, 0.0),
                           np.where(into > 0, into / b_in, 0.0))
    worst = int(np.argmax(times))
    name = "injection (in-network reduction)" if in_network else "injection"
    if op == "allreduce" and not in_network:
        # reducing at endpoints: n-1 transfers gather each element and n-1 spread its sum,
        # 2(n-1) S leaving and entering the ranks in all, over their summed bandwidth
        # (2(n-1)/n S / B on equal ranks, Patarasuk & Yuan 2009)
        total = 2 * (n - 1) * float(size)
        together = max(total / float(b_out.sum()), total / float(b_in.sum()))
        if together >= times[worst]:
            return Bound(together, name,
                         f"{_INJECTION_TEXT[op]}; {format_size(total)} in all over the "
                         f"ranks' {format_rate(float(min(b_out.sum(), b_in.sum())))}")
    what = "each rank sends and receives S" if in_network or op == "allreduce" \
        else _INJECTION_TEXT[op]
    bandwidth = min(b_out[worst] if out[worst] else math.inf, b_in[worst] if into[worst]
                    else math.inf)
    return Bound(float(times[worst]), name,
                 f"{what}; rank {worst} moves {format_size(max(out[worst], into[worst]))} "
                 f"over {format_rate(bandwidth)}")


def _degree_bandwidth(topology, links: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(bytes/s out of, bytes/s into) every node over the links of the mask ``links``."""
    if links is None:
        return topology.out_degree_bandwidth, topology.in_degree_bandwidth
    bandwidth = np.where(links, np.asarray(topology.bandwidth, dtype=np.float64), 0.0)
    return (np.bincount(topology.link_src, weights=bandwidth, minlength=topology.num_nodes),
            np.bincount(topology.link_dst, weights=bandwidth, minlength=topology.num_nodes))


# Bisection bandwidth of a topology, computed once (enumeration or Kernighan-Lin can be slow).
_BISECTION: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _bisection(topology) -> tuple[float | None, str]:
    if topology not in _BISECTION:
        from ..topology import bisection_bandwidth

        _BISECTION[topology] = bisection_bandwidth(topology)
    return _BISECTION[topology]


def _crossing_bytes(op: str, size: float, n: int) -> tuple[float, str] | None:
    low, high = n // 2, n - n // 2
    if op == "alltoall":
        return low * high * size / n, "floor(n/2) ceil(n/2) S/n"
    if op in ("allgather", "reducescatter"):
        return low * size / n, "floor(n/2) S/n"
    if op == "allreduce":
        return float(size), "S"
    return None


def bisection_bound(op: str, topology, size: float, num_ranks: int, placement=None
                    ) -> Bound | None:
    """Bytes that must cross the machine's bisection / its bandwidth (s); see the module.

    None unless the ranks occupy every endpoint (the machine's bisection is then the
    ranks' bisection), or for broadcast and reduce.
    """
    n = int(num_ranks)
    nodes = _nodes(topology, n, placement)
    crossing = _crossing_bytes(op, float(size), n)
    whole = (n == topology.num_endpoints and np.unique(nodes).size == n
             and np.array_equal(np.sort(nodes), np.sort(topology.endpoints)))
    if n < 2 or crossing is None or not whole:
        return None
    bandwidth, method = _bisection(topology)
    if not bandwidth:
        return None
    nbytes, formula = crossing
    return Bound(nbytes / bandwidth, "bisection",
                 f"{formula} = {format_size(nbytes)} across a bisection of "
                 f"{format_rate(bandwidth)} ({method})")


def _latency_graph(topology, reverse: bool, links: np.ndarray | None = None):
    """Sparse node graph weighted by the smallest latency of the links of each pair
    (only the links of the mask ``links``, when given)."""
    from scipy.sparse import csr_matrix

    src, dst, latency = topology.link_src, topology.link_dst, topology.latency
    if links is not None:
        src, dst, latency = src[links], dst[links], latency[links]
    if reverse:
        src, dst = dst, src
    key = src * topology.num_nodes + dst
    order = np.lexsort((latency, key))
    first = np.ones(order.size, dtype=bool)
    first[1:] = key[order][1:] != key[order][:-1]
    keep = order[first]
    # Zero latencies stay explicit entries: scipy's csgraph treats them as edges.
    return csr_matrix((latency[keep], (src[keep], dst[keep])),
                      shape=(topology.num_nodes,) * 2)


# Farthest distances per topology, keyed by (sources, targets, reverse): a size sweep asks
# the same question once per size, and all-pairs Dijkstra on 1024 ranks takes ~0.5 s.
_FARTHEST: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _farthest(topology, sources: np.ndarray, targets: np.ndarray, reverse: bool,
              links: np.ndarray | None = None) -> float:
    """Largest smallest-latency distance (s) from any of ``sources`` to any of ``targets``
    (over the links of the mask ``links``, when given)."""
    from scipy.sparse.csgraph import dijkstra

    cache = _FARTHEST.setdefault(topology, {})
    mask = None if links is None else np.packbits(links).tobytes()
    key = (sources.tobytes(), targets.tobytes(), reverse, mask)
    if key not in cache:
        if len(cache) > 256:             # a sweep of groups and algorithms; keep it bounded
            cache.clear()
        dist = dijkstra(_latency_graph(topology, reverse, links), directed=True,
                        indices=sources)
        cache[key] = float(np.atleast_2d(dist)[:, targets].max())
    return cache[key]


def latency_bound(op: str, topology, num_ranks: int, placement=None, *, alpha: float = 0.0,
                  root: int = 0, links: np.ndarray | None = None) -> Bound | None:
    """alpha + the largest smallest-latency distance an input must travel (s); see the
    module. ``links``: a boolean mask of the links messages may take (None: all)."""
    n = int(num_ranks)
    nodes = _nodes(topology, n, placement)
    if n < 2:
        return None
    latency = topology.latency if links is None else topology.latency[links]
    if not np.any(latency > 0):
        if alpha <= 0:
            return None
        return Bound(float(alpha), "latency", f"one message's overhead alpha = "
                                              f"{format_time(alpha)} (links have no latency)")
    root_node = nodes[root % n : root % n + 1]
    if op == "broadcast":
        farthest, where = _farthest(topology, root_node, nodes, False, links), "from the root"
    elif op == "reduce":
        farthest, where = _farthest(topology, root_node, nodes, True, links), "to the root"
    elif n <= _ALL_SOURCES_LIMIT:
        farthest, where = (_farthest(topology, np.unique(nodes), nodes, False, links),
                           "between ranks")
    else:
        farthest, where = _farthest(topology, nodes[:1], nodes, False, links), "from rank 0"
    if math.isinf(farthest) and links is not None:
        return None         # not through these links alone: no bound from them
    if math.isinf(farthest):
        raise InputError(f"some ranks cannot reach each other on {topology.name!r}")
    overhead = f"alpha {format_time(alpha)} + " if alpha else ""
    return Bound(float(alpha) + farthest, "latency",
                 f"{overhead}farthest path {where} {format_time(farthest)}")


def compute_bound(op: str, topology, size: float, num_ranks: int, gamma: float | None, *,
                  in_network: bool | None = None) -> Bound | None:
    """(n-1)/n S / gamma (s) for reducing ops when ranks reduce at ``gamma`` bytes/s
    (none when switches may reduce: ``in_network``, None: whenever some switch can)."""
    n = int(num_ranks)
    reducing = op in ("allreduce", "reducescatter", "reduce")
    if in_network is None:
        in_network = in_network_reduction(topology)
    if n < 2 or not gamma or not reducing or in_network:
        return None
    work = (n - 1) / n * float(size)
    return Bound(work / gamma, "compute", f"(n-1)/n S = {format_size(work)} reduced at "
                                          f"{format_rate(gamma)} by some rank")


def all_bounds(op: str, topology, size: float, num_ranks: int,
               placement: Sequence[int] | None = None, *, alpha: float = 0.0,
               gamma: float | None = None, root: int = 0, links: np.ndarray | None = None,
               in_network: bool | None = None) -> list[Bound]:
    """Every bound that applies, in the order injection, bisection, latency, compute.

    ``links`` (boolean mask over the links, None: every link) restricts the machine to
    the links a group can use (:func:`group_links`) or a run used; the bisection bound is
    then left out (it is the whole machine's). ``in_network``: whether switches may
    reduce (None: whenever some switch can)."""
    if op not in BOUND_OPS:
        raise unknown_name("collective", op, BOUND_OPS)
    if size < 0:
        raise InputError(f"collective size must be >= 0 bytes, got {size!r}")
    if links is not None:
        links = np.asarray(links, dtype=bool)
        if links.all():
            links = None
    found = [injection_bound(op, topology, size, num_ranks, placement, root=root,
                             links=links, in_network=in_network),
             bisection_bound(op, topology, size, num_ranks, placement) if links is None
             else None,
             latency_bound(op, topology, num_ranks, placement, alpha=alpha, root=root,
                           links=links),
             compute_bound(op, topology, size, num_ranks, gamma, in_network=in_network)]
    return [b for b in found if b is not None]


def lower_bound(op: str, topology, size: float, num_ranks: int,
                placement: Sequence[int] | None = None, *, alpha: float = 0.0,
                gamma: float | None = None, root: int = 0, links: np.ndarray | None = None,
                in_network: bool | None = None) -> Bound:
    """The largest applicable bound (s, name, detail); ``Bound(0, 'none', ...)`` if none.

    ``placement`` gives each rank's node (extra entries, such as switch ranks, are
    ignored); ``alpha`` is the per-message overhead (s), ``gamma`` the reduction rate at
    a rank (bytes/s), ``root`` the root rank of broadcast and reduce; ``links`` and
    ``in_network`` as in :func:`all_bounds`.
    """
    found = all_bounds(op, topology, size, num_ranks, placement, alpha=alpha, gamma=gamma,
                       root=root, links=links, in_network=in_network)
    return _largest(found)


def _largest(found: list[Bound]) -> Bound:
    if not found:
        return Bound(0.0, "none", "no bound applies (a single rank or nothing to move)")
    return max(found, key=lambda b: b.seconds)


# -- the bound of the algorithm that ran, and the links a group can use ----------------

def traffic_bound(topology, out_bytes: np.ndarray, in_bytes: np.ndarray,
                  links: np.ndarray | None = None) -> Bound | None:
    """The algorithm's own injection bound (s): max over nodes v of
    max(out_v / B_out(v), in_v / B_in(v)), where out_v and in_v are the bytes (per node
    index) the schedule's sends carry out of and into v between different nodes, and
    B_out, B_in the bandwidth (bytes/s) of v's links in the mask ``links``.

    Every such send leaves its source node over one of its links and enters its
    destination over one, and a link carries at most its bandwidth, so no run of that
    schedule on those links is faster. For a ring all-reduce out_v = in_v = 2(n-1)/n S and
    B_out is the ring's own link: T >= 2(n-1)/n S / B_ring; a double binary tree moves
    about 2S per rank; an in-network all-reduce S per rank and n S through each switch.

    >>> from netsim.topology import ring
    >>> t = ring(4, bandwidth=1e9)                 # two-way: 2 x 1 GB/s out of each node
    >>> traffic_bound(t, np.full(4, 3e9), np.full(4, 3e9)).seconds
    1.5
    """
    b_out, b_in = _degree_bandwidth(topology, links)
    out_bytes = np.asarray(out_bytes, dtype=np.float64)
    in_bytes = np.asarray(in_bytes, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_out = np.where(out_bytes > 0, out_bytes / b_out, 0.0)
        t_in = np.where(in_bytes > 0, in_bytes / b_in, 0.0)
    times = np.maximum(t_out, t_in)
    if times.size == 0 or not np.any(times > 0) or not np.all(np.isfinite(times)):
        return None           # nothing crosses a link, or a count that names no links
    worst = int(np.argmax(times))
    leaving = t_out[worst] >= t_in[worst]
    moved = out_bytes[worst] if leaving else in_bytes[worst]
    rate = b_out[worst] if leaving else b_in[worst]
    return Bound(float(times[worst]), "injection (its traffic)",
                 f"node {topology.node_names[worst]} moves {format_size(moved)} of this "
                 f"algorithm's sends over {format_rate(rate)} of links it used")


def node_traffic(topology, src_nodes: np.ndarray, dst_nodes: np.ndarray,
                 nbytes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(bytes out of, bytes into) every node of the sends ``src_nodes[i] -> dst_nodes[i]``
    of ``nbytes[i]`` bytes; sends within a node cross no link and count for neither."""
    crossing = np.asarray(src_nodes) != np.asarray(dst_nodes)
    weights = np.asarray(nbytes, dtype=np.float64)[crossing]
    return (np.bincount(np.asarray(src_nodes)[crossing], weights=weights,
                        minlength=topology.num_nodes),
            np.bincount(np.asarray(dst_nodes)[crossing], weights=weights,
                        minlength=topology.num_nodes))


def reduction_bound(topology, schedule, placement: Sequence[int]) -> Bound | None:
    """The longest chain of in-switch reductions (computes of the ranks placed on switches)
    of ``schedule`` (s; :func:`~netsim.algorithms.lower_bound.compute_chain`): for an
    in-network all-reduce, S/P / r on each of its P switches that reduce one piece at a
    time at r bytes/s (the switches' reduce resources). None when no switch computes.
    (The ranks' own reductions have the closed form of :func:`compute_bound`; other
    computes, such as a harness's host time, are not the algorithm's.)"""
    from .lower_bound import compute_chain

    placement = np.asarray(placement, dtype=np.int64)[:schedule.num_ranks]
    on_switch = np.asarray(topology.is_switch, dtype=bool)[placement]
    if not on_switch.any():
        return None
    seconds, rank = compute_chain(schedule, on_switch)
    if seconds <= 0:
        return None
    return Bound(seconds, "switch reductions",
                 f"the longest chain of in-switch reductions: {format_time(seconds)} "
                 f"(switch {topology.node_names[placement[rank]]} reduces the most)")


def algorithm_bound(op: str, topology, size: float, num_ranks: int,
                    placement: Sequence[int] | None = None, *, used: np.ndarray,
                    in_network: bool, traffic: tuple[np.ndarray, np.ndarray] | None = None,
                    alpha: float = 0.0, gamma: float | None = None, root: int = 0,
                    machine: Bound | None = None, extra: Sequence[Bound | None] = ()
                    ) -> Bound:
    """The bound of the algorithm that ran (s, name, detail): what the links its run used
    (``used``, a boolean mask over the links: those that carried bytes) allow an
    algorithm of its kind (``in_network``: it reduced in the switches).

    The largest of: :func:`all_bounds` on those links alone (injection with the op's
    least bytes per rank: 2(n-1)/n S for an all-reduce, S when it reduces in-network;
    latency over those links; compute), :func:`traffic_bound` of its own sends
    (``traffic``: bytes out of and into each node, :func:`node_traffic`), ``extra``
    bounds of its schedule (:func:`reduction_bound`: its switches' chains of reductions) and ``machine``, the machine's bound (so the algorithm's bound is never
    below it). A ring all-reduce
    on its ring of links of B bytes/s each way is bounded by 2(n-1)/n S / B, not by
    (n-1)/n S / B (both directions) nor S / B (an in-network switch): efficiency against
    this bound is what the run loses to contention, latency and pipelining.

    >>> from netsim.topology import ring
    >>> t = ring(4, bandwidth=1e9)
    >>> one_way = t.link_src == (t.link_dst + 3) % 4      # links i -> i+1 only
    >>> algorithm_bound("allreduce", t, 4e9, 4, used=one_way, in_network=False).seconds
    6.0
    """
    found = all_bounds(op, topology, size, num_ranks, placement, alpha=alpha, gamma=gamma,
                       root=root, links=used, in_network=in_network)
    if traffic is not None:
        found.append(traffic_bound(topology, *traffic, links=used))
    found = [b for b in [*found, *extra] if b is not None]
    if machine is not None:
        found.append(machine)
    return _largest(found)


#: Groups of more ranks than this are bounded on the whole machine (routing all n^2
#: pairs to find their links would cost more than the run).
GROUP_LINKS_LIMIT = 256


def group_links(topology, nodes: Sequence[int], *, router=None,
                used: np.ndarray | None = None) -> np.ndarray | None:
    """Boolean mask of the links a group of ranks on ``nodes`` can use: those on the
    routes between every ordered pair of its nodes, and those of ``used`` (the links its
    run used: switch ranks' and rerouted flows'). None (every link) when the group holds
    every endpoint or has more than :data:`GROUP_LINKS_LIMIT` ranks.

    >>> from netsim.topology.grid import torus
    >>> t = torus((4, 4))
    >>> mask = group_links(t, [t.node(f"0_{j}") for j in range(4)])
    >>> int(mask.sum())                          # the ring of row 0, both ways
    8
    """
    nodes = np.unique(np.asarray(nodes, dtype=np.int64))
    if nodes.size >= topology.num_endpoints or nodes.size > GROUP_LINKS_LIMIT:
        return None
    mask = _routed_links(topology, nodes, router).copy()
    if used is not None:
        mask |= np.asarray(used, dtype=bool)
    return mask


# The links on a group's routes, per topology and (router, nodes): a size sweep asks once
# per size, and routing n^2 pairs costs more than the bound.
_ROUTED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _routed_links(topology, nodes: np.ndarray, router) -> np.ndarray:
    from ..routing import route

    cache = _ROUTED.setdefault(topology, {})
    key = (id(router), nodes.tobytes())
    held = cache.get(key)
    if held is not None and held[0] is router:
        return held[1]
    if len(cache) > 64:                  # a few groups and routers per machine
        cache.clear()
    src, dst = np.repeat(nodes, nodes.size), np.tile(nodes, nodes.size)
    keep = src != dst
    mask = np.zeros(topology.num_links, dtype=bool)
    if keep.any():
        routes = route(topology, src[keep], dst[keep], router=router)
        mask[routes.path_links] = True
    cache[key] = (router, mask)
    return mask
