"""Ring steps shared by the ring algorithms (flat, bidirectional, per axis, per group).

Several disjoint rings of equal length run side by side: ``rings`` is an (R, k) array of
ranks, position i of a ring sending to position i+1 (mod k). The data of each ring is cut
into k chunks, chunk c being ``chunk_pieces[ring, c]`` (piece ids, :mod:`.pieces`).

* A reduce-scatter step s (0..k-2): position i sends chunk (i - s - 1) mod k, which the
  receiver reduces into its copy. After k-1 steps position i holds chunk i complete.
* An all-gather step s (0..k-2): position i sends chunk (i - s) mod k, starting with its
  own chunk i. After k-1 steps every position holds every chunk.

A send waits for the receive (and reduction) whose data it forwards and for the previous
send of the same position (one channel, in order), so the rings run in lockstep without
barriers. With ``slices`` > 1 every chunk is cut into slices that follow each other
through the ring like NCCL's slices; on one channel they cost an alpha each.
"""

from __future__ import annotations

import numpy as np

from .plan import Plan, blocks, join, no_deps, set_rows
from .registry import register

__all__ = ["ring_steps", "bidir_rings", "ring_schedule", "bidir_ring_schedule", "ring_blocks",
           "ring_blocks_for", "register_rings"]

#: Build the steps after the first as one recipe when nothing reduces or annotates (the
#: same ops as the step loop; False forces the loop, which the tests compare it with).
BULK = True


def bidir_rings(order: np.ndarray, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rings (2, n) (``order`` and its reverse) and their chunk pieces (2, n, q/2): each
    ring carries half of every block, the block of the rank at that position."""
    half = owners.shape[1] // 2
    rings = np.stack([order, order[::-1]])
    chunks = np.stack([owners[order, :half], owners[order[::-1], half:]])
    return rings, chunks


def ring_schedule(op: str, num_ranks: int, size: float, options, *,
                  reduce_scatter: bool, all_gather: bool):
    """One ring in ``options.order`` with ``options.chunks`` slices per chunk: the ring of
    reduce-scatter, all-gather or (both phases) all-reduce."""
    from .orders import rank_order

    c = options.chunks
    plan = Plan(op, num_ranks, size, num_ranks * c, options)
    order = rank_order(options.order, num_ranks, options)
    owners = blocks(num_ranks, c)
    if not (reduce_scatter and all_gather):
        # Position i must start with (all-gather) or end with (reduce-scatter) the block of
        # the rank it holds; an all-reduce ends with everything wherever it starts.
        owners = owners[order]
    ring_steps(plan, order[None, :], owners[None], no_deps(num_ranks),
               reduce_scatter=reduce_scatter, all_gather=all_gather, slices=c)
    return plan.build()


def bidir_ring_schedule(op: str, num_ranks: int, size: float, options, *,
                        reduce_scatter: bool, all_gather: bool):
    """Two opposite rings, each with half of every block: the bidirectional ring of
    reduce-scatter, all-gather or (both phases) all-reduce."""
    from .orders import rank_order

    c = options.chunks
    plan = Plan(op, num_ranks, size, 2 * num_ranks * c, options)
    rings, chunks = bidir_rings(rank_order(options.order, num_ranks, options),
                                blocks(num_ranks, 2 * c))
    ring_steps(plan, rings, chunks, no_deps(num_ranks), reduce_scatter=reduce_scatter,
               all_gather=all_gather, slices=c)
    return plan.build()


def ring_blocks(op: str, num_ranks: int, size: float, options, *, reduce_scatter: bool,
                all_gather: bool, bidirectional: bool = False):
    """The schedule of :func:`ring_schedule` (or, ``bidirectional``, of
    :func:`bidir_ring_schedule`) as a :class:`~netsim.schedule.BlockSchedule`: one block
    per step and slice, the R x k sends of every ring position, op for op the same schedule
    once expanded. None where that schedule is not made of identical blocks of sends: with
    reductions that cost time (``options.gamma``), when sends carry their pieces
    (annotation), or with fewer than two steps.

    Block b (= step x slices + slice) waits for block b - 1 through the identity (each
    position sends in order) and, after the first step, for block b - slices through "the
    previous position of the ring" (what it forwards was received from there).
    """
    from ..schedule import BlockSchedule
    from .orders import rank_order

    c = options.chunks
    rings_of = 2 if bidirectional else 1
    plan = Plan(op, num_ranks, size, rings_of * num_ranks * c, options)
    k = num_ranks
    steps = (k - 1) * (int(reduce_scatter) + int(all_gather))
    if plan.gamma is not None or plan.annotate or k < 2 or steps < 2:
        return None
    order = rank_order(options.order, num_ranks, options)
    rings = np.stack([order, order[::-1]]) if bidirectional else order[None, :]
    rings = np.asarray(rings, dtype=np.int64)
    m = rings.size
    position = np.tile(np.arange(k), rings.shape[0])
    previous = np.arange(m, dtype=np.int64) + np.where(position == 0, k - 1, -1)
    n_blocks = steps * c
    b = np.arange(n_blocks, dtype=np.int64)
    degree = (b >= 1).astype(np.int64) + (b >= c)
    dep_ptr = np.zeros(n_blocks + 1, np.int64)
    np.cumsum(degree, out=dep_ptr[1:])
    # in order: the receive it forwards (b - slices), then its previous send (b - 1)
    dep_idx = np.empty(int(dep_ptr[-1]), np.int64)
    dep_perm = np.empty_like(dep_idx)
    two = b >= c
    dep_idx[dep_ptr[:-1][two]], dep_perm[dep_ptr[:-1][two]] = b[two] - c, 1
    one = (b >= 1) & ~two
    dep_idx[dep_ptr[:-1][one]], dep_perm[dep_ptr[:-1][one]] = b[one] - 1, 0
    dep_idx[dep_ptr[1:][two] - 1], dep_perm[dep_ptr[1:][two] - 1] = b[two] - 1, 0
    return BlockSchedule(num_ranks=num_ranks, src=rings.ravel(),
                         dst=np.roll(rings, -1, axis=1).ravel(), nbytes=plan.piece_bytes,
                         blocks=n_blocks, dep_ptr=dep_ptr, dep_idx=dep_idx,
                         dep_perm=dep_perm, perms=(np.arange(m, dtype=np.int64), previous),
                         meta=dict(plan.meta))


def ring_blocks_for(op: str, *, reduce_scatter: bool, all_gather: bool,
                    bidirectional: bool = False):
    """The ``blocks`` builder of a registered ring algorithm (:func:`ring_blocks` with
    these phases), for ``register(..., blocks=...)``."""
    def build(num_ranks: int, size: float, options):
        return ring_blocks(op, num_ranks, size, options, reduce_scatter=reduce_scatter,
                           all_gather=all_gather, bidirectional=bidirectional)
    return build


def register_rings(op: str, *, reduce_scatter: bool, all_gather: bool, ring_summary: str,
                   bidir_summary: str, size_linear: bool = False):
    """Register ``op``'s ``ring`` (:func:`ring_schedule`) and ``bidir_ring``
    (:func:`bidir_ring_schedule`) with these phases, each with its block form; returns the
    two builders. Reduce-scatter, all-gather and all-reduce differ only in the phases;
    ``size_linear`` is :attr:`~netsim.algorithms.registry.Algorithm.size_linear`."""
    phases = {"reduce_scatter": reduce_scatter, "all_gather": all_gather}
    flags = {"order_only": True, "size_linear": size_linear}

    @register(op, "ring", ring_summary, blocks=ring_blocks_for(op, **phases), **flags)
    def ring(num_ranks: int, size: float, options):
        return ring_schedule(op, num_ranks, size, options, **phases)

    @register(op, "bidir_ring", bidir_summary,
              blocks=ring_blocks_for(op, **phases, bidirectional=True), **flags)
    def bidir_ring(num_ranks: int, size: float, options):
        return bidir_ring_schedule(op, num_ranks, size, options, **phases)

    return ring, bidir_ring


def ring_steps(plan: Plan, rings: np.ndarray, chunk_pieces: np.ndarray, ready: np.ndarray,
               *, reduce_scatter: bool, all_gather: bool, slices: int = 1,
               tag: str | None = None) -> np.ndarray:
    """Add reduce-scatter and/or all-gather ring steps; return what each rank waits for.

    ``ready`` is a (num_ranks, d) dependency array: rank r starts once ``ready[r]`` is done.
    ``chunk_pieces`` has shape (R, k, q) with q divisible by ``slices``. The returned
    (num_ranks, d') array lists, per rank, the ops after which the rank holds its result
    (its reduced chunk after a reduce-scatter, every chunk after an all-gather); rows of
    ranks outside the rings are ``ready`` unchanged.
    """
    rings = np.asarray(rings, dtype=np.int64)
    R, k = rings.shape
    if k < 2:
        return ready
    q = chunk_pieces.shape[2]
    per_slice = q // slices
    src = rings.ravel()
    dst = np.roll(rings, -1, axis=1).ravel()
    ring_of = np.repeat(np.arange(R), k)
    position = np.tile(np.arange(k), R)
    reducing_steps = [True] * (k - 1) * reduce_scatter + [False] * (k - 1) * all_gather
    # after[j]: per position, the op after which it holds what it forwards next (slice j)
    after = [join(ready[src], rows=R * k) for _ in range(slices)]
    last_sent = None     # each position sends in order: one channel, steps then slices
    received: list[np.ndarray] = []
    if BULK and plan.gamma is None and not plan.annotate and len(reducing_steps) > 1:
        return _ring_steps_bulk(plan, src, dst, ready, chunk_pieces, k, slices,
                                len(reducing_steps), per_slice, reduce_scatter, tag)
    for step, reducing in enumerate(reducing_steps):
        s = step - (k - 1) if reduce_scatter and not reducing else step   # step of its phase
        chunk = (position - s - 1) % k if reducing else (position - s) % k
        for j in range(slices):
            cols = slice(j * per_slice, (j + 1) * per_slice)
            ids = plan.sends(src, dst, pieces=lambda: chunk_pieces[ring_of, chunk][:, cols],
                             nbytes=per_slice * plan.piece_bytes,
                             deps=[after[j], last_sent], tag=tag)
            last_sent = ids
            got = plan.reduce(dst, ids, per_slice * plan.piece_bytes, tag) if reducing else ids
            # the op that delivered to position i+1 is the one sent by position i
            after[j] = np.roll(got.reshape(R, k), 1, axis=1).ravel()
            received.append(after[j])
    # a reduce-scatter ends with its last reduction; an all-gather needs every receive
    first = (k - 2) * slices if reduce_scatter else 0
    result = np.stack(received[first:], axis=1)
    return set_rows(ready, src, join(ready[src], result))



def _ring_steps_bulk(plan: Plan, src: np.ndarray, dst: np.ndarray, ready: np.ndarray,
                     chunk_pieces: np.ndarray, k: int, slices: int, steps: int,
                     per_slice: int, reduce_scatter: bool, tag: str | None) -> np.ndarray:
    """:func:`ring_steps` without reductions or annotations, op for op the same schedule,
    with no Python per step: the first step's blocks as usual (they wait for ``ready``),
    every later block as one recipe (:meth:`Plan.repeated_sends`).

    Blocks are numbered b = step * slices + slice, m = len(src) sends each, send i of block
    b being op ``first + b * m + i``. After the first step a send waits for exactly two
    ops: the receive of the same slice one step earlier at its position (sent by the
    previous position: ``b - slices``, position i-1 in its ring) and the previous send of
    its position (``b - 1``, same i).
    """
    m, nbytes = src.size, per_slice * plan.piece_bytes
    R = m // k
    ring_of = np.repeat(np.arange(R), k)
    position = np.tile(np.arange(k), R)
    last_sent = None
    for j in range(slices):                  # step 0: after ``ready``
        cols = slice(j * per_slice, (j + 1) * per_slice)
        chunk = (position - 1) % k if reduce_scatter else position
        last_sent = plan.sends(src, dst, pieces=lambda: chunk_pieces[ring_of, chunk][:, cols],
                               nbytes=nbytes, deps=[join(ready[src], rows=m), last_sent],
                               tag=tag)
    first = int(last_sent[0]) - (slices - 1) * m          # op id of block 0, send 0
    # the sender of position i is position i-1 of the same ring: an offset within the block
    from_previous = np.where(position == 0, k - 1, -1).astype(np.int64)

    def deps(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        row = (ids - first) % m
        return ids - slices * m + from_previous[row], ids - m

    plan.repeated_sends(src, dst, nbytes, (steps - 1) * slices, deps, tag)
    # what each position waits for: the receives of the blocks from ``start`` on (the last
    # step's reductions after a reduce-scatter; every receive of an all-gather)
    start = (k - 2) * slices if reduce_scatter else 0
    blocks = np.arange(start, steps * slices, dtype=np.int64)
    got = first + blocks[None, :] * m + (np.arange(m) + from_previous)[:, None]
    return set_rows(ready, src, join(ready[src], got))
