"""Schedules synthesised for the machine: greedy link-chunk matching over the ranks' links.

All-gather is built by list scheduling in continuous time, in the manner of TACOS
(Won et al., "TACOS: Topology-Aware Collective Algorithm Synthesizer for Distributed
Machine Learning", MICRO 2024: greedy link-chunk matching over a time-expanded network),
generalised to links of unequal bandwidth and to sends that cross several links:

* every rank's block is cut into ``c`` chunks (``options.chunks``, piece ids of
  :mod:`.pieces`);
* the *edges* are the ordered rank pairs joined by a direct link of the machine (all
  parallel planes together); when those do not connect the ranks (switched fabrics,
  scattered placements) a one-way ring in rank order is added, routed by the
  machine's router. An edge holds every link of its route while it sends, so the model
  never counts a link twice;
* whenever an edge is idle and its sender holds a chunk its receiver neither has nor is
  being sent, it sends one: the rarest (fewest ranks have or are getting it) among the
  first ``window`` such chunks in the order the sender received them. A send lasts alpha
  + route latency + chunk bytes / route rate;
* each send depends on the send that brought its chunk and on the previous send over each
  of its links, so the engine replays the greedy order and can only be as fast or faster.

Reduce-scatter is the time reversal of an all-gather synthesised on the transposed graph
(Blink, Wang et al. MLSys 2020 and TACCL, Shah et al. NSDI 2023 reverse broadcast trees
into reductions the same way): a rank sends a chunk's partial sum to its parent in that
chunk's tree once its children's partials have arrived (and been reduced, with gamma).
All-reduce is that reduce-scatter followed by the all-gather; a chunk is gathered as soon
as its owner has reduced it.

Every send carries symbolic data, so :func:`netsim.algorithms.verify.verify` checks the
result; ``meta["synth"]`` records the chunks, edges and the model's estimated time.

>>> from netsim.topology import torus
>>> from netsim.algorithms import AlgoOptions, build_schedule, verify
>>> s = build_schedule("allgather", "synth", 16, 16e6,
...                    AlgoOptions(topology=torus((4, 4), bandwidth=1e9), chunks=2))
>>> verify(s, "allgather", 16)
>>> s.num_sends == 16 * 2 * 15, s.meta["synth"]["edges"]
(True, 64)
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass

import numpy as np

from .options import AlgoOptions
from .plan import Plan
from .registry import register

__all__ = ["LinkModel", "link_model", "synth_reason", "greedy_gather", "WINDOW", "MAX_RANKS",
           "BALANCE"]

#: Chunks a sender compares (rarest first) among those its receiver lacks.
WINDOW = 4
#: With a reduction rate gamma, the reduce-scatter's greedy holds each sender for this
#: fraction of a chunk's reduction time (``sender_busy`` of :func:`greedy_gather`), which
#: spreads the reductions over the ranks (option ``extra["balance"]``). 0 by default: it
#: helps where links of unequal count per chip make some chips reduce far more than
#: others (galaxy-wh all-reduce, 32 chips, 1 GiB, 2 chunks x 8 waves: 0 -> 26.09 ms,
#: 0.4 -> 23.65 ms, 0.6 -> 24.22 ms, 1.0 -> 31 ms; ``benchmarks/bench_synth.py``) and
#: hurts elsewhere (a 4x4 mesh with gamma at half a link's rate, 4 waves: 49.5 -> 59.3
#: ms at 0.6), so the run layer's search tries both.
BALANCE = 0.0


@dataclass(frozen=True)
class LinkModel:
    """The edges a synthesised schedule may use between ``n`` ranks.

    Per edge: sender and receiver rank, rate (bytes/s, the route's bottleneck), latency
    (s), and the machine's link ids it occupies. ``ring_added``: the direct links did not
    connect the ranks, so the model holds ring edges through the fabric too.
    """

    n: int
    src: tuple[int, ...]
    dst: tuple[int, ...]
    rate: tuple[float, ...]
    latency: tuple[float, ...]
    links: tuple[tuple[int, ...], ...]
    ring_added: bool

    def transposed(self) -> "LinkModel":
        """The same edges reversed (for reduce-scatter by time reversal)."""
        return LinkModel(self.n, self.dst, self.src, self.rate, self.latency, self.links,
                         self.ring_added)


def _strongly_connected(n: int, src, dst) -> bool:
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    if n <= 1:
        return True
    graph = coo_matrix((np.ones(len(src)), (np.asarray(src), np.asarray(dst))), shape=(n, n))
    count, _ = connected_components(graph, directed=True, connection="strong")
    return count == 1


def link_model(topology, nodes, *, router=None) -> LinkModel:
    """Edges between the ranks on ``nodes`` (rank -> node index) of ``topology``.

    >>> from netsim.topology import ring
    >>> m = link_model(ring(4, bandwidth=1e9), [0, 1, 2, 3])
    >>> len(m.src), m.rate[0], m.ring_added
    (8, 1000000000.0, False)
    """
    from ..routing import route

    nodes = np.asarray(nodes, dtype=np.int64)
    n = nodes.size
    ranks_on: dict[int, list[int]] = {}
    for r, node in enumerate(nodes.tolist()):
        ranks_on.setdefault(node, []).append(r)
    pairs: dict[tuple[int, int], None] = {}
    for a, b in zip(topology.link_src.tolist(), topology.link_dst.tolist()):
        for ra in ranks_on.get(a, ()):
            for rb in ranks_on.get(b, ()):
                pairs[(ra, rb)] = None
    for group in ranks_on.values():          # ranks sharing a node: a free local copy
        for ra in group:
            for rb in group:
                if ra != rb:
                    pairs[(ra, rb)] = None
    ring_added = False
    if not _strongly_connected(n, [p[0] for p in pairs], [p[1] for p in pairs]):
        ring_added = True
        # One direction only: the two directions of a ring through a switch would share
        # each rank's one uplink and downlink, and the greedy then serialises them badly.
        for r in range(n):
            pairs[(r, (r + 1) % n)] = None
    src = np.array([p[0] for p in pairs], dtype=np.int64)
    dst = np.array([p[1] for p in pairs], dtype=np.int64)
    routes = route(topology, nodes[src], nodes[dst], router=router)
    rates, latencies, links = [], [], []
    for i in range(src.size):
        load: dict[int, float] = {}
        lat = 0.0
        for s in range(int(routes.sub_ptr[i]), int(routes.sub_ptr[i + 1])):
            frac = float(routes.sub_frac[s])
            lat = max(lat, float(routes.sub_latency[s]))
            for link in routes.path_links[routes.path_ptr[s]:routes.path_ptr[s + 1]].tolist():
                load[link] = load.get(link, 0.0) + frac
        rate = min((float(topology.bandwidth[link]) / f for link, f in load.items() if f > 0),
                   default=float("inf"))
        rates.append(rate)
        latencies.append(lat)
        links.append(tuple(sorted(load)))
    return LinkModel(n, tuple(src.tolist()), tuple(dst.tolist()), tuple(rates),
                     tuple(latencies), tuple(links), ring_added)


@dataclass
class Sends:
    """The greedy's sends in start order: edge, chunk, start/end (s), dependencies
    (indices of earlier sends: the one that brought the chunk, the previous users of the
    links)."""

    src: list[int]
    dst: list[int]
    chunk: list[int]
    start: list[float]
    end: list[float]
    deps: list[tuple[int, ...]]
    brought_by: list[int]      # the send that brought the chunk to the sender, -1: own
    edge: list[int]            # the model's edge (its links: model.links[edge])

    @property
    def makespan(self) -> float:
        return max(self.end, default=0.0)


def greedy_gather(model: LinkModel, chunks: int, chunk_bytes: float, *, alpha: float = 0.0,
                  seed: int = 0, window: int = WINDOW, sender_busy: float = 0.0) -> Sends:
    """All-gather of ``chunks`` chunks per rank (chunk k owned by rank k // chunks) over
    ``model``'s edges, by the greedy of the module docstring.

    ``sender_busy`` (s): each send also holds its sender that long, one send at a time per
    sender. Reduce-scatter passes the reduction time of a chunk: in the time reversal a
    rank reduces one partial per send it makes here, so a sender with more links would
    otherwise take more than its share of the reductions (on a mesh, the inner chips
    reduce up to 4x more than the corners) and its reductions would set the time.

    >>> from netsim.topology import ring
    >>> m = link_model(ring(4, bandwidth=1.0), [0, 1, 2, 3])
    >>> greedy_gather(m, 1, 1.0).makespan    # 3 blocks arrive over 2 links: 2 steps
    2.0
    """
    n, c = model.n, int(chunks)
    num_edges = len(model.src)
    rng = random.Random(seed)
    order = list(range(num_edges))
    if seed:
        rng.shuffle(order)
    out_edges: list[list[int]] = [[] for _ in range(n)]
    for e in order:
        out_edges[model.src[e]].append(e)
    edge_links, users = _link_groups(model)
    # The edges that share a link with edge e (e included): woken when e's send ends.
    woken = [sorted({x for link in edge_links[e] for x in users[link]}) or [e]
             for e in range(num_edges)]
    duration = [alpha + model.latency[e] + (chunk_bytes / model.rate[e]
                                            if model.rate[e] != float("inf") else 0.0)
                for e in range(num_edges)]
    covered = [0] * n                  # bit k: the rank has chunk k or it is on its way
    arrived: list[list[int]] = [list(range(r * c, (r + 1) * c)) for r in range(n)]
    brought: list[dict[int, int]] = [dict.fromkeys(arrived[r], -1) for r in range(n)]
    for r in range(n):
        covered[r] = ((1 << c) - 1) << (r * c)
    spread = [1] * (n * c)
    sender_free = [0.0] * n
    busy: dict[int, float] = {}
    last: dict[int, int] = {}
    ptr = [0] * num_edges
    idle = [False] * num_edges
    sends = Sends([], [], [], [], [], [], [], [])
    heap: list[tuple] = [(0.0, 1, i, e, 0) for i, e in enumerate(order)]
    seq = len(heap)
    while heap:
        t, kind, _, a, b = heapq.heappop(heap)
        if kind == 0:                                  # chunk b (send a) arrives
            v = sends.dst[a]
            brought[v][b] = a
            arrived[v].append(b)
            for e in out_edges[v]:
                if idle[e]:
                    idle[e] = False
                    heapq.heappush(heap, (t, 1, seq, e, 0))
                    seq += 1
            continue
        e = a
        links = edge_links[e]
        u, v = model.src[e], model.dst[e]
        if any(busy.get(link, 0.0) > t for link in links) or sender_free[u] > t:
            continue                                   # woken again when they free
        have, mine, i = covered[v], arrived[u], ptr[e]
        while i < len(mine) and have >> mine[i] & 1:
            i += 1
        ptr[e] = i
        best, best_spread, seen = -1, 0, 0
        while i < len(mine) and seen < window:
            k = mine[i]
            if not have >> k & 1:
                seen += 1
                if best < 0 or spread[k] < best_spread:
                    best, best_spread = k, spread[k]
            i += 1
        if best < 0:
            idle[e] = True
            continue
        k = best
        end = t + duration[e]
        sid = len(sends.src)
        deps = {last[link] for link in links if link in last}
        if brought[u][k] >= 0:
            deps.add(brought[u][k])
        sends.src.append(u)
        sends.dst.append(v)
        sends.chunk.append(k)
        sends.start.append(t)
        sends.end.append(end)
        sends.deps.append(tuple(sorted(deps)))
        sends.brought_by.append(brought[u][k])
        sends.edge.append(e)
        covered[v] |= 1 << k
        spread[k] += 1
        for link in links:
            busy[link] = end
            last[link] = sid
        heapq.heappush(heap, (end, 0, seq, sid, k))
        seq += 1
        for other in woken[e]:                         # the links free at ``end``
            heapq.heappush(heap, (end, 1, seq, other, 0))
            seq += 1
        if sender_busy > 0:
            sender_free[u] = t + sender_busy
            for other in out_edges[u]:                 # the sender frees then
                heapq.heappush(heap, (sender_free[u], 1, seq, other, 0))
                seq += 1
    return sends


def _link_groups(model: LinkModel) -> tuple[list[tuple[int, ...]], list[list[int]]]:
    """Per edge its links merged into groups of links that exactly the same edges use,
    and per group those edges. The greedy sets a link's busy time and last send only
    when an edge over it sends, so every link of a group always holds the same two
    values and one stands for all: the one-way ring through the 18 NVSwitch planes of an
    NVL72 crosses 36 links per edge, all in one group, so the greedy updates one value
    where it would update 36 (the same sends)."""
    users: dict[int, list[int]] = {}
    for e, links in enumerate(model.links):
        for link in links:
            users.setdefault(link, []).append(e)
    group_of: dict[tuple[int, ...], int] = {}
    edge_links: list[tuple[int, ...]] = []
    for links in model.links:
        groups = (group_of.setdefault(tuple(users[link]), len(group_of)) for link in links)
        edge_links.append(tuple(dict.fromkeys(groups)))
    return edge_links, [list(edges) for edges in group_of]


#: Synthesis is Python list scheduling, about n^2 x chunks sends: above this many ranks it
#: would take minutes (and ``auto`` tries every algorithm that applies).
MAX_RANKS = 128


def synth_reason(num_ranks: int, options: AlgoOptions) -> str | None:
    """Why synthesis cannot run here (None if it can): it needs the machine, and at most
    :data:`MAX_RANKS` ranks."""
    if options.topology is None:
        return "needs a topology (options.topology) to synthesise for"
    if num_ranks > MAX_RANKS:
        return f"synthesises for at most {MAX_RANKS} ranks, got {num_ranks}"
    return None


def _alpha(options: AlgoOptions) -> float:
    if "alpha" in options.extra:
        return float(options.extra["alpha"])
    from ..topology.calibration import calibrated_alpha

    return calibrated_alpha(options.topology)


#: The latest link models: [(topology, nodes, router, its bandwidth and latency, model)].
#: A size sweep builds synth at every size on the same ranks; the model does not depend
#: on the size (25 models, 0.06-0.12 s, on a dgx-h100 sweep of 25 sizes).
_MODELS: list[tuple] = []
_KEEP_MODELS = 2


def _model(num_ranks: int, options: AlgoOptions) -> LinkModel:
    topo, router = options.topology, options.extra.get("router")
    nodes = np.asarray(options.node_of_rank(num_ranks), dtype=np.int64)
    for at, (t, kept_nodes, r, links, model) in enumerate(_MODELS):
        if t is topo and r is router and np.array_equal(kept_nodes, nodes) \
                and np.array_equal(links[0], topo.bandwidth) \
                and np.array_equal(links[1], topo.latency):
            _MODELS.insert(0, _MODELS.pop(at))
            return model
    model = link_model(topo, nodes, router=router)
    _MODELS.insert(0, (topo, nodes, router, (topo.bandwidth.copy(), topo.latency.copy()),
                       model))
    del _MODELS[_KEEP_MODELS:]
    return model


def _same(k: int) -> int:
    return k


def _gather(plan: Plan, model: LinkModel, sends: Sends,
            ready: dict[int, list[int]] | None = None,
            link_free: dict[int, int] | None = None, piece_of=_same) -> None:
    """Add the all-gather ``sends``; a chunk's first sends from its owner wait for
    ``ready[chunk]`` (op ids), and the first send over a link for ``link_free[link]``.
    Chunk k is piece ``piece_of(k)``."""
    ids: list[int] = []
    used: set[int] = set()
    for s in range(len(sends.src)):
        deps = [ids[d] for d in sends.deps[s]]
        if ready is not None and sends.brought_by[s] < 0:
            deps += ready.get(sends.chunk[s], [])
        if link_free:
            # The phase before holds the link until its last send there: no sharing, so
            # the engine stays within the sum of the phases' greedy times.
            for link in model.links[sends.edge[s]]:
                if link not in used:
                    used.add(link)
                    if link in link_free:
                        deps.append(link_free[link])
        ids.append(plan.send1(sends.src[s], sends.dst[s], (piece_of(sends.chunk[s]),), deps,
                              tag="synth-ag"))


def _reduce_scatter(plan: Plan, model: LinkModel, sends: Sends, chunks: int,
                    piece_of=_same, link_free: dict[int, int] | None = None
                    ) -> tuple[dict[int, list[int]], dict[int, int]]:
    """Add the time reversal of ``sends`` (an all-gather of ``chunks`` chunks per rank on
    the transposed edges): the reverse of send x -> y of chunk k is y -> x with y's partial
    sum of k (piece ``piece_of(k)``); the first send over a link waits for
    ``link_free[link]``. Returns, per chunk, the ops after which its owner holds it
    reduced, and per link its last send."""
    m = len(sends.src)
    later: list[list[int]] = [[] for _ in range(m)]
    for s in range(m):
        for d in sends.deps[s]:
            later[d].append(s)
    ids = [0] * m
    last: dict[int, int] = {}
    reduced: dict[tuple[int, int], list[int]] = {}
    for s in reversed(range(m)):
        x, y, k = sends.src[s], sends.dst[s], sends.chunk[s]
        deps = [ids[j] for j in later[s]] + reduced.get((y, k), [])
        links = model.links[sends.edge[s]]
        if link_free:                    # the wave before keeps the link until it is done
            deps += [link_free[link] for link in links
                     if link in link_free and link not in last]
        ids[s] = plan.send1(y, x, (piece_of(k),), deps, tag="synth-rs")
        for link in links:
            last[link] = ids[s]
        reduced.setdefault((x, k), []).append(plan.reduce1(x, ids[s], plan.piece_bytes,
                                                           tag="synth-reduce"))
    return {k: reduced.get((k // chunks, k), []) for k in range(plan.n * chunks)}, last


def _meta(model: LinkModel, chunks: int, waves: int, seed: int, estimate: float,
          balance: float = 0.0) -> dict:
    return {"synth": {"chunks": chunks, "waves": waves, "seed": seed, "balance": balance,
                      "edges": len(model.src), "ring_added": model.ring_added,
                      "estimate_s": estimate}}


def _build(op: str, num_ranks: int, size: float, options: AlgoOptions):
    c = int(options.chunks or 1)
    seed = int(options.extra.get("seed", 0))
    window = int(options.extra.get("window", WINDOW))
    balance = float(options.extra.get("balance", BALANCE))
    model = _model(num_ranks, options)
    alpha = _alpha(options)
    # Waves (reducing ops): the data in ``waves`` parts, each reduce-scattered after the
    # one before; a part is all-gathered while the next is reduced, so that reductions
    # (gamma) overlap communication instead of all preceding it.
    waves = 1 if op == "allgather" else int(options.extra.get("waves", 1))
    plan = Plan(op, num_ranks, size, num_ranks * c * waves, options)
    chunk_bytes = plan.piece_bytes
    back = ahead = None
    if op in ("reducescatter", "allreduce"):
        # Each send of the transposed all-gather is one reduction (chunk_bytes / gamma)
        # at its sender in the reduce-scatter: balance them over the ranks.
        reduce_s = balance * chunk_bytes / plan.gamma if plan.gamma else 0.0
        back = greedy_gather(model.transposed(), c, chunk_bytes, alpha=alpha, seed=seed,
                             window=window, sender_busy=reduce_s)
    if op in ("allgather", "allreduce"):
        ahead = greedy_gather(model, c, chunk_bytes, alpha=alpha, seed=seed, window=window)
    ready = link_free = None
    for wave in range(waves):
        def piece_of(k: int, wave: int = wave) -> int:    # rank r owns its waves' pieces
            return (k // c) * c * waves + wave * c + k % c

        if back is not None:
            ready, link_free = _reduce_scatter(plan, model, back, c, piece_of, link_free)
        if ahead is not None:
            _gather(plan, model, ahead, ready, link_free, piece_of)
    estimate = waves * sum(s.makespan for s in (back, ahead) if s is not None)
    return plan.build(**_meta(model, c, waves, seed, estimate, balance))


@register("allgather", "synth", "synthesised for the ranks' links: greedy link-chunk "
          "matching (TACOS-style); chunks, seed", check=synth_reason)
def allgather(num_ranks: int, size: float, options: AlgoOptions):
    return _build("allgather", num_ranks, size, options)


@register("reducescatter", "synth", "synthesised: the time reversal of a synthesised "
          "all-gather on the reversed links", check=synth_reason)
def reducescatter(num_ranks: int, size: float, options: AlgoOptions):
    return _build("reducescatter", num_ranks, size, options)


@register("allreduce", "synth", "synthesised: reduce-scatter then all-gather, each built "
          "for the ranks' links", check=synth_reason)
def allreduce(num_ranks: int, size: float, options: AlgoOptions):
    return _build("allreduce", num_ranks, size, options)
