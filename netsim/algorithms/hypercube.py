"""Recursive halving and doubling on a power-of-two set of ranks, and the fold that
reduces any rank count to one (Thakur, Rabenseifner & Gropp 2005, section 4).

The power-of-two core works on *virtual* ranks v = 0..P-1 (``vranks[v]`` is the real
rank). Each virtual rank owns a block of piece ids; the blocks are stored back to back in
virtual order (``flat`` with CSR pointer ``ptr``), so the blocks of a window of virtual
ranks [a, b) are the slice ``flat[ptr[a]:ptr[b]]``.

* Recursive halving (reduce-scatter): at distance d = P/2, P/4, ..., 1, v sends to
  v XOR d the half of its current window that v does not keep; the receiver reduces it.
  At the end v holds its own block, complete.
* Recursive doubling (all-gather): at distance d = 1, 2, ..., P/2, v sends its current
  window (size d) to v XOR d. At the end everyone holds every block.

The fold (MPICH): with P the largest power of two <= p and rem = p - P, each even rank
r < 2 rem first hands its data to r + 1, sits out the core, and gets the result back.
Virtual rank v < rem is real rank 2v + 1; v >= rem is real rank v + rem.
"""

from __future__ import annotations

import numpy as np

from .plan import Plan, join, set_rows

__all__ = ["fold", "folded_blocks", "halving", "doubling", "exchange_all"]


def fold(p: int) -> tuple[np.ndarray, np.ndarray]:
    """(vranks, folded): real rank of each virtual rank, and the even ranks that fold."""
    P = 1 << (p.bit_length() - 1)
    rem = p - P
    v = np.arange(P, dtype=np.int64)
    vranks = np.where(v < rem, 2 * v + 1, v + rem)
    return vranks, np.arange(0, 2 * rem, 2, dtype=np.int64)


def folded_blocks(owners: np.ndarray, vranks: np.ndarray, folded: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(flat, ptr): the pieces each virtual rank owns, as CSR. A virtual rank owns the
    blocks of the real ranks it stands for: r - 1 and r when r - 1 folded into r, else r."""
    folded_set = set(folded.tolist())
    stands_for = [np.array([r - 1, r]) if r - 1 in folded_set else np.array([r])
                  for r in vranks.tolist()]
    flat = np.concatenate([owners[s].ravel() for s in stands_for])
    ptr = np.concatenate([[0], np.cumsum([owners[s].size for s in stands_for])])
    return flat, ptr


def _steps(P: int, growing: bool) -> list[int]:
    ds = [1 << i for i in range(P.bit_length() - 1)]
    return ds if growing else ds[::-1]


def halving(plan: Plan, vranks: np.ndarray, flat: np.ndarray, ptr: np.ndarray,
            ready: np.ndarray, tag: str | None = None) -> np.ndarray:
    """Recursive-halving reduce-scatter; returns the per-rank 'holds its block' deps."""
    return _exchanges(plan, vranks, flat, ptr, ready, tag, reduce=True)


def doubling(plan: Plan, vranks: np.ndarray, flat: np.ndarray, ptr: np.ndarray,
             ready: np.ndarray, tag: str | None = None) -> np.ndarray:
    """Recursive-doubling all-gather; returns the per-rank 'holds everything' deps."""
    return _exchanges(plan, vranks, flat, ptr, ready, tag, reduce=False)


def _exchanges(plan: Plan, vranks: np.ndarray, flat: np.ndarray, ptr: np.ndarray,
               ready: np.ndarray, tag: str | None, *, reduce: bool) -> np.ndarray:
    """The pairwise exchanges of both (module docstring): at each distance d, v sends a
    window of blocks to v XOR d after its previous send and what it last received.
    Halving (``reduce``) sends the half of its window it does not keep, largest d first,
    and the receiver reduces it; doubling sends its whole window, smallest d first."""
    P = vranks.size
    v = np.arange(P, dtype=np.int64)
    after, last, received = join(ready[vranks]), None, []
    for d in _steps(P, growing=not reduce):
        if reduce:
            window = v & ~(2 * d - 1)
            start = np.where(v & d, window, window + d)        # the half v does not keep
        else:
            start = v & ~(d - 1)
        a, b = ptr[start], ptr[start + d]
        ids = plan.sends(vranks, vranks[v ^ d], nbytes=(b - a) * plan.piece_bytes,
                         pieces=lambda: [flat[x:y] for x, y in zip(a, b)],
                         deps=[after, last], tag=tag)
        last = ids
        if reduce:
            ids = plan.reduce(vranks[v ^ d], ids, (b - a) * plan.piece_bytes, tag)
        after = ids[v ^ d]                                   # what v itself received
        received.append(after)
    return set_rows(ready, vranks, join(ready[vranks], received))


def exchange_all(plan: Plan, vranks: np.ndarray, pieces: np.ndarray, ready: np.ndarray,
                 tag: str | None = None) -> np.ndarray:
    """Recursive doubling all-reduce: at every distance swap the whole buffer and reduce."""
    P = vranks.size
    v = np.arange(P, dtype=np.int64)
    after, last = join(ready[vranks]), None
    rows = np.broadcast_to(pieces, (P, pieces.size))
    for d in _steps(P, growing=True):
        ids = plan.sends(vranks, vranks[v ^ d], pieces=rows, deps=[after, last], tag=tag)
        last = ids
        after = join(after, plan.reduce(vranks[v ^ d], ids, pieces.size * plan.piece_bytes,
                                        tag)[v ^ d])
    return set_rows(ready, vranks, after)

