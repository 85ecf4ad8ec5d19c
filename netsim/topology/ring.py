"""Rings: a 1-D torus of nodes ``n0..n{n-1}`` (routing treats family 'ring' like a torus)."""

from __future__ import annotations

import numpy as np

from ..budget import require_topology
from ._generate import (DEFAULT_BANDWIDTH, DEFAULT_LATENCY, assemble, check_bandwidth,
                        check_latency, check_links, duplex, planes, positive_int)
from .model import Topology

__all__ = ["ring"]


def ring(n: int, *, bandwidth: float | str = DEFAULT_BANDWIDTH,
         latency: float | str = DEFAULT_LATENCY, links: int = 1, bidirectional: bool = True,
         name: str | None = None) -> Topology:
    """A ring of ``n >= 2`` nodes ``n0..n{n-1}``, all endpoints in that rank order.

    Link i -> i+1 is tagged ``dim=0, sign=+1`` and its reverse ``sign=-1``; the closing
    links n-1 -> 0 (``sign=+1``) and 0 -> n-1 (``sign=-1``) are tagged ``wrap=True``.
    ``n=2`` is a single cable with no separate wrap link. A unidirectional ring has only the
    + links (for ``n=2``: n0->n1 and the wrap n1->n0, both ``sign=+1``).

    Parameters
    ----------
    bandwidth : bytes/s of each link in one direction (number or unit string, default 50 GB/s).
    latency : seconds per link (default 0).
    links : parallel links (planes) per neighbour pair per direction. ``links=k`` makes k
        separate links, each of ``bandwidth`` (not one link of k x bandwidth).

    Family ``'ring'``, ``params={'dims': (n,)}``.

    >>> t = ring(8, bandwidth="25GB/s")
    >>> t.num_endpoints, t.num_links
    (8, 16)
    >>> [t.link_names[i] for i in np.flatnonzero(t.wrap)]
    ['n7->n0', 'n0->n7']
    """
    n = positive_int(n, "n", "ring", minimum=2)
    bw = check_bandwidth(bandwidth, "ring")
    lat = check_latency(latency, "ring")
    links = check_links(links, "ring")
    require_topology(n, (2 if bidirectional else 1) * n * links, f"ring:{n}")
    a = np.arange(n, dtype=np.int64)
    b = (a + 1) % n
    is_wrap = b == 0
    if bidirectional:
        if n == 2:  # n1->n0 is already the reverse of n0->n1
            a, b, is_wrap = a[:1], b[:1], is_wrap[:1]
        src, dst, plane, tags = duplex(a, b, links, wrap=is_wrap)
    else:
        src, dst, plane, tags = planes(a, b, links, wrap=is_wrap,
                                       direction=np.ones(n, dtype=np.int64))
    return assemble(name or f"ring-{n}", "ring", {"dims": (n,)}, [f"n{i}" for i in range(n)],
                    src=src, dst=dst, bandwidth=bw, latency=lat, plane=plane,
                    dim=np.zeros(len(src), dtype=np.int64), sign=tags["direction"],
                    wrap=tags["wrap"])
