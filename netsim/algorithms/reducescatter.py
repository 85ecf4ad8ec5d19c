"""Reduce-scatter algorithms. ``size`` is the INPUT size S: each rank ends with S/n.

Rank r ends with its block (pieces r*K/n .. (r+1)*K/n - 1, :mod:`.pieces`) reduced over
all ranks. The phases here are reused by the all-reduce algorithms.
"""

from __future__ import annotations

import numpy as np

from .hypercube import fold, folded_blocks, halving
from .options import AlgoOptions
from .plan import Plan, join, one_phase, set_rows
from .registry import register
from .rings import register_rings

__all__ = ["ring", "bidir_ring", "halving_folded", "direct", "direct_phase", "OP"]

OP = "reducescatter"


ring, bidir_ring = register_rings(
    OP, reduce_scatter=True, all_gather=False,
    ring_summary="ring of n-1 steps; each rank sends (n-1)/n S",
    bidir_summary="two opposite rings, each with half of every block")


def halving_folded(plan: Plan, owners: np.ndarray, ready: np.ndarray) -> np.ndarray:
    """Recursive-halving reduce-scatter of ``owners[r]`` to rank r, for any rank count.

    Fold: each even rank r < 2 rem sends its whole buffer to r + 1, which then acts for
    both in the power-of-two core and finally returns block r to r.
    """
    n = owners.shape[0]
    vranks, folded = fold(n)
    everything = owners.ravel()
    if folded.size:
        ids = plan.sends(folded, folded + 1,
                         pieces=np.broadcast_to(everything, (folded.size, everything.size)),
                         deps=ready[folded])
        got = plan.reduce(folded + 1, ids, everything.size * plan.piece_bytes)
        ready = set_rows(ready, folded + 1, join(ready[folded + 1], got))
    flat, ptr = folded_blocks(owners, vranks, folded)
    done = halving(plan, vranks, flat, ptr, ready)
    if folded.size:
        ids = plan.sends(folded + 1, folded, pieces=owners[folded], deps=done[folded + 1])
        done = set_rows(done, folded, join(done[folded], ids))
    return done


@register(OP, "halving", "recursive halving, log2 n steps (fold for other rank counts)")
def halving_algorithm(num_ranks: int, size: float, options: AlgoOptions):
    return one_phase(OP, num_ranks, size, options, halving_folded)


def direct_phase(plan: Plan, owners: np.ndarray, ready: np.ndarray) -> np.ndarray:
    """Every rank sends block j straight to rank j (n - 1 sends each, all at once)."""
    n = owners.shape[0]
    r = np.arange(n, dtype=np.int64)
    received = []
    for k in range(1, n):
        dst = (r + k) % n
        ids = plan.sends(r, dst, pieces=owners[dst], deps=ready[r])
        got = plan.reduce(dst, ids, owners.shape[1] * plan.piece_bytes)
        received.append(got[(r - k) % n])        # what rank r got from rank r - k
    return join(ready, received) if received else ready


@register(OP, "direct", "one step: every rank sends each block straight to its owner",
          all_pairs=True)
def direct(num_ranks: int, size: float, options: AlgoOptions):
    return one_phase(OP, num_ranks, size, options, direct_phase)
