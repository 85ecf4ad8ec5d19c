"""Options shared by every collective algorithm builder (:class:`AlgoOptions`).

Units: bytes, seconds, bytes/s. An algorithm reads only the fields it understands and
ignores the rest, so one options object can be passed to every algorithm of an op.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ..errors import InputError, unknown_name

if TYPE_CHECKING:  # pragma: no cover - typing only
    from ..topology import Topology

__all__ = ["AlgoOptions", "ORDERS"]


#: Rank orders by name (built by :func:`netsim.algorithms.orders.rank_order`); ``auto``
#: embeds ring-like algorithms on a physical ring, lines on lines, trees on short paths.
ORDERS = ("auto", "natural", "row", "snake", "hilbert")


@dataclass(frozen=True)
class AlgoOptions:
    """Knobs of a collective algorithm.

    chunks : int or None
        Pipelining: the message is split into this many chunks (slices) that follow each
        other through the algorithm (chains, trees, rings). None: 1 for most algorithms,
        about sqrt(S / 256 KiB) (at most 64) for pipelined ones (double binary tree, chain,
        in-network), see :func:`netsim.algorithms.registry.default_chunks`.
    gamma : float or None
        Reduction bandwidth of a rank, bytes/s. When set, every reduction of ``b`` received
        bytes adds a compute op of ``b / gamma`` seconds on the reducing rank, between the
        receive and the send that depends on it. A rank reduces one buffer at a time.
    order : str
        Rank order of ring-like algorithms: ``auto`` (the default: the machine's physical ring,
        line or tree), ``natural``, ``row``, ``snake`` or ``hilbert``
        (see :mod:`netsim.algorithms.orders`).
    root : int
        Root rank of broadcast and reduce.
    topology : Topology or None
        The machine, for topology-aware algorithms (orders, dimensionwise, innetwork,
        inferred groups).
    placement : array of int or None
        Rank -> node index; default ``topology.endpoints[:num_ranks]``.
    groups : tuple of tuples of int, or None
        Ranks grouped (e.g. per node) for hierarchical algorithms.
    extra : mapping
        Algorithm-specific knobs. ``annotate`` (bool): attach symbolic ``data`` to every send
        for :func:`netsim.algorithms.verify.verify`; default: when num_ranks <= 64.
    """

    chunks: int | None = None
    gamma: float | None = None
    order: str = "auto"
    root: int = 0
    topology: "Topology | None" = None
    placement: np.ndarray | None = None
    groups: tuple[tuple[int, ...], ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def check(self, num_ranks: int) -> None:
        """Raise a one-line InputError naming the first field that cannot work here."""
        chunks = self.chunks
        if chunks is not None and (isinstance(chunks, bool)
                                   or not isinstance(chunks, (int, np.integer)) or chunks < 1):
            raise InputError(f"chunks must be a positive integer, got {chunks!r}")
        if self.gamma is not None and not (isinstance(self.gamma, (int, float))
                                           and not isinstance(self.gamma, bool)
                                           and math.isfinite(self.gamma) and self.gamma > 0):
            raise InputError(f"gamma must be a positive number of bytes/s, got {self.gamma!r}")
        if self.order not in ORDERS:
            raise unknown_name("rank order", self.order, ORDERS)
        root = self.root
        if isinstance(root, bool) or not isinstance(root, (int, np.integer)) \
                or not 0 <= root < num_ranks:
            raise InputError(f"root must be a rank in 0..{num_ranks - 1}, got {root!r}")

    def node_of_rank(self, num_ranks: int) -> np.ndarray:
        """Node index of every rank: ``placement`` or the topology's first endpoints."""
        if self.topology is None:
            raise InputError("this algorithm needs a topology (options.topology)")
        if self.placement is None:
            return self.topology.first_endpoints(num_ranks)
        placement = np.asarray(self.placement, dtype=np.int64)
        if placement.shape[0] < num_ranks:
            raise InputError(f"placement maps {placement.shape[0]} ranks, need {num_ranks}")
        return placement[:num_ranks]
