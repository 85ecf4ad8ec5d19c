"""Shared helpers of the generator modules: argument checks and array-based assembly.

Generators build their links as numpy arrays and hand them to :func:`assemble`, which
freezes them into a :class:`~netsim.topology.model.Topology` without a Python call per
link (a 64x64x64 torus has 1.5 million links).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np

from ..errors import TopologyError, UnitError
from ..units import parse_rate, parse_time
from .model import Topology, _check_link_values

__all__ = ["DEFAULT_BANDWIDTH", "DEFAULT_LATENCY", "positive_int", "check_bandwidth",
           "check_latency", "check_links", "planes", "duplex", "assemble"]

#: Bandwidth of a link (bytes/s, one direction) when none is given: 50 GB/s.
DEFAULT_BANDWIDTH = 50e9
#: Latency of a link (s) when none is given.
DEFAULT_LATENCY = 0.0


def positive_int(value: Any, what: str, family: str, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``, else a one-line TopologyError."""
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if not ok and isinstance(value, float) and value.is_integer():
        value, ok = int(value), True
    if not ok or value < minimum:
        bound = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise TopologyError(f"{family}: {what} must be {bound}, got {value!r}")
    return int(value)


def check_bandwidth(value: Any, family: str, what: str = "bandwidth") -> float:
    """Bytes/s from a number or a unit string (``'25GB/s'``); must be positive and finite."""
    try:
        rate = parse_rate(value, what)
    except UnitError as err:
        raise TopologyError(f"{family}: {err}") from None
    if not math.isfinite(rate) or rate <= 0:
        raise TopologyError(f"{family}: {what} must be a positive finite number of bytes/s, "
                            f"got {value!r}")
    return rate


def check_latency(value: Any, family: str, what: str = "latency") -> float:
    """Seconds from a number or a unit string (``'711ns'``); must be finite and >= 0."""
    try:
        seconds = parse_time(value, what)
    except UnitError as err:
        raise TopologyError(f"{family}: {err}") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise TopologyError(f"{family}: {what} must be a finite number of seconds >= 0, "
                            f"got {value!r}")
    return seconds


def check_links(value: Any, family: str) -> int:
    """Number of parallel links (planes) per neighbour pair per direction."""
    return positive_int(value, "links", family)


def planes(src: np.ndarray, dst: np.ndarray, links: int, **tags: np.ndarray):
    """Repeat every (src, dst) pair ``links`` times, numbering the copies 0..links-1.

    Returns ``src, dst, plane, tags`` with the copies of one pair next to each other, so
    link ids of a pair are consecutive and ordered by plane.
    """
    src = np.repeat(np.asarray(src, dtype=np.int64), links)
    dst = np.repeat(np.asarray(dst, dtype=np.int64), links)
    plane = np.tile(np.arange(links, dtype=np.int64), len(src) // links if links else 0)
    return src, dst, plane, {k: np.repeat(np.asarray(v), links) for k, v in tags.items()}


def duplex(a: np.ndarray, b: np.ndarray, links: int, **per_cable: np.ndarray):
    """Links of full-duplex cables a[i] <-> b[i], ``links`` planes per direction.

    Each cable yields its planes a->b, then its planes b->a. Returns ``src, dst, plane,
    tags``: ``tags`` repeats every per-cable array of ``per_cable`` and adds ``'direction'``
    (+1 for a->b, -1 for b->a), which grids use as the link's ``sign``.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    src, dst = np.stack([a, b], axis=1).ravel(), np.stack([b, a], axis=1).ravel()
    tags = {k: np.repeat(np.asarray(v), 2) for k, v in per_cable.items()}
    tags["direction"] = np.tile(np.array([1, -1], dtype=np.int64), len(a))
    return planes(src, dst, links, **tags)


def assemble(name: str, family: str, params: dict[str, Any], node_names: Sequence[str], *,
             src: np.ndarray, dst: np.ndarray, bandwidth: np.ndarray | float,
             latency: np.ndarray | float, plane: np.ndarray,
             dim: np.ndarray | None = None, sign: np.ndarray | None = None,
             wrap: np.ndarray | None = None, is_switch: np.ndarray | None = None,
             coords: Iterable[tuple[float, ...] | None] | None = None,
             node_attrs: Iterable[dict[str, Any]] | None = None,
             endpoints: np.ndarray | None = None) -> Topology:
    """Freeze node and link arrays into a Topology, naming links ``a->b`` (``a->b#p`` for p>0).

    ``plane`` must already number the parallel links of each (src, dst) pair 0, 1, ...
    (as :class:`TopologyBuilder` does), so link names are unique.
    """
    n, m = len(node_names), len(src)
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    plane = np.asarray(plane, dtype=np.int64)
    bw = np.broadcast_to(np.asarray(bandwidth, dtype=np.float64), (m,)).copy()
    lat = np.broadcast_to(np.asarray(latency, dtype=np.float64), (m,)).copy()
    names = tuple(node_names)
    link_names = tuple(f"{names[s]}->{names[d]}" + (f"#{p}" if p else "")
                       for s, d, p in zip(src.tolist(), dst.tolist(), plane.tolist()))
    _check_link_values(link_names, bw, lat)
    switch = np.zeros(n, dtype=bool) if is_switch is None else np.asarray(is_switch, dtype=bool)
    if endpoints is None:
        endpoints = np.flatnonzero(~switch)
    return Topology(
        name=name, family=family, params=dict(params), node_names=names, is_switch=switch,
        coords=tuple(coords) if coords is not None else (None,) * n,
        node_attrs=tuple(dict(a) for a in node_attrs) if node_attrs is not None
        else tuple({} for _ in range(n)),
        endpoints=np.asarray(endpoints, dtype=np.int64), link_src=src, link_dst=dst,
        bandwidth=bw, latency=lat, plane=plane,
        dim=np.full(m, -1, dtype=np.int64) if dim is None else np.asarray(dim, dtype=np.int64),
        sign=np.zeros(m, dtype=np.int64) if sign is None else np.asarray(sign, dtype=np.int64),
        wrap=np.zeros(m, dtype=bool) if wrap is None else np.asarray(wrap, dtype=bool),
        link_names=link_names,
    )
