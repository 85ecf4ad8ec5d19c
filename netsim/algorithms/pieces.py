"""How a collective's data is cut into pieces, and who holds what before and after.

Algorithms describe the data they move symbolically (for :mod:`.verify`): the collective's
data is cut into ``K`` equal pieces (``schedule.meta["pieces"]``) and every send carries
``data = ((piece, contributors), ...)``, where ``contributors`` is the frozenset of ranks
whose input is summed in that piece (for gathers, the rank whose data it is).

Layout of the pieces, per op (n ranks, S = ``size`` bytes as nccl-tests defines it):

* ``allreduce``, ``reduce``: the buffer S in K pieces; rank r starts with every piece
  holding ``{r}``. All-reduce ends with every piece complete (all n ranks) on every rank;
  reduce only on the root.
* ``reducescatter``: the input S in K pieces (K a multiple of n); rank r starts with every
  piece ``{r}`` and must end with its block, pieces ``r*K/n .. (r+1)*K/n - 1``, complete.
* ``allgather``: the output S in K pieces (K a multiple of n); rank r starts with its block
  holding ``{r}``; every rank ends with every piece.
* ``alltoall``: all n send buffers, n*S bytes, in K = n*n*c pieces; block (i, j) (what rank
  i sends to rank j) is pieces ``(i*n + j)*c .. (i*n + j + 1)*c - 1``, holding ``{i}``.
* ``broadcast``: the buffer in K pieces, all on the root (``{root}``) at first, on every
  rank at the end.

Contributor sets are int bit masks here (bit r = rank r) and frozensets in ``data``.
"""

from __future__ import annotations

__all__ = ["REDUCING_OPS", "piece_bytes", "initial_holdings", "promised_holdings",
           "complete_mask", "alltoall_block"]

#: Ops whose pieces are sums over ranks (the rest move data unchanged).
REDUCING_OPS = ("allreduce", "reducescatter", "reduce")


def piece_bytes(op: str, size: float, num_ranks: int, pieces: int) -> float:
    """Bytes of one piece: ``size / pieces``, or ``num_ranks * size / pieces`` for alltoall."""
    total = size * num_ranks if op == "alltoall" else size
    return total / pieces if pieces else 0.0


def alltoall_block(src: int, dst: int, num_ranks: int, per_block: int) -> range:
    """Piece ids of the data rank ``src`` sends to rank ``dst`` in an all-to-all."""
    first = (src * num_ranks + dst) * per_block
    return range(first, first + per_block)


def _block(rank: int, num_ranks: int, pieces: int) -> range:
    per = pieces // num_ranks
    return range(rank * per, (rank + 1) * per)


def initial_holdings(op: str, num_ranks: int, pieces: int, root: int = 0
                     ) -> list[dict[int, int]]:
    """Per rank, piece -> contributor mask of the rank's own input."""
    n = num_ranks
    if op in REDUCING_OPS:
        return [dict.fromkeys(range(pieces), 1 << r) for r in range(n)]
    if op == "allgather":
        return [dict.fromkeys(_block(r, n, pieces), 1 << r) for r in range(n)]
    if op == "alltoall":
        per = pieces // (n * n)
        return [{p: 1 << i for j in range(n) for p in alltoall_block(i, j, n, per)}
                for i in range(n)]
    if op == "broadcast":
        return [dict.fromkeys(range(pieces), 1 << root) if r == root else {} for r in range(n)]
    raise ValueError(f"unknown op {op!r}")


def complete_mask(op: str, piece: int, num_ranks: int, pieces: int, root: int = 0) -> int:
    """Contributor mask of piece ``piece`` once the collective is done with it."""
    n = num_ranks
    if op in REDUCING_OPS:
        return (1 << n) - 1
    if op == "allgather":
        return 1 << (piece // (pieces // n))
    if op == "alltoall":
        return 1 << (piece // (pieces // n))   # block (i, j) starts at (i*n + j)*c
    if op == "broadcast":
        return 1 << root
    raise ValueError(f"unknown op {op!r}")


def promised_holdings(op: str, num_ranks: int, pieces: int, root: int = 0
                      ) -> list[dict[int, int]]:
    """Per rank, piece -> contributor mask the collective promises at the end."""
    n = num_ranks

    def complete(ids) -> dict[int, int]:
        return {p: complete_mask(op, p, n, pieces, root) for p in ids}

    if op in ("allreduce", "allgather", "broadcast"):
        return [complete(range(pieces)) for _ in range(n)]
    if op == "reducescatter":
        return [complete(_block(r, n, pieces)) for r in range(n)]
    if op == "reduce":
        return [complete(range(pieces)) if r == root else {} for r in range(n)]
    if op == "alltoall":
        per = pieces // (n * n)
        return [complete(p for i in range(n) for p in alltoall_block(i, j, n, per))
                for j in range(n)]
    raise ValueError(f"unknown op {op!r}")
