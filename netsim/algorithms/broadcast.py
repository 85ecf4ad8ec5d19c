"""Broadcast and reduce: pipelined chains and binomial trees. ``size`` is the buffer S.

The buffer is cut into ``options.chunks`` pieces that follow each other down (broadcast)
or up (reduce) the tree. Ranks are taken in ``options.order``, rotated so the root is
first. On a line of p ranks a chain moves k chunks in (p - 2 + k) steps of S/k; a
binomial tree takes ceil(log2 p) rounds of S (one message at a time per rank).
"""

from __future__ import annotations

import numpy as np

from .options import AlgoOptions
from .orders import rank_order
from .plan import Plan, no_deps
from .registry import register
from .trees import Tree, binomial_tree, broadcast_down, chain_tree, reduce_up

__all__ = ["chain_broadcast", "binomial_broadcast", "chain_reduce", "binomial_reduce"]


def _rooted_order(num_ranks: int, options: AlgoOptions, op_tree=None) -> np.ndarray:
    # a chain is a ring cut at the root; a binomial tree wants compact subtrees
    shape = "ring" if op_tree is chain_tree else "tree"
    order = rank_order(options.order, num_ranks, options, shape)
    return np.roll(order, -int(np.flatnonzero(order == options.root)[0]))


def _chunks(options: AlgoOptions) -> list[np.ndarray]:
    return [np.array([j], dtype=np.int64) for j in range(options.chunks)]


def _broadcast(op_tree, num_ranks: int, size: float, options: AlgoOptions, serial: bool):
    plan = Plan("broadcast", num_ranks, size, options.chunks, options)
    if num_ranks > 1:
        tree: Tree = op_tree(_rooted_order(num_ranks, options, op_tree))
        broadcast_down(plan, [(tree, _chunks(options))], None, no_deps(num_ranks),
                       serial=serial)
    return plan.build()


def _reduce(op_tree, num_ranks: int, size: float, options: AlgoOptions):
    plan = Plan("reduce", num_ranks, size, options.chunks, options)
    if num_ranks > 1:
        tree: Tree = op_tree(_rooted_order(num_ranks, options, op_tree))
        reduce_up(plan, [(tree, _chunks(options))], no_deps(num_ranks))
    return plan.build()


@register("broadcast", "chain", "pipelined chain root -> ... in `chunks` chunks",
          pipelined=True)
def chain_broadcast(num_ranks: int, size: float, options: AlgoOptions):
    return _broadcast(chain_tree, num_ranks, size, options, serial=False)


@register("broadcast", "binomial", "binomial tree, ceil(log2 n) rounds, one send at a time")
def binomial_broadcast(num_ranks: int, size: float, options: AlgoOptions):
    return _broadcast(binomial_tree, num_ranks, size, options, serial=True)


@register("reduce", "chain", "pipelined chain ... -> root in `chunks` chunks",
          pipelined=True)
def chain_reduce(num_ranks: int, size: float, options: AlgoOptions):
    return _reduce(chain_tree, num_ranks, size, options)


@register("reduce", "binomial", "binomial tree, ceil(log2 n) rounds")
def binomial_reduce(num_ranks: int, size: float, options: AlgoOptions):
    return _reduce(binomial_tree, num_ranks, size, options)
