"""Schedules kept across the sizes of one sweep: built once, scaled for the other sizes.

An algorithm registered with ``size_linear`` (:class:`~netsim.algorithms.registry.
Algorithm`; true for these ranks and options) builds, for a fixed pipelining depth
(``options.chunks``), the same ops at every size, with bytes and compute seconds that are
the size times fixed factors. Scaling
a float by a power of two is exact (no rounding: only the exponent changes, while the
result stays a normal float), and rounding commutes with it, so the schedule of size
``S * 2**k`` is the schedule of size ``S`` with its ``nbytes`` and ``seconds`` multiplied
by ``2**k``, bit for bit. :class:`ScaledBuilds` keeps the last schedule built per
algorithm and reuses it that way when the next size is a power-of-two multiple with the
same depth (a doubling sweep, ``1KiB:16GiB``, builds each algorithm once per depth);
anything else is built as usual.

>>> from dataclasses import replace
>>> from netsim.algorithms.options import AlgoOptions
>>> from netsim.algorithms.registry import get_algorithm
>>> from netsim.topology import ring
>>> algo = get_algorithm("allreduce", "direct")
>>> options = AlgoOptions(topology=ring(4))
>>> builds = ScaledBuilds()
>>> first = builds.build(algo, 4, 1024.0, options)
>>> second = builds.build(algo, 4, 4096.0, options)        # 4 x 1 KiB: scaled, not built
>>> builds.built, builds.scaled
(1, 1)
>>> bool((second.nbytes == algo.build(4, 4096.0, options).nbytes).all())
True
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

__all__ = ["ScaledBuilds", "power_of_two_factor"]

#: Schedules up to this many ops are kept (as :data:`collective._KEEP_BUILT_OPS`): larger
#: ones are built at every size, so that a sweep holds no more than a few small ones.
KEEP_OPS = 300_000
#: ... and all kept together up to this many ops (about 65 bytes each: some 65 MB).
KEEP_TOTAL_OPS = 1_000_000


def power_of_two_factor(kept: float, size: float) -> float | None:
    """``size / kept`` when it is a power of two (2**k, k of either sign) that takes
    ``kept`` to ``size`` exactly, else None.

    >>> power_of_two_factor(1024.0, 4096.0), power_of_two_factor(1024.0, 3072.0)
    (4.0, None)
    """
    if not (kept > 0 and size > 0 and math.isfinite(kept) and math.isfinite(size)):
        return None
    factor = size / kept
    if math.frexp(factor)[0] != 0.5 or kept * factor != size:
        return None
    return factor


def _exactly_scaled(values: np.ndarray, factor: float) -> bool:
    """Whether ``values * factor`` (a power of two) is exact: every nonzero value and its
    product stay normal floats (no overflow, no subnormal)."""
    if values.size == 0:
        return True
    magnitude = np.abs(values)
    nonzero = magnitude[magnitude > 0]
    if nonzero.size == 0:
        return True
    low, high = float(nonzero.min()), float(nonzero.max())
    tiny, huge = sys.float_info.min, sys.float_info.max
    return (math.isfinite(high) and low >= tiny and low * factor >= tiny
            and high * factor <= huge)


@dataclass
class _Kept:
    size: float
    chunks: int | None
    options: Any            # the options it was built with (compared field by field)
    schedule: Any


class ScaledBuilds:
    """``build(algo, num_ranks, size, options)``: ``algo.build(...)``, or an earlier
    size's schedule of the same algorithm scaled (module docstring). ``built`` and
    ``scaled`` count the two cases."""

    def __init__(self) -> None:
        self._kept: dict[tuple, _Kept] = {}
        self.built = 0
        self.scaled = 0

    def build(self, algo, num_ranks: int, size: float, options):
        scales = getattr(algo, "scales_with_size", None)
        if scales is None or not scales(num_ranks, options):
            return algo.build(num_ranks, size, options)
        key = (algo.op, algo.name, int(num_ranks), "planes" in options.extra)
        chunks = algo.resolve(size, options).chunks
        kept = self._kept.get(key)
        if kept is not None and kept.chunks == chunks and _same_options(kept.options, options):
            factor = power_of_two_factor(kept.size, size)
            schedule = kept.schedule
            if factor is not None and _exactly_scaled(schedule.nbytes, factor) \
                    and _exactly_scaled(schedule.seconds, factor):
                self.scaled += 1
                scaled = replace(schedule, nbytes=schedule.nbytes * factor,
                                 seconds=schedule.seconds * factor, meta=dict(schedule.meta))
                kept.size, kept.schedule = size, scaled
                return scaled
        schedule = algo.build(num_ranks, size, options)
        self.built += 1
        self._kept.pop(key, None)
        held = sum(k.schedule.num_ops for k in self._kept.values())
        if schedule.num_ops <= KEEP_OPS and held + schedule.num_ops <= KEEP_TOTAL_OPS:
            self._kept[key] = _Kept(size, chunks, options, schedule)
        return schedule


def _same_options(a, b) -> bool:
    """Equal options but for what depends on the size (the depth, compared apart): the
    same topology object, placement, groups and extras."""
    if a is b:
        return True
    if (a.chunks, a.gamma, a.order, a.root, a.groups) != (b.chunks, b.gamma, b.order, b.root,
                                                          b.groups):
        return False
    if a.topology is not b.topology:
        return False
    if (a.placement is None) != (b.placement is None) or (
            a.placement is not None and not np.array_equal(a.placement, b.placement)):
        return False
    try:
        return dict(a.extra) == dict(b.extra)
    except (TypeError, ValueError):          # extras that do not compare: build again
        return False
