"""All-reduce algorithms. ``size`` is the buffer S, every rank's input and output.

Every rank ends with every piece reduced over all ranks (:mod:`.pieces`). Costs in the
alpha-beta model (Thakur, Rabenseifner & Gropp 2005; n = S bytes, p ranks):

* ``ring``: 2(p-1) alpha + 2 (p-1)/p n beta (reduce-scatter ring, then all-gather ring);
* ``halving_doubling`` (Rabenseifner): 2 log2 p alpha + 2 (p-1)/p n beta for p = 2^k;
* ``recursive_doubling``: log2 p alpha + n log2 p beta;
* ``direct``: 2 alpha + 2 (p-1)/p n beta on a non-blocking switch (two-shot).
"""

from __future__ import annotations

import numpy as np

from .allgather import direct_phase as direct_all_gather
from .hypercube import doubling, exchange_all, fold, halving
from .options import AlgoOptions
from .orders import rank_order
from .plan import Plan, blocks, join, no_deps, set_rows, settle
from .reducescatter import direct_phase as direct_reduce_scatter
from .registry import register
from .rings import register_rings
from .trees import broadcast_down, double_binary_trees, reduce_up

__all__ = ["ring", "bidir_ring", "dbtree", "halving_doubling", "recursive_doubling",
           "direct", "oneshot", "OP"]

OP = "allreduce"


ring, bidir_ring = register_rings(
    OP, reduce_scatter=True, all_gather=True,
    ring_summary="ring reduce-scatter + ring all-gather, 2(n-1) steps of S/n",
    bidir_summary="two opposite rings, each all-reducing half of the buffer", size_linear=True)


@register(OP, "dbtree", "NCCL double binary tree: each tree reduces up and broadcasts "
                        "down half the buffer, pipelined in chunks", pipelined=True,
          size_linear=True)
def dbtree(num_ranks: int, size: float, options: AlgoOptions):
    c = options.chunks
    plan = Plan(OP, num_ranks, size, 2 * c, options)
    if num_ranks > 1:
        order = rank_order(options.order, num_ranks, options, "tree")
        trees = [(_relabel(t, order), [np.array([h * c + j]) for j in range(c)])
                 for h, t in enumerate(double_binary_trees(num_ranks))]
        ready = no_deps(num_ranks)
        at_root = reduce_up(plan, trees, ready)
        broadcast_down(plan, trees, at_root, ready)
    return plan.build()


def _relabel(tree, order: np.ndarray):
    """The tree with rank i replaced by ``order[i]``."""
    from .trees import Tree

    n = len(tree.parent)
    parent = [-1] * n
    children: list[tuple[int, ...]] = [()] * n
    for i in range(n):
        p = tree.parent[i]
        parent[int(order[i])] = int(order[p]) if p >= 0 else -1
        children[int(order[i])] = tuple(int(order[k]) for k in tree.children[i])
    return Tree(int(order[tree.root]), tuple(parent), tuple(children))


@register(OP, "halving_doubling", "Rabenseifner: recursive-halving reduce-scatter + "
                                  "recursive-doubling all-gather (fold for other counts)",
          size_linear=True)
def halving_doubling(num_ranks: int, size: float, options: AlgoOptions):
    vranks, folded = fold(num_ranks)
    P = vranks.size
    plan = Plan(OP, num_ranks, size, P, options)
    everything = np.arange(P, dtype=np.int64)
    ready = _fold_in(plan, folded, everything, no_deps(num_ranks))
    ptr = np.arange(P + 1, dtype=np.int64)
    done = halving(plan, vranks, everything, ptr, ready)
    done = doubling(plan, vranks, everything, ptr, done)
    _fold_out(plan, folded, everything, done)
    return plan.build()


def _fold_in(plan: Plan, folded: np.ndarray, pieces: np.ndarray, ready: np.ndarray
             ) -> np.ndarray:
    """Each folded even rank hands its whole buffer to its odd neighbour, which reduces."""
    if not folded.size:
        return ready
    ids = plan.sends(folded, folded + 1, pieces=np.broadcast_to(pieces, (folded.size,
                                                                         pieces.size)),
                     deps=ready[folded])
    got = plan.reduce(folded + 1, ids, pieces.size * plan.piece_bytes)
    return set_rows(ready, folded + 1, join(ready[folded + 1], got))


def _fold_out(plan: Plan, folded: np.ndarray, pieces: np.ndarray, done: np.ndarray) -> None:
    """The odd neighbours give the result back to the folded even ranks."""
    if folded.size:
        plan.sends(folded + 1, folded, deps=settle(plan, done)[folded + 1],
                   pieces=np.broadcast_to(pieces, (folded.size, pieces.size)))


@register(OP, "recursive_doubling", "log2 n steps exchanging the whole buffer "
                                    "(latency-optimal, n log2 n traffic)", power_of_two=True,
          size_linear=True)
def recursive_doubling(num_ranks: int, size: float, options: AlgoOptions):
    plan = Plan(OP, num_ranks, size, 1, options)
    exchange_all(plan, np.arange(num_ranks, dtype=np.int64), np.zeros(1, np.int64),
                 no_deps(num_ranks))
    return plan.build()


@register(OP, "direct", "two-shot: direct reduce-scatter (block j to rank j) then direct "
                        "all-gather; 2 steps, 2(n-1)/n S per rank", size_linear=True,
          all_pairs=True)
def direct(num_ranks: int, size: float, options: AlgoOptions):
    plan = Plan(OP, num_ranks, size, num_ranks, options)
    owners = blocks(num_ranks, 1)
    done = direct_reduce_scatter(plan, owners, no_deps(num_ranks))
    direct_all_gather(plan, owners, settle(plan, done))
    return plan.build()


@register(OP, "oneshot", "one-shot: every rank sends its whole buffer to every other rank "
                         "and reduces locally; 1 step, (n-1) S per rank",
          size_linear=True, all_pairs=True)
def oneshot(num_ranks: int, size: float, options: AlgoOptions):
    n = num_ranks
    plan = Plan(OP, n, size, 1, options)
    if n > 1:
        # one block, so that every send carries the sender's input, not what it reduced
        k = np.repeat(np.arange(1, n, dtype=np.int64), n)
        src = np.tile(np.arange(n, dtype=np.int64), n - 1)
        dst = (src + k) % n
        ids = plan.sends(src, dst, pieces=np.zeros((src.size, 1), np.int64))
        for step in range(n - 1 if plan.gamma is not None else 0):  # free reductions: none
            part = slice(step * n, (step + 1) * n)
            plan.reduce(dst[part], ids[part], plan.piece_bytes)
    return plan.build()
