"""nccl-tests conventions: algorithm bandwidth, bus bandwidth and the table layout.

nccl-tests (NVIDIA/nccl-tests ``doc/PERFORMANCE.md``) reports a collective of S bytes
that took t seconds on n ranks as

* ``algbw = S / t`` (GB/s, GB = 1e9 bytes), S being the all-reduce buffer, the all-gather
  *output*, the reduce-scatter *input*, one rank's all-to-all send buffer, or the
  broadcast/reduce buffer;
* ``busbw = algbw * factor(n)``, the factor turning algbw into the per-rank link speed an
  optimal ring would need, so busbw is comparable across n and across collectives; the
  factors live with the ops in :mod:`netsim.schedule.ops` (``BUSBW_FACTOR``, re-exported
  here): 2 (n - 1) / n for allreduce, (n - 1) / n for allgather, reducescatter and
  alltoall, 1 for broadcast and reduce.

In-network (NVLS/SHARP) all-reduce keeps the 2 (n - 1) / n factor, as nccl-tests prints
it: busbw then says what link speed a ring would need for the same time.

>>> round(busbw_GBps("allreduce", 1e9, 0.5, 4), 6)
3.0
"""

from __future__ import annotations

from typing import Any, Callable

from ..schedule.ops import BUSBW_FACTOR   # the ops and their factors have one owner

__all__ = ["GB", "BUSBW_FACTOR", "busbw_factor", "algbw_GBps", "busbw_GBps", "NCCL_COLUMNS",
           "format_us", "format_GBps", "format_efficiency"]

#: Bytes in the GB of nccl-tests' GB/s.
GB = 1e9


def busbw_factor(op: str, num_ranks: int) -> float:
    """The busbw/algbw ratio of ``op`` on ``num_ranks`` ranks (see the module table)."""
    from ..errors import unknown_name

    if op not in BUSBW_FACTOR:
        raise unknown_name("collective", op, BUSBW_FACTOR)
    return float(BUSBW_FACTOR[op](int(num_ranks)))


def algbw_GBps(size: float, seconds: float) -> float | None:
    """S / t in GB/s; None when the run took no time (nothing to divide by)."""
    return size / seconds / GB if seconds > 0 else None


def busbw_GBps(op: str, size: float, seconds: float, num_ranks: int) -> float | None:
    """algbw x the op's factor, GB/s; None when the run took no time."""
    algbw = algbw_GBps(size, seconds)
    return None if algbw is None else algbw * busbw_factor(op, num_ranks)


# -- the table ----------------------------------------------------------------------------

def _fixed(value: float) -> str:
    # nccl-tests prints two decimals; keep three significant digits for tiny values.
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.3g}"


def format_us(seconds: float) -> str:
    """Seconds as microseconds, nccl-tests style: ``1.5e-3`` -> ``'1500.00'``."""
    return _fixed(seconds * 1e6)


def format_GBps(value: float) -> str:
    """A GB/s figure with two decimals."""
    return _fixed(value)


def format_efficiency(value: float) -> str:
    """A 0..1 fraction as a percentage: ``0.5`` -> ``'50.0%'``."""
    return f"{100 * value:.1f}%"


def _size(nbytes: float) -> str:
    from ..units import format_size

    return format_size(nbytes).replace(" ", "")


def _int(value: Any) -> str:
    return f"{int(value)}"


#: (record key, header, formatter) triples of the nccl-tests-like table of collective runs.
NCCL_COLUMNS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("size_bytes", "size", _size),
    ("size_bytes", "bytes", _int),
    ("time_s", "time (us)", format_us),
    ("algbw_GBps", "algbw (GB/s)", format_GBps),
    ("busbw_GBps", "busbw (GB/s)", format_GBps),
    ("algorithm", "algorithm", str),
    # two bounds (netsim.run.collective): the algorithm's (what the links its run used
    # allow its kind) and the machine's (the best any algorithm could do there)
    ("bound_s", "algo bound (us)", format_us),
    ("bound", "algo bound by", str),
    ("efficiency", "algo eff.", format_efficiency),
    ("machine_bound_s", "machine bound (us)", format_us),
    ("machine_efficiency", "machine eff.", format_efficiency),
]
