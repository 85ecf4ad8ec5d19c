"""Parallel layouts: how the ranks of a training or inference job are split into groups.

A layout gives a degree to each parallel dimension: tensor (``tp``), context (``cp``),
expert (``ep``), data (``dp``) and pipeline (``pp``) parallelism. The product of the
degrees is the number of ranks, one rank per chip. (Megatron-LM carves expert parallelism
out of data parallelism; here ``ep`` is a dimension of its own, so that every dimension's
groups are the same kind of object. A job with experts spread over its data-parallel
ranks is ``ep=k, dp=dp/k``.)

A logical rank has one coordinate per dimension. Ranks are numbered in ``order``, the
first dimension varying fastest; the default ``tp-cp-ep-dp-pp`` is Megatron-core's, so
that tensor-parallel peers have consecutive ranks::

    rank = tp_i + tp * (cp_i + cp * (ep_i + ep * (dp_i + dp * pp_i)))

A *group* of dimension ``d`` is the set of ranks whose coordinates differ only along ``d``,
listed by increasing coordinate along ``d``; there are ``ranks / degree(d)`` of them, and
group ``g`` of ``d`` is numbered by the other coordinates in the same fast-to-slow order.

>>> lay = ParallelLayout(tp=4, dp=2)
>>> lay.groups("tp")
[[0, 1, 2, 3], [4, 5, 6, 7]]
>>> lay.groups("dp")
[[0, 4], [1, 5], [2, 6], [3, 7]]
>>> lay.coords(6)
{'tp': 2, 'cp': 0, 'ep': 0, 'dp': 1, 'pp': 0}
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping

import numpy as np

from ..errors import InputError, positive_int, unknown_name

__all__ = ["DIMENSIONS", "DEFAULT_ORDER", "ParallelLayout", "parse_layout"]

#: The parallel dimensions a layout knows, and Megatron-core's rank order (fastest first).
DIMENSIONS = ("tp", "cp", "ep", "dp", "pp")
DEFAULT_ORDER = DIMENSIONS


def _degree(name: str, value) -> int:
    return positive_int(value, f"parallel degree {name}")


def _order(order) -> tuple[str, ...]:
    if isinstance(order, str):
        order = [p.strip() for p in order.replace(",", "-").split("-") if p.strip()]
    order = tuple(order)
    for name in order:
        if name not in DIMENSIONS:
            raise unknown_name("parallel dimension", name, DIMENSIONS)
    if sorted(order) != sorted(DIMENSIONS):
        raise InputError(f"rank order must name each of {'-'.join(DIMENSIONS)} once, "
                         f"got {'-'.join(order)!r}")
    return order


@dataclass(frozen=True)
class ParallelLayout:
    """Degrees of the parallel dimensions and the rank order (see the module docstring).

    ``order`` lists the five dimensions fastest first, as a tuple or a string such as
    ``'tp-dp-cp-ep-pp'``. Degrees left out are 1.
    """

    tp: int = 1
    cp: int = 1
    ep: int = 1
    dp: int = 1
    pp: int = 1
    order: tuple[str, ...] = field(default=DEFAULT_ORDER)

    def __post_init__(self) -> None:
        for name in DIMENSIONS:
            object.__setattr__(self, name, _degree(name, getattr(self, name)))
        object.__setattr__(self, "order", _order(self.order))

    # -- sizes --------------------------------------------------------------------------
    @property
    def degrees(self) -> dict[str, int]:
        """Dimension -> degree, in :data:`DIMENSIONS` order."""
        return {name: getattr(self, name) for name in DIMENSIONS}

    @property
    def num_ranks(self) -> int:
        """The product of the degrees: one rank per chip."""
        return math.prod(self.degrees.values())

    def degree(self, dim: str) -> int:
        """The degree of ``dim`` (a did-you-mean error for an unknown name)."""
        if dim not in DIMENSIONS:
            raise unknown_name("parallel dimension", dim, DIMENSIONS)
        return getattr(self, dim)

    def describe(self) -> str:
        """``'tp=8 x dp=4'``: the degrees above 1 (``'1 rank'`` when there are none)."""
        parts = [f"{d}={k}" for d, k in self.degrees.items() if k > 1]
        return " x ".join(parts) if parts else "1 rank"

    def check_fits(self, num_chips: int, machine: str = "the machine") -> None:
        """One-line InputError unless the degrees multiply to ``num_chips``."""
        if self.num_ranks != num_chips:
            shown = " x ".join(f"{d}={k}" for d, k in self.degrees.items() if k > 1) or "all 1"
            raise InputError(f"parallel degrees {shown} = {self.num_ranks} ranks do not match "
                             f"the {num_chips} chips of {machine}")

    # -- coordinates --------------------------------------------------------------------
    @cached_property
    def _shape(self) -> tuple[int, ...]:
        """Degrees slowest first, so that C-order ravelling puts order[0] fastest."""
        return tuple(getattr(self, d) for d in reversed(self.order))

    @cached_property
    def coordinate_table(self) -> dict[str, np.ndarray]:
        """Dimension -> array of every rank's coordinate along it."""
        table = np.unravel_index(np.arange(self.num_ranks), self._shape)
        return {d: np.asarray(c, dtype=np.int64) for d, c in zip(reversed(self.order), table)}

    def coords(self, rank: int) -> dict[str, int]:
        """Rank -> its coordinate along every dimension (in :data:`DIMENSIONS` order)."""
        rank = int(rank)
        if not 0 <= rank < self.num_ranks:
            raise InputError(f"rank {rank} is not in 0..{self.num_ranks - 1}")
        return {d: int(self.coordinate_table[d][rank]) for d in DIMENSIONS}

    def rank(self, coords: Mapping[str, int]) -> int:
        """Coordinates (missing ones are 0) -> rank."""
        index = []
        for d in reversed(self.order):
            c = int(coords.get(d, 0))
            if not 0 <= c < getattr(self, d):
                raise InputError(f"coordinate {d}={c} is not in 0..{getattr(self, d) - 1}")
            index.append(c)
        return int(np.ravel_multi_index(tuple(index), self._shape))

    # -- groups -------------------------------------------------------------------------
    def group_array(self, dim: str) -> np.ndarray:
        """(number of groups, degree) array: row g lists group g of ``dim`` by coordinate."""
        k = self.degree(dim)
        ranks = np.arange(self.num_ranks).reshape(self._shape)
        axis = len(self.order) - 1 - self.order.index(dim)
        # Move `dim` last; the remaining axes keep slowest-first order, so C-order rows
        # number the groups with the remaining dimensions fastest-first as documented.
        return np.moveaxis(ranks, axis, -1).reshape(-1, k).astype(np.int64)

    def groups(self, dim: str) -> list[list[int]]:
        """The groups of ``dim`` as lists of ranks (see the module docstring)."""
        return self.group_array(dim).tolist()

    def group_of(self, dim: str) -> np.ndarray:
        """Per rank, the index of its group of ``dim``."""
        table = self.group_array(dim)
        out = np.empty(self.num_ranks, dtype=np.int64)
        out[table] = np.arange(table.shape[0])[:, None]
        return out

    def active_dimensions(self) -> list[str]:
        """The dimensions of degree > 1, fastest first."""
        return [d for d in self.order if getattr(self, d) > 1]


def parse_layout(text: str | Mapping[str, int] | None = None, *, order=DEFAULT_ORDER,
                 **degrees: int) -> ParallelLayout:
    """A layout from ``'tp=8,dp=4'`` (or ``'tp=8 x dp=4'``, as :meth:`describe` writes it),
    a mapping, or keyword degrees. Unknown dimension names get a did-you-mean error.

    >>> parse_layout("tp=8,dp=4").num_ranks
    32
    """
    given: dict[str, object] = {}
    if isinstance(text, str):
        for token in re.split(r"[,\s]+", f" {text} ".replace(" x ", " ")):
            if not token:
                continue
            key, eq, value = token.partition("=")
            if not eq:
                raise InputError(f"layout {text!r}: expected DIM=DEGREE items such as tp=8, "
                                 f"got {token!r}")
            try:
                given[key.lower()] = int(value)
            except ValueError:
                raise InputError(f"layout {text!r}: degree {value!r} of {key} is not an "
                                 f"integer") from None
    elif text is not None:
        given.update(text)
    given.update({k: v for k, v in degrees.items() if v is not None})
    for key in given:
        if key not in DIMENSIONS:
            raise unknown_name("parallel dimension", key, DIMENSIONS)
    return ParallelLayout(**given, order=order)
