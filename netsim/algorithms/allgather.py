"""All-gather algorithms. ``size`` is the OUTPUT size S: each rank contributes S/n.

Rank r starts with its block (pieces r*K/n .. (r+1)*K/n - 1, :mod:`.pieces`) and every
rank ends with all of them. The phases here are reused by the all-reduce algorithms.
"""

from __future__ import annotations

import numpy as np

from .hypercube import doubling, fold, folded_blocks
from .options import AlgoOptions
from .plan import Plan, join, no_deps, one_phase, set_rows
from .registry import register
from .rings import register_rings

__all__ = ["ring", "bidir_ring", "doubling_folded", "direct", "direct_phase", "bruck", "OP"]

OP = "allgather"


ring, bidir_ring = register_rings(
    OP, reduce_scatter=False, all_gather=True,
    ring_summary="ring of n-1 steps; each rank sends (n-1)/n S",
    bidir_summary="two opposite rings, each with half of every block")


def doubling_folded(plan: Plan, owners: np.ndarray, ready: np.ndarray) -> np.ndarray:
    """Recursive-doubling all-gather of the blocks ``owners[r]``, for any rank count.

    Fold: each even rank r < 2 rem first gives its block to r + 1, which acts for both in
    the power-of-two core and finally hands r every block but its own.
    """
    n = owners.shape[0]
    vranks, folded = fold(n)
    if folded.size:
        ids = plan.sends(folded, folded + 1, pieces=owners[folded], deps=ready[folded])
        ready = set_rows(ready, folded + 1, join(ready[folded + 1], ids))
    flat, ptr = folded_blocks(owners, vranks, folded)
    done = doubling(plan, vranks, flat, ptr, ready)
    if folded.size:
        others = [np.delete(owners, r, axis=0).ravel() for r in folded.tolist()]
        ids = plan.sends(folded + 1, folded, pieces=np.array(others), deps=done[folded + 1])
        done = set_rows(done, folded, join(done[folded], ids))
    return done


@register(OP, "doubling", "recursive doubling, log2 n steps (fold for other rank counts)")
def doubling_algorithm(num_ranks: int, size: float, options: AlgoOptions):
    return one_phase(OP, num_ranks, size, options, doubling_folded)


def direct_phase(plan: Plan, owners: np.ndarray, ready: np.ndarray) -> np.ndarray:
    """Every rank sends its block straight to every other rank (all at once)."""
    n = owners.shape[0]
    r = np.arange(n, dtype=np.int64)
    received = []
    for k in range(1, n):
        ids = plan.sends(r, (r + k) % n, pieces=owners, deps=ready[r])
        received.append(ids[(r - k) % n])
    return join(ready, received) if received else ready


@register(OP, "direct", "one step: every rank sends its block to every other rank",
          all_pairs=True)
def direct(num_ranks: int, size: float, options: AlgoOptions):
    return one_phase(OP, num_ranks, size, options, direct_phase)


@register(OP, "bruck", "Bruck: ceil(log2 n) steps, any rank count")
def bruck(num_ranks: int, size: float, options: AlgoOptions):
    """Step k: rank r sends the blocks r, r+1, ... it holds (at most 2^k of them, n - 2^k at
    the last step) to rank r - 2^k. The final local rotation costs nothing here."""
    n = num_ranks
    plan = Plan(OP, n, size, n, options)
    r = np.arange(n, dtype=np.int64)
    after, last, held = no_deps(n), None, 1
    while held < n:
        count = min(held, n - held)
        dst = (r - held) % n
        ids = plan.sends(r, dst, pieces=(r[:, None] + np.arange(count)) % n,
                         deps=[after, last])
        last = ids
        after = join(after, ids[(r + held) % n])      # rank r hears from r + held
        held += count
    return plan.build()
