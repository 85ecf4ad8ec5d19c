"""Meshes and tori of any number of dimensions (Tenstorrent Galaxy, TPU slices).

Layout conventions, which routing and drawing rely on:

* ``dims = (8, 4)`` means 8 nodes along dimension 0 ("rows") and 4 along dimension 1
  ("columns"). Nodes are created in C order (``np.ndindex(dims)``), so the node index,
  the endpoint (rank) index and ``np.ravel_multi_index(coord, dims)`` are the same number.
* A node is named by its coordinates joined with ``_``: node ``(3, 2)`` is ``"3_2"``,
  node ``(1, 0, 2)`` is ``"1_0_2"``. Its ``coord`` is the coordinate tuple (drawing puts
  ``coord[1]`` on the x axis and ``coord[0]`` on the y axis).
* The links between neighbours along dimension ``d`` carry ``dim=d``; ``sign=+1`` from the
  lower to the higher coordinate and ``sign=-1`` back. A torus closes each dimension of
  size k >= 3 with wrap links (``wrap=True``): k-1 -> 0 is ``sign=+1`` (it continues the
  + direction) and 0 -> k-1 is ``sign=-1``. A dimension of size 2 has no separate wrap
  link (its two nodes are already neighbours); a dimension of size 1 has no links.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..budget import require_topology
from ..errors import TopologyError
from ._generate import (DEFAULT_BANDWIDTH, DEFAULT_LATENCY, assemble, check_bandwidth,
                        check_latency, check_links, duplex)
from .model import Topology

__all__ = ["mesh", "torus", "grid_node_name"]


def grid_node_name(coord: Sequence[int]) -> str:
    """Name of the grid node at ``coord``: ``(3, 2)`` -> ``'3_2'``."""
    return "_".join(str(int(c)) for c in coord)


def _check_dims(dims: Any, family: str) -> tuple[int, ...]:
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        dims = (dims,)
    try:
        dims = tuple(dims)
    except TypeError:
        raise TopologyError(f"{family}: dims must be positive integers, got {dims!r}") from None
    good = all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k >= 1
               for k in dims)
    if not dims or not good:
        raise TopologyError(f"{family}: dims must be positive integers, got {dims!r}")
    return tuple(int(k) for k in dims)


def _cables(index: np.ndarray, wrap: bool):
    """(a, b, dim, is_wrap) arrays of the cables of a grid, a being the '+' side's origin."""
    parts = []
    for d, k in enumerate(index.shape):
        if k == 1:
            continue
        lo = np.take(index, np.arange(k - 1), axis=d).ravel()
        hi = np.take(index, np.arange(1, k), axis=d).ravel()
        parts.append((lo, hi, d, False))
        if wrap and k >= 3:
            parts.append((np.take(index, k - 1, axis=d).ravel(),
                          np.take(index, 0, axis=d).ravel(), d, True))
    a = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
    b = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
    dim = np.concatenate([np.full(len(p[0]), p[2]) for p in parts]) if parts else a
    is_wrap = (np.concatenate([np.full(len(p[0]), p[3]) for p in parts]) if parts
               else np.zeros(0, bool))
    return a, b, dim, is_wrap


def _grid(family: str, dims, bandwidth, latency, links: int, name: str | None) -> Topology:
    dims = _check_dims(dims, family)
    bw = check_bandwidth(bandwidth, family)
    lat = check_latency(latency, family)
    links = check_links(links, family)
    # At most one cable per node and dimension (a torus's), two directions of `links` planes.
    require_topology(math.prod(dims), 2 * len(dims) * math.prod(dims) * links,
                     f"{family}:{'x'.join(map(str, dims))}")
    index = np.arange(math.prod(dims), dtype=np.int64).reshape(dims)
    a, b, dim, is_wrap = _cables(index, wrap=family == "torus")
    # Each cable becomes the '+' link a->b followed by the '-' link b->a.
    src, dst, plane, tags = duplex(a, b, links, dim=dim, wrap=is_wrap)
    coords = list(np.ndindex(dims))
    return assemble(
        name or f"{family}-{'x'.join(map(str, dims))}", family, {"dims": dims},
        [grid_node_name(c) for c in coords], src=src, dst=dst, bandwidth=bw, latency=lat,
        plane=plane, dim=tags["dim"], sign=tags["direction"], wrap=tags["wrap"],
        coords=[tuple(float(x) for x in c) for c in coords])


def mesh(dims: int | Sequence[int], *, bandwidth: float | str = DEFAULT_BANDWIDTH,
         latency: float | str = DEFAULT_LATENCY, links: int = 1,
         name: str | None = None) -> Topology:
    """A mesh (grid without wrap-around) of shape ``dims``; see the module docstring.

    Parameters
    ----------
    dims : int or sequence of int
        Nodes along each dimension, e.g. ``(8, 4)`` (8 rows of 4 columns).
    bandwidth : float or str
        Bytes/s of each link in one direction (default 50 GB/s); unit strings such as
        ``'12.5GB/s'`` are accepted.
    latency : float or str
        Seconds per link (default 0).
    links : int
        Parallel links (planes 0..links-1) per neighbour pair per direction. ``links=k``
        makes k separate links, each of ``bandwidth`` (not one link of k x bandwidth).
    name : str, optional
        Defaults to ``'mesh-8x4'``.

    Returns a Topology of family ``'mesh'`` with ``params={'dims': dims}``; every node is
    an endpoint, node index == rank == ``np.ravel_multi_index(coord, dims)``.

    >>> t = mesh((8, 4), bandwidth="12.5GB/s", links=4)
    >>> t.num_endpoints, t.num_links   # (7*4 + 8*3) cables x 2 directions x 4 planes
    (32, 416)
    >>> t.node_names[t.node("3_2")], t.coords[t.node("3_2")]
    ('3_2', (3.0, 2.0))
    """
    return _grid("mesh", dims, bandwidth, latency, links, name)


def torus(dims: int | Sequence[int], *, bandwidth: float | str = DEFAULT_BANDWIDTH,
          latency: float | str = DEFAULT_LATENCY, links: int = 1,
          name: str | None = None) -> Topology:
    """A torus (a mesh whose dimensions wrap around) of shape ``dims``.

    Same parameters and node layout as :func:`mesh`; ``links=k`` makes k separate links of
    ``bandwidth`` each per neighbour pair per direction. Each dimension of size k >= 3 gets
    wrap links k-1 -> 0 (``sign=+1``) and 0 -> k-1 (``sign=-1``), tagged ``wrap=True``;
    a dimension of size 2 has no separate wrap link. Family ``'torus'``,
    ``params={'dims': dims}``.

    >>> t = torus((4, 4, 4), bandwidth=4.5e10)
    >>> t.num_endpoints, t.num_links   # 64 nodes x 6 neighbours
    (64, 384)
    >>> int(t.wrap.sum())              # 3 dims x 16 rings x 2 directions
    96
    """
    return _grid("torus", dims, bandwidth, latency, links, name)
