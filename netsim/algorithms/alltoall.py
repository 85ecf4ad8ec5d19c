"""All-to-all algorithms. ``size`` is one rank's send buffer S: S/n to each peer.

Block (i, j), what rank i sends to rank j, is ``c`` pieces (:func:`.pieces.alltoall_block`);
rank j ends holding block (i, j) from every i.
"""

from __future__ import annotations

import numpy as np

from .options import AlgoOptions
from .plan import Plan, join, no_deps
from .registry import register

__all__ = ["direct", "pairwise", "bruck", "block_pieces", "OP"]

OP = "alltoall"


def block_pieces(src: np.ndarray, dst: np.ndarray, n: int) -> np.ndarray:
    """Piece ids (m, 1) of blocks (src[i], dst[i]) with one piece per block."""
    return (np.asarray(src) * n + np.asarray(dst))[:, None]


@register(OP, "direct", "all n(n-1) sends at once", all_pairs=True)
def direct(num_ranks: int, size: float, options: AlgoOptions):
    n = num_ranks
    plan = Plan(OP, n, size, n * n, options)
    if n > 1:
        src, dst = np.divmod(np.arange(n * n, dtype=np.int64), n)
        keep = src != dst
        src, dst = src[keep], dst[keep]
        plan.sends(src, dst, pieces=lambda: block_pieces(src, dst, n),
                   nbytes=plan.piece_bytes)
    return plan.build()


@register(OP, "pairwise", "n-1 synchronised steps, one peer each (XOR partner for powers "
                          "of two, else rank +/- i)", all_pairs=True)
def pairwise(num_ranks: int, size: float, options: AlgoOptions):
    """Step i: rank r sends to r XOR i (powers of two) or r + i, and receives from r XOR i
    or r - i. A step starts when the rank's previous send and receive are done."""
    n = num_ranks
    plan = Plan(OP, n, size, n * n, options)
    r = np.arange(n, dtype=np.int64)
    xor = n & (n - 1) == 0
    previous = no_deps(n)
    for i in range(1, n):
        dst = r ^ i if xor else (r + i) % n
        src_of = r ^ i if xor else (r - i) % n
        ids = plan.sends(r, dst, pieces=lambda: block_pieces(r, dst, n),
                         nbytes=plan.piece_bytes, deps=previous)
        previous = join(ids, ids[src_of])
    return plan.build()


@register(OP, "bruck", "Bruck: ceil(log2 n) steps; step k forwards every block whose "
                       "offset has bit k set to rank r + 2^k")
def bruck(num_ranks: int, size: float, options: AlgoOptions):
    """Block (i, j) has offset o = j - i (mod n). At step k it is held by rank
    i + (o mod 2^k), which forwards it to + 2^k when bit k of o is set (Bruck et al. 1997)."""
    n = num_ranks
    plan = Plan(OP, n, size, n * n, options)
    h = np.arange(n, dtype=np.int64)
    offsets = np.arange(n, dtype=np.int64)
    after, last, k = no_deps(n), None, 0
    while (1 << k) < n:
        step = 1 << k
        moving = offsets[offsets & step != 0]
        src_block = (h[:, None] - (moving & (step - 1))) % n
        dst_block = (src_block + moving) % n
        ids = plan.sends(h, (h + step) % n, deps=[after, last],
                         nbytes=moving.size * plan.piece_bytes,
                         pieces=lambda: src_block * n + dst_block)
        last = ids
        after = ids[(h - step) % n]
        k += 1
    return plan.build()
