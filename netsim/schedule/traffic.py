"""Synthetic traffic patterns as schedules of independent sends over ranks.

Sizes are bytes per message. These are raw patterns for exercising a network; the
collective algorithms (with the nccl-tests meaning of message size) live in
:mod:`netsim.algorithms`.
"""

from __future__ import annotations

import numpy as np

from ..errors import unknown_name
from .ir import Schedule, sends_from_arrays

__all__ = ["all_to_all", "permutation", "shift", "PATTERNS", "make_pattern"]


def all_to_all(num_ranks: int, nbytes: float) -> Schedule:
    """Every rank sends ``nbytes`` to every other rank, all at once (n(n-1) sends)."""
    src, dst = np.divmod(np.arange(num_ranks * num_ranks), num_ranks)
    keep = src != dst
    return sends_from_arrays(num_ranks, src[keep], dst[keep], nbytes, tag="alltoall",
                             meta={"pattern": "alltoall", "bytes_per_pair": nbytes})


def shift(num_ranks: int, nbytes: float, offset: int = 1) -> Schedule:
    """Rank r sends ``nbytes`` to rank (r + offset) mod n."""
    src = np.arange(num_ranks)
    return sends_from_arrays(num_ranks, src, (src + offset) % num_ranks, nbytes, tag="shift",
                             meta={"pattern": "shift", "offset": offset})


def permutation(num_ranks: int, nbytes: float, seed: int = 0) -> Schedule:
    """A random permutation without fixed points (a derangement), from an explicit seed."""
    rng = np.random.default_rng(seed)
    src = np.arange(num_ranks)
    while True:
        dst = rng.permutation(num_ranks)
        if num_ranks < 2 or not (dst == src).any():
            break
    return sends_from_arrays(num_ranks, src, dst, nbytes, tag="permutation",
                             meta={"pattern": "permutation", "seed": seed})


PATTERNS = {"alltoall": all_to_all, "shift": shift, "permutation": permutation}


def make_pattern(name: str, num_ranks: int, nbytes: float, **options) -> Schedule:
    """Build the pattern called ``name`` (see :data:`PATTERNS`)."""
    if name not in PATTERNS:
        raise unknown_name("traffic pattern", name, PATTERNS)
    return PATTERNS[name](num_ranks, nbytes, **options)
