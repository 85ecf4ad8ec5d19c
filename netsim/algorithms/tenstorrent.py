"""Tenstorrent CCL algorithms (tt-metal ``ttnn.all_gather`` / ``reduce_scatter`` /
``all_reduce``) on a line or a ring of chips, as the CCL benchmark runs them.

The ranks, in ``options.order`` (the default ``auto`` closes a ring through a 2xN mesh
such as the T3000 along its snake), form a line ``p0 - p1 - ... - p(n-1)`` or a ring (the line plus ``p(n-1) - p0``).
Data moves hop by hop between neighbours, in both directions at once, one block per link
per step (tt-metal CCL_bandwidth.md, "Bytes through the bottleneck link"):

* ``tt_line`` all-gather: every block travels to both ends of the line, n-1 steps. The end
  chip receives all n-1 other blocks through its one link: (n-1)/n S on the busiest link.
* ``tt_ring`` all-gather: every block travels n/2 hops each way; for even n the opposite
  chip gets the first half from one side and the second half from the other, so each link
  direction carries (n-1)/2 blocks: half of the line's bytes, in n/2 steps.
* reduce-scatter: the same paths run backwards, partial sums flowing towards the block's
  owner; every receiver reduces before it forwards (with ``options.gamma``, a compute op
  of bytes / gamma).
* all-reduce: reduce-scatter, then all-gather (two CCL phases, as tt-metal runs it).

Every phase starts with a barrier over the ranks (the op's entry barrier) and a fixed cost
per rank, ``launch + launch_per_device x n`` for n chips, read from the topology's
calibration (:mod:`netsim.topology.calibration`).
With ``options.chunks`` = C every block moves in C slices that follow each other on every
link. Ring runs go on the ring fabric: the deadlock-free ring fabric costs every packet
extra link time (CCL_bandwidth.md, "What a ring costs"). The schedules say which fabric
they run on (``meta['fabric']``), which a preset with ``fabric: auto`` (t3000, galaxy-wh)
applies per run (:func:`netsim.topology.calibration.on_fabric`).

``tt_metal`` is what ttnn's ops run when called with their defaults (the Tenstorrent
presets' ``library:``): ``tt_ring`` where the ranks close a ring of neighbours, else
``tt_line``; on a ring, a reduce-scatter of at most 512 KiB per device goes direct
(:func:`direct_rs_phase`); option ``num_links`` (sources at :func:`closes_ring`); option
``sender_rate``: the rate of the one sender worker per link of the all-gather and the
reduce-scatter, which bounds a link that carries nothing but its sender's block (a 2-chip
line; :func:`tt_phase`); option ``staging_read_rate``: where the direct reduce-scatter's
staging outgrows what a worker core reduces in place, the rate at which it is read back
(:func:`direct_rs_spills`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from ..errors import InputError
from ..topology.calibration import calibrated_alpha, calibrated_launch
from ..units import parse_rate
from .options import AlgoOptions
from .orders import rank_order
from .plan import Plan, join
from .registry import register

__all__ = ["hop_paths", "tt_phase", "direct_rs_phase", "HALVES", "closes_ring", "num_links",
           "machine_option",
           "sender_rate", "direct_rs_spills", "DIRECT_RS_SHARD_BUDGET",
           "links_topology", "takes_direct_rs", "DIRECT_RS_MAX_BYTES"]

#: Every block is cut in two halves (the two directions of a ring share the far chip).
HALVES = 2


def hop_paths(n: int, ring: bool) -> list[tuple[int, int, int, tuple[int, ...]]]:
    """All-gather hops as ``(step, src_pos, dst_pos, owner_pos, halves)``, step from 1.

    A block moves one hop per step in each direction; ``halves`` are the halves of the
    owner's block the hop carries ((0, 1) = all of it).
    """
    hops = []
    for owner in range(n):
        for d in (1, -1):
            length, last = _reach(n, owner, d, ring)
            for k in range(1, length + 1):
                halves = last if k == length else (0, 1)
                src, dst = owner + d * (k - 1), owner + d * k
                hops.append((k, src % n, dst % n, owner, halves))
    return hops


def _reach(n: int, owner: int, d: int, ring: bool) -> tuple[int, tuple[int, ...]]:
    """(hops in direction d, halves carried on the last hop) of ``owner``'s block."""
    if not ring:
        return (n - 1 - owner if d > 0 else owner), (0, 1)
    if n % 2:
        return (n - 1) // 2, (0, 1)
    return n // 2, ((0,) if d > 0 else (1,))


def _reversed(hops, n_steps: int):
    """Reduce-scatter hops: the all-gather hops backwards in time and direction."""
    return sorted(((n_steps + 1 - k, dst, src, owner, halves)
                   for k, src, dst, owner, halves in hops), key=lambda h: h[0])


class _Phase:
    """Builds one phase: the hops of every step, ``chunks`` slices per half-block.

    A step's hops go in as one block of sends per slice. What a rank holds of every
    owner's half-block slice is a dense (chunks, n, n, halves) array of op ids (8 B per
    entry: 64 MB for 256 ranks in 64 slices, where a dict of tuples took about 20x that),
    and the last send over every rank pair a dense (n, n) one.
    """

    MISSING = -2                                 # nothing held yet: wait for ``ready``

    def __init__(self, plan: Plan, order: np.ndarray, chunks: int, reduce: bool,
                 ready: np.ndarray, fed: np.ndarray | None = None,
                 sender_rate: float | None = None) -> None:
        n = order.size
        self.plan, self.order, self.chunks, self.reduce = plan, order, chunks, reduce
        # (n, n) positions: links whose only feeder is the sender's worker (see tt_phase)
        self.fed, self.sender_rate = fed, sender_rate
        self.ready = np.asarray(ready, dtype=np.int64)   # (n,) op each rank starts after
        self.have = np.full((chunks, n, n, HALVES), self.MISSING, dtype=np.int64)
        self.link_last = np.full((n, n), -1, dtype=np.int64)
        self.done_rank: list[np.ndarray] = []    # receivers and their ops, in op order
        self.done_op: list[np.ndarray] = []

    def step(self, hops: np.ndarray) -> None:
        """One step: ``hops`` rows (src_pos, dst_pos, owner_pos, first half, last half)."""
        src, dst, owner = (self.order[hops[:, c]] for c in range(3))
        lo, hi = hops[:, 3], hops[:, 4]
        halves = hi - lo + 1
        nbytes = halves * self.plan.piece_bytes
        ready = self.ready[src]
        link_last = self.link_last[src, dst]
        # The hop each hop's next slice waits for on its link: itself, or where two hops
        # share a link in a step (both directions of a 2-rank ring) the later one.
        pair = src * self.order.size + dst
        keys, which = np.unique(pair, return_inverse=True)
        later = None
        if keys.size < pair.size:
            later = np.zeros(keys.size, dtype=np.int64)
            np.maximum.at(later, which, np.arange(pair.size))
            later = later[which]
        worker = None
        if self.fed is not None:
            worker = self.fed[hops[:, 0], hops[:, 1]]
            if not worker.any():
                worker = None
        for j in range(self.chunks):
            have = self.have[j]
            first = have[src, owner, lo]
            last = have[src, owner, hi]
            first = np.where(first == self.MISSING, ready, first)
            last = np.where(last == self.MISSING, ready, last)
            deps = np.stack([np.maximum(first, last), np.minimum(first, last), link_last,
                             ready], axis=1)

            def pieces(j: int = j) -> list[list[int]]:
                base = owner * HALVES
                return [[(b + h) * self.chunks + j for h in range(a, z + 1)]
                        for b, a, z in zip(base.tolist(), lo.tolist(), hi.tolist())]

            ids = self.plan.sends(src, dst, pieces=pieces, nbytes=nbytes, deps=deps)
            arrived = ids
            if worker is not None:
                # the link is the worker's alone: its send lasts at least bytes / sender_rate
                # (the worker pushes while the link carries), and the block is whole at the
                # receiver when both are done
                pushed = self.plan.computes(src[worker], nbytes[worker] / self.sender_rate,
                                            deps=deps[worker])
                arrived = ids.copy()
                arrived[worker] = self.plan.computes(dst[worker], 0.0, deps=np.stack(
                    [ids[worker], pushed], axis=1))
            got = self._reduced(dst, arrived, nbytes) if self.reduce else arrived
            link_last = ids if later is None else ids[later]
            have[dst, owner, lo] = got
            have[dst, owner, hi] = got
            self.done_rank.append(dst)
            self.done_op.append(got)
        self.link_last[src, dst] = link_last

    def done(self) -> list[np.ndarray]:
        """Per rank, the ops after which it holds what it received, in op order."""
        n = self.order.size
        if not self.done_rank:
            return [np.zeros(0, dtype=np.int64) for _ in range(n)]
        rank = np.concatenate(self.done_rank)
        op = np.concatenate(self.done_op)
        by = np.argsort(rank, kind="stable")
        return np.split(op[by], np.cumsum(np.bincount(rank, minlength=n))[:-1])

    def _reduced(self, dst: np.ndarray, ids: np.ndarray, nbytes: np.ndarray) -> np.ndarray:
        """Reductions of the receives, one block per set of distinct receivers (a rank
        receives at most once per direction in a step)."""
        got = np.empty_like(ids)
        first = np.zeros(dst.size, dtype=bool)
        first[np.unique(dst, return_index=True)[1]] = True
        for part in (first, ~first):
            if part.any():
                got[part] = self.plan.reduce(dst[part], ids[part], nbytes[part])
        return got


def _start(plan: Plan, previous: np.ndarray | None, launch: float, n: int) -> np.ndarray:
    """Per rank, the op after which a phase may send: entry barrier, then ``launch`` s."""
    deps = None if previous is None else np.array([plan.barriers(previous[None, :])[0]] * n)
    ranks = np.arange(n, dtype=np.int64)
    if launch > 0:
        return plan.computes(ranks, launch, deps=None if deps is None else deps[:, None])
    return deps if deps is not None else np.full(n, -1, dtype=np.int64)


def tt_phase(plan: Plan, order: np.ndarray, *, ring: bool, reduce: bool, chunks: int,
             launch: float, previous: np.ndarray | None = None,
             sender_rate: float | None = None) -> np.ndarray:
    """Add one all-gather (``reduce=False``) or reduce-scatter phase; return, per rank, one
    op after which the rank holds its result.

    ``sender_rate`` (bytes/s): the rate at which a chip's sender worker pushes a block (its
    own, or in a reduce-scatter its partial sum) into a link. It binds where the link
    carries that one block and nothing else, and the block goes no further (both links of
    a 2-chip line). Elsewhere routers forward blocks over the same links, cut-through, and
    together they keep the busiest link at its own rate; the hop-by-hop steps here would
    instead make a slow first hop delay every later one, so the worker rate is left out.
    """
    n = order.size
    ready = _start(plan, previous, launch, n)
    hops = hop_paths(n, ring)
    n_steps = max((h[0] for h in hops), default=0)
    fed = None
    if sender_rate:
        uses = np.zeros((n, n), dtype=np.int64)
        ends = np.zeros((n, n), dtype=bool)       # a block's first hop is also its last
        onward = {(owner, src) for k, src, _, owner, _ in hops if k == 2}
        for k, src, dst, owner, _ in hops:
            uses[src, dst] += 1
            if k == 1:
                ends[src, dst] = (owner, dst) not in onward
        fed = (uses == 1) & ends
        if reduce:                  # the same paths backwards
            fed = fed.T
        if not fed.any():
            fed = None
    if reduce:
        hops = _reversed(hops, n_steps)
    phase = _Phase(plan, np.asarray(order, dtype=np.int64), chunks, reduce, ready, fed,
                   sender_rate)
    table = np.array([(k, s, d, o, h[0], h[-1]) for k, s, d, o, h in hops],
                     dtype=np.int64).reshape(-1, 6)
    by_step = np.argsort(table[:, 0], kind="stable")        # hop order kept within a step
    bounds = np.searchsorted(table[by_step, 0], np.arange(1, n_steps + 2))
    for k in range(n_steps):
        phase.step(table[by_step[bounds[k]:bounds[k + 1]], 1:])
    finished = [join(got if got.size else np.array([int(ready[r])]))[:, 0]
                for r, got in enumerate(phase.done())]
    return np.array([int(plan.barriers(f[None, :])[0]) if f.size > 1 else int(f[0])
                     for f in finished], dtype=np.int64)


def direct_rs_phase(plan: Plan, order: np.ndarray, *, chunks: int, launch: float,
                    alpha: float = 0.0, readback: float | None = None) -> np.ndarray:
    """Add tt-metal's direct (one-shot) reduce-scatter: after the entry cost, every rank
    sends every other rank that rank's block in one message straight through the fabric
    (a contribution from h hops away crosses h links), and each rank reduces the n-1 it
    receives. Returns, per rank, one op after which it holds its reduced block.

    ``alpha`` (s) is the per-message cost of the sending worker core, which hands off one
    message at a time: a rank's k-th message (nearest destinations first) leaves k x
    ``alpha`` after its first (the executor adds every message's own ``alpha`` on top).
    ``readback`` (bytes/s, or None): the contributions were staged where the reducing core
    cannot use them in place (:func:`direct_rs_spills`) and are read back at this rate
    after the last one arrives.
    """
    n = order.size
    ready = _start(plan, None, launch, n)
    src_pos, dst_pos = np.nonzero(~np.eye(n, dtype=bool))
    order = np.asarray(order, dtype=np.int64)
    src, dst = order[src_pos], order[dst_pos]
    per_block = [h * chunks + j for h in range(HALVES) for j in range(chunks)]

    def pieces() -> list[list[int]]:
        return [[d * HALVES * chunks + k for k in per_block] for d in dst.tolist()]

    deps = ready[src][:, None]
    if alpha > 0 and n > 2:
        ahead = (dst_pos - src_pos) % n
        distance = np.minimum(ahead, n - ahead)
        # each source's messages by distance (ahead before behind on a tie): its k-th waits
        # for the k hand-offs before it
        rank = np.lexsort((ahead, distance, src_pos))
        k = np.empty(src.size, dtype=np.int64)
        k[rank] = np.arange(src.size) % (n - 1)
        later = k > 0
        waits = plan.computes(src[later], k[later] * alpha, deps=ready[src[later]][:, None])
        deps = deps.copy()
        deps[later, 0] = waits
    nbytes = np.full(src.size, HALVES * chunks * plan.piece_bytes)
    ids = plan.sends(src, dst, pieces=pieces, nbytes=nbytes, deps=deps)
    got = plan.reduce(dst, ids, nbytes)
    done = np.empty(n, dtype=np.int64)
    for rank in range(n):
        mine = got[dst == rank]
        done[rank] = int(plan.barriers(mine[None, :])[0]) if mine.size > 1 else int(mine[0])
    if readback:
        staged = (n - 1) * HALVES * chunks * plan.piece_bytes     # every other rank's slice
        done = plan.computes(np.arange(n, dtype=np.int64), staged / readback,
                             deps=done[:, None])
    return done


#: Per worker core, the staging the direct reduce-scatter can use in place as its reduce
#: buffer (reduce_scatter_minimal_direct, k_l1_shard_budget_bytes = 640 KiB: "the whole
#: per-core shard (both parity halves, every source, every chunk this core owns)" must fit,
#: else the staging goes interleaved in L1 and "the reader reads it back over the NoC").
#: The shard is both halves of every source's slice: 2 x the per-device input, over the
#: worker cores (one per link).
DIRECT_RS_SHARD_BUDGET = 640 * 1024


def direct_rs_spills(size: float, links: int) -> bool:
    """Whether the direct reduce-scatter of ``size`` bytes per device (input), with one
    worker core per link of ``links``, stages more per core than it can reduce in place.

    >>> K = 1024
    >>> direct_rs_spills(256 * K, 1), direct_rs_spills(512 * K, 1), direct_rs_spills(512 * K, 2)
    (False, True, False)
    """
    return 2 * size / max(links, 1) > DIRECT_RS_SHARD_BUDGET


def _build(op: str, num_ranks: int, size: float, options: AlgoOptions, *, ring: bool,
           direct_rs: bool = False, sender_rate: dict[str, float] | None = None,
           readback: float | None = None):
    c = options.chunks
    plan = Plan(op, num_ranks, size, num_ranks * HALVES * c, options)
    order = rank_order(options.order, num_ranks, options, "ring" if ring else "line")
    launch = calibrated_launch(options.topology, num_ranks)
    done = None
    if op in ("reducescatter", "allreduce"):
        if direct_rs:
            done = direct_rs_phase(plan, order, chunks=c, launch=launch,
                                   alpha=calibrated_alpha(options.topology), readback=readback)
        else:
            done = tt_phase(plan, order, ring=ring, reduce=True, chunks=c, launch=launch,
                            sender_rate=(sender_rate or {}).get("reducescatter"))
    if op in ("allgather", "allreduce"):
        tt_phase(plan, order, ring=ring, reduce=False, chunks=c, launch=launch,
                 previous=done, sender_rate=(sender_rate or {}).get("allgather"))
    # tt-metal runs ring CCLs on the deadlock-free ring fabric (calibration 'fabric: auto')
    return plan.build(fabric="ring" if ring else "line")


#: tt-metal's CCLs run on the chips of one line or ring of a machine (32 at most on a
#: Galaxy). The model holds every (rank, owner, half, slice) op id, n^2 x 2 x chunks of
#: them, and sends about n^2 x chunks per phase: above this many ranks it refuses (and
#: ``auto`` skips it) instead of building for minutes.
MAX_RANKS = 256


def _not_too_many(num_ranks: int, options: AlgoOptions) -> str | None:
    if num_ranks > MAX_RANKS:
        return (f"models tt-metal's CCLs on up to {MAX_RANKS} chips (one line or ring of a "
                f"machine), got {num_ranks} ranks")
    return None


def _no_launch(num_ranks: int, options: AlgoOptions) -> bool:
    """Whether the schedule scales with the size (registry ``size_linear``): all but the
    launch cost does (bytes and reductions), so where the machine has none."""
    return not calibrated_launch(options.topology, num_ranks) > 0


def _register(op: str, what: str) -> None:
    @register(op, "tt_line", f"tt-metal line {what}: both directions, n-1 steps, "
              "a launch cost per phase", check=_not_too_many, size_linear=_no_launch)
    def line(num_ranks: int, size: float, options: AlgoOptions):
        return _build(op, num_ranks, size, options, ring=False)

    @register(op, "tt_ring", f"tt-metal ring {what}: n/2 hops each way (halves to the far "
              "chip), a launch cost per phase", check=_not_too_many, size_linear=_no_launch)
    def ring(num_ranks: int, size: float, options: AlgoOptions):
        return _build(op, num_ranks, size, options, ring=True)


_register("allgather", "all-gather")
_register("reducescatter", "reduce-scatter")
_register("allreduce", "all-reduce (reduce-scatter + all-gather)")


# -- tt_metal: what ttnn's CCL ops run by default --------------------------------------------
#
# Sources (tenstorrent/tt-metal, ttnn/cpp/ttnn/operations/ccl):
# * topology: all_gather/all_gather.cpp and all_reduce/all_reduce.cpp take the fabric's
#   topology through ccl_common's get_usable_topology, which keeps Ring only where the
#   devices of the axis wrap around, and falls back to Linear otherwise;
#   common/host/moe_utils.cpp (axis_edges): "A 2-device axis is spanned by a single link;
#   closing it would use that link twice, so it is a line and never a ring".
# * num_links: value_or(common::get_num_links(mesh_device, cluster_axis)), the routing
#   planes usable on every edge of the axis (the fewest of any edge): every parallel link
#   between neighbours unless some are reserved (moe_utils.cpp, get_num_links).
# * all_reduce: experimental/ccl/all_reduce_async/all_reduce_async.cpp runs reduce_scatter
#   then all_gather; its other branch (all-gather + local reduce) is taken for tensors whose
#   shape does not split evenly over the devices and on 2D fabrics, not by size.
# * reduce_scatter (reduce_scatter/reduce_scatter.cpp): on a ring, up to 512 KiB of input
#   per device, reduce_scatter_minimal_direct sends every destination its slice directly
#   ("one fabric traversal instead of the ring's N/2 store-and-forward steps").


def _neighbours(topology) -> set[tuple[int, int]]:
    """(src, dst) node pairs joined by a direct link."""
    return set(zip(topology.link_src.tolist(), topology.link_dst.tolist()))


def closes_ring(num_ranks: int, options: AlgoOptions) -> bool:
    """Whether tt-metal runs these ranks as a Ring: 3 or more ranks whose ring order
    (``options.order``; ``auto`` embeds it) visits neighbours and closes with a neighbour
    hop; otherwise they run as a line (Linear).

    >>> from netsim.topology import mesh, torus
    >>> closes_ring(8, AlgoOptions(topology=mesh((2, 4))))     # the T3000 snake
    True
    >>> closes_ring(4, AlgoOptions(topology=mesh((1, 4)))), closes_ring(2, AlgoOptions(topology=torus((2,))))
    (False, False)
    """
    if num_ranks < 3 or options.topology is None:
        return False
    nodes = options.node_of_rank(num_ranks)[rank_order(options.order, num_ranks, options,
                                                       "ring")]
    linked = _neighbours(options.topology)
    return all((a, b) in linked and (b, a) in linked
               for a, b in zip(nodes.tolist(), np.roll(nodes, -1).tolist()))


def machine_option(options: AlgoOptions, key: str):
    """Option ``key`` of tt-metal's CCLs: the caller's (``options.extra``), else the
    machine's (its preset's ``library: options``: how its kernels measure, so that
    ``--algo tt_metal``, ``auto``, placements and plans on a preset run tt-metal as its
    default does), else None.

    >>> from netsim.topology import parse_topology
    >>> machine_option(AlgoOptions(topology=parse_topology("t3000")), "num_links")
    1
    >>> machine_option(AlgoOptions(topology=parse_topology("t3000"), extra={"num_links": 2}),
    ...                "num_links")
    2
    """
    if key in options.extra:
        return options.extra[key]
    library = (getattr(options.topology, "meta", None) or {}).get("library")
    machine = library.get("options") if isinstance(library, Mapping) else None
    return machine.get(key) if isinstance(machine, Mapping) else None


def num_links(options: AlgoOptions) -> int | None:
    """The ``num_links`` option (:func:`machine_option`): parallel links per neighbour pair
    the CCL uses; None = every link the machine has there (tt-metal's default)."""
    value = machine_option(options, "num_links")
    if value is None:
        return None
    if isinstance(value, bool) or not str(value).strip().isdigit() or int(value) < 1:
        raise InputError(f"tt_metal option num_links must be an integer >= 1, got {value!r}")
    return int(value)


def sender_rate(options: AlgoOptions) -> dict[str, float] | None:
    """The ``sender_rate`` option (:func:`machine_option`) per CCL phase: how fast one sender
    worker of tt-metal's all-gather / reduce-scatter pushes a block into a link (bytes/s).
    A rate applies to both phases; a mapping ``{allgather: .., reducescatter: ..}`` to the
    phases it names. None = as fast as the link takes it.

    >>> sender_rate(AlgoOptions(extra={"sender_rate": {"allgather": "6.36GB/s"}}))
    {'allgather': 6360000000.0}
    """
    value = machine_option(options, "sender_rate")
    if value is None:
        return None
    given = value if isinstance(value, dict) else {"allgather": value, "reducescatter": value}
    rates = {}
    for phase, rate in given.items():
        if phase not in ("allgather", "reducescatter"):
            raise InputError(f"tt_metal option sender_rate: phase {phase!r} is not one of "
                             f"allgather, reducescatter")
        rates[phase] = _rate(rate, "sender_rate")
    return rates


def _rate(value, key: str) -> float:
    """Bytes/s of option ``key`` (a number or a rate string such as '11GB/s'), > 0."""
    try:
        rate = None if isinstance(value, bool) else parse_rate(value)
    except (InputError, ValueError, TypeError):
        rate = None
    if rate is None or not rate > 0:
        raise InputError(f"tt_metal option {key} must be a rate > 0 (e.g. 11GB/s), "
                         f"got {value!r}")
    return float(rate)


def _rate_option(options: AlgoOptions, key: str) -> float | None:
    """A rate option (:func:`machine_option`), None when absent."""
    value = machine_option(options, key)
    return None if value is None else _rate(value, key)


def _most_links(topology) -> int:
    """The most parallel links between any two neighbours of ``topology`` (1 without one)."""
    if topology is None or topology.num_links == 0:
        return 1
    pair = topology.link_src.astype(np.int64) * topology.num_nodes + topology.link_dst
    return int(np.unique(pair, return_counts=True)[1].max())


def links_topology(topology, links: int | None):
    """``topology`` as a CCL using ``links`` parallel links per neighbour pair sees it: the
    links of a pair with P > ``links`` parallel links carry ``links``/P of their rate each.
    With the default router, which sprays every flow evenly over a pair's parallel links,
    that is exactly the pair's first ``links`` links. Cached per topology.
    """
    if links is None:
        return topology
    key = (id(topology), links)
    cached = _LINKS_CACHE.get(key)
    if cached is not None and cached[0] is topology:
        return cached[1]
    pair = topology.link_src.astype(np.int64) * topology.num_nodes + topology.link_dst
    _, which, count = np.unique(pair, return_inverse=True, return_counts=True)
    planes = count[which]
    scale = np.where(planes > links, links / planes, 1.0)
    result = topology if np.all(scale == 1.0) else \
        topology.with_links(bandwidth=topology.bandwidth * scale)
    if len(_LINKS_CACHE) > 64:
        _LINKS_CACHE.clear()
    _LINKS_CACHE[key] = (topology, result)
    return result


_LINKS_CACHE: dict = {}


def _tt_metal_check(num_ranks: int, options: AlgoOptions) -> str | None:
    reason = _not_too_many(num_ranks, options)
    if reason:
        return reason
    try:
        links = num_links(options)
        sender_rate(options)
        _rate_option(options, "staging_read_rate")
    except InputError as err:       # (the registry puts the name back in front)
        return str(err).removeprefix("tt_metal ")
    if links is not None and options.topology is not None and num_ranks > 1:
        pair = options.topology.link_src.astype(np.int64) * options.topology.num_nodes \
            + options.topology.link_dst
        most = int(np.unique(pair, return_counts=True)[1].max())
        if links > most:
            return f"num_links={links}: the machine has at most {most} links per neighbour pair"
    return None


#: tt-metal's reduce_scatter takes the direct (one-shot) path on a ring when the input per
#: device is at most this many bytes (reduce_scatter.cpp, k_direct_rs_max_input_bytes =
#: 512 << 10: "The crossover sits between 448 KB and 1 MB, so the gate is 512 KB"); its
#: all_reduce runs that reduce_scatter on the whole buffer.
DIRECT_RS_MAX_BYTES = 512 * 1024


def takes_direct_rs(op: str, num_ranks: int, size: float, ring: bool) -> bool:
    """Whether tt-metal's reduce-scatter (of ``reducescatter`` or ``allreduce``) takes the
    direct path: a ring, and ``size`` (the per-device input: reduce-scatter's input, the
    all-reduce buffer) at most :data:`DIRECT_RS_MAX_BYTES`."""
    return ring and op in ("reducescatter", "allreduce") and size <= DIRECT_RS_MAX_BYTES


def _tt_metal(op: str, num_ranks: int, size: float, options: AlgoOptions):
    ring = closes_ring(num_ranks, options)
    direct = takes_direct_rs(op, num_ranks, size, ring)
    links = num_links(options)
    readback = None
    if direct and direct_rs_spills(size, links or _most_links(options.topology)):
        readback = _rate_option(options, "staging_read_rate")
    schedule = _build(op, num_ranks, size, options, ring=ring, direct_rs=direct,
                      sender_rate=sender_rate(options), readback=readback)
    meta = dict(schedule.meta)
    if links is not None:
        meta["links"] = links           # the runner uses that many links per pair
    choice = ("ring" if ring else "line") + ("+direct-rs" if direct else "")
    meta["record"] = {**meta.get("record", {}),
                      "tt_metal": choice
                      + ("" if links is None else f"/{links} link" + "s" * (links > 1))}
    return replace(schedule, meta=meta)


def _register_tt_metal(op: str, what: str) -> None:
    def build(num_ranks: int, size: float, options: AlgoOptions):
        return _tt_metal(op, num_ranks, size, options)

    # Not an 'auto' candidate: tt_line and tt_ring already are; tt_metal is what ttnn runs.
    build.auto = False
    # (reduce-scatter and all-reduce switch to the direct reduce-scatter below a size:
    # their schedules do not scale with it)
    linear = _no_launch if op == "allgather" else False
    register(op, "tt_metal", f"as ttnn.{what} runs by default: tt_ring where the ranks "
             "close a ring of neighbours, else tt_line; reduce-scatter direct on a ring up "
             "to 512 KiB; options num_links (default: every link), sender_rate (sender "
             "worker per link), staging_read_rate (direct reduce-scatter read-back)",
             check=_tt_metal_check, size_linear=linear)(build)


_register_tt_metal("allgather", "all_gather")
_register_tt_metal("reducescatter", "reduce_scatter")
_register_tt_metal("allreduce", "all_reduce (reduce_scatter + all_gather)")
