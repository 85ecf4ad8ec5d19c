"""The collective ops: each op's name and its nccl-tests bus-bandwidth factor.

One owner for the list of ops, at the lowest layer that needs it: the algorithm registry
(``netsim.OPS``), the bounds and the nccl report (``netsim.report.BUSBW_FACTOR``) all
read it from here.

nccl-tests (NVIDIA/nccl-tests ``doc/PERFORMANCE.md``) reports a collective of S bytes
that took t seconds on n ranks as ``algbw = S / t`` and ``busbw = algbw * factor(n)``,
the factor turning algbw into the per-rank link speed an optimal ring would need:

=================================  ==============
op                                 factor(n)
=================================  ==============
allreduce                          2 (n - 1) / n
allgather, reducescatter, alltoall (n - 1) / n
broadcast, reduce                  1
=================================  ==============

>>> OPS
('allreduce', 'allgather', 'reducescatter', 'alltoall', 'broadcast', 'reduce')
>>> BUSBW_FACTOR["allreduce"](4)     # 2 (n - 1) / n
1.5
"""

from __future__ import annotations

from typing import Callable

__all__ = ["OPS", "BUSBW_FACTOR"]


# Named functions rather than lambdas: the table pickles (runs go to worker processes).
def _all_to_all_twice(n: int) -> float:
    """allreduce: a reduce-scatter then an all-gather, (n - 1) / n of S each."""
    return 2.0 * (n - 1) / n


def _all_to_all(n: int) -> float:
    """Every rank sends or receives (n - 1) / n of S."""
    return (n - 1) / n


def _one(n: int) -> float:
    """The whole buffer crosses each rank's link once."""
    return 1.0


#: op -> factor(n) with busbw = algbw * factor(n), as in nccl-tests; its keys are the ops.
BUSBW_FACTOR: dict[str, Callable[[int], float]] = {
    "allreduce": _all_to_all_twice,
    "allgather": _all_to_all,
    "reducescatter": _all_to_all,
    "alltoall": _all_to_all,
    "broadcast": _one,
    "reduce": _one,
}

#: The collective ops, in the order tables list them.
OPS: tuple[str, ...] = tuple(BUSBW_FACTOR)
