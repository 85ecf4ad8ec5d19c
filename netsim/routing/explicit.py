"""Explicit paths given by the user, as link ids: the conversion :func:`~netsim.routing.route`
runs before it checks them as walks.

A flow file's 16x16 mesh all-to-all gives 65,280 paths and some 700,000 hops; converting
them one hop at a time in Python took 0.3 s. :func:`explicit_table` flattens all paths at
once (C-level ``map``/``chain`` over the lists, one numpy conversion, one dictionary
lookup per link name through ``map``), so the cost is a few passes over the hops.
:func:`explicit_table_by_path` is the per-hop reference (and the fallback for paths mixing
names and ids); both return the same table and raise the same errors.

:class:`ExplicitPaths` keeps checked paths as they are loaded, in CSR: a Mapping (request
-> tuple of link ids, made on access) for :attr:`Schedule.paths`, and a router that serves
them by key, so that a flow file's paths reach the engine as arrays, never as 65,280 tuples.

>>> from netsim.topology.grid import mesh
>>> t = mesh((1, 3))
>>> idx, table = explicit_table(t, 2, {1: ["0_1->0_2"], 0: [t.link("0_0->0_1")]})
>>> idx.tolist(), table.path_ptr.tolist(), [t.link_names[l] for l in table.path_links]
([0, 1], [0, 1, 2], ['0_0->0_1', '0_1->0_2'])
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain, repeat
from typing import Iterator, Sequence

import numpy as np

from ..errors import RoutingError, TopologyError, did_you_mean
from ..topology.model import Topology
from .core import PathTable, gather, seg_ptr

__all__ = ["explicit_table", "explicit_table_by_path", "ExplicitPaths"]

_I = np.int64
_INTS = {int, np.int64, np.int32, np.intp}      # hop types taken as link ids at once


def _indices(n: int, paths: Mapping) -> np.ndarray:
    """The request index of each entry of ``paths``, in its order, checked against ``n``."""
    idx = np.fromiter(map(int, paths), dtype=_I, count=len(paths))
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        i = idx.min() if idx.min() < 0 else idx.max()
        raise RoutingError(f"explicit path given for flow {i}, but there are {n} flows")
    return idx


def _unknown(topo: Topology, flow: int, hop: int, name) -> TopologyError:
    """The error for hop ``hop`` (0-based) of flow ``flow``'s path naming no link."""
    return TopologyError(f"flow {flow}: explicit path hop {hop}: topology {topo.name!r} has "
                         f"no link {name!r}{did_you_mean(name, topo.link_names)}")


def _hop(topo: Topology, flow: int, hop: int, x) -> int:
    if isinstance(x, str):
        if x not in topo.link_index:
            raise _unknown(topo, flow, hop, x)
        return topo.link_index[x]
    return int(x)


def explicit_table_by_path(topo: Topology, n: int, paths: Mapping[int, Sequence[int | str]]
                           ) -> tuple[np.ndarray, PathTable]:
    """Reference of :func:`explicit_table`: each path converted hop by hop."""
    idx = np.sort(_indices(n, paths))
    links = [[_hop(topo, i, h, x) for h, x in enumerate(paths[i])] for i in idx.tolist()]
    return idx, PathTable.from_paths(links)


def explicit_table(topo: Topology, n: int, paths: Mapping[int, Sequence[int | str]]
                   ) -> tuple[np.ndarray, PathTable]:
    """Sorted request indices with a user path and those paths as link ids (one sub-flow
    each, fraction 1). Hops are link ids or link names; an unknown name raises
    :class:`~netsim.errors.TopologyError` naming the flow and the hop. Ids are not
    range-checked here (``route`` checks the walks)."""
    idx = _indices(n, paths)
    values = list(paths.values())
    lens = np.fromiter(map(len, values), dtype=_I, count=len(values))
    flat = list(chain.from_iterable(values))
    kinds = set(map(type, flat))
    if kinds <= _INTS:
        links = np.array(flat, dtype=_I) if flat else np.zeros(0, dtype=_I)
    elif kinds == {str}:
        try:
            links = np.fromiter(map(topo.link_index.__getitem__, flat), dtype=_I,
                                count=len(flat))
        except KeyError:
            found = np.fromiter(map(topo.link_index.get, flat, repeat(-1)), dtype=_I,
                                count=len(flat))
            bad = np.flatnonzero(found < 0)
            row_of = np.repeat(np.arange(idx.size), lens)[bad]
            first = int(np.argmin(idx[row_of]))      # the lowest flow's first unknown hop
            row = int(row_of[first])
            hop = int(bad[first] - seg_ptr(lens)[row])
            raise _unknown(topo, int(idx[row]), hop, flat[int(bad[first])]) from None
    else:                                   # names mixed with ids, numpy scalars, ...
        return explicit_table_by_path(topo, n, paths)
    path_ptr = seg_ptr(lens)
    table = PathTable(np.arange(idx.size + 1, dtype=_I), np.ones(idx.size), path_ptr, links)
    if idx.size > 1 and not (idx[1:] > idx[:-1]).all():     # not in request order: sort
        order = np.argsort(idx, kind="stable")
        new_ptr, pos = gather(path_ptr, order)
        idx, table = idx[order], PathTable(table.sub_ptr, table.sub_frac, new_ptr, links[pos])
    return idx, table


class ExplicitPaths(Mapping):
    """Paths of requests (ops) ``0 .. n-1`` as CSR: ``path_links[path_ptr[i]:path_ptr[i+1]]``
    (link ids) is request i's path; an empty row has none. As a Mapping, request -> tuple
    of link ids, made on access; as a :class:`~netsim.routing.Router`, it serves the path
    of each request by its key (``route(..., keys=ops)``): paths already checked as walks
    from the request's source to its destination (its caller's duty), for requests that all
    have one (:attr:`every`).

    >>> paths = ExplicitPaths(np.array([0, 2, 2, 3]), np.array([4, 5, 6]))
    >>> dict(paths), paths.every
    ({0: (4, 5), 2: (6,)}, False)
    >>> table = paths.link_paths(None, None, None, np.array([2, 0]))
    >>> table.path_ptr.tolist(), table.path_links.tolist()
    ([0, 1, 3], [6, 4, 5])
    """

    pair_only = False          # paths depend on the request, not just its (src, dst) pair

    def __init__(self, path_ptr: np.ndarray, path_links: np.ndarray):
        self.path_ptr = np.asarray(path_ptr, dtype=_I)
        self.path_links = np.asarray(path_links, dtype=_I)
        self._rows: np.ndarray | None = None

    @property
    def rows(self) -> np.ndarray:
        """The requests that have a path, in order."""
        if self._rows is None:
            self._rows = np.flatnonzero(self.path_ptr[1:] > self.path_ptr[:-1])
        return self._rows

    @property
    def every(self) -> bool:
        """Whether every request has a path."""
        return self.rows.size == len(self.path_ptr) - 1

    def __getitem__(self, op) -> tuple:
        try:
            row = int(op)
        except (TypeError, ValueError):
            raise KeyError(op) from None
        if row != op or not 0 <= row < len(self.path_ptr) - 1:
            raise KeyError(op)
        start, end = int(self.path_ptr[row]), int(self.path_ptr[row + 1])
        if start == end:
            raise KeyError(op)
        return tuple(self.path_links[start:end].tolist())

    def __iter__(self) -> Iterator[int]:
        return iter(self.rows.tolist())

    def __len__(self) -> int:
        return int(self.rows.size)

    def __repr__(self) -> str:
        return f"ExplicitPaths({len(self)} paths of {len(self.path_ptr) - 1} requests)"

    def link_paths(self, topo, src, dst, keys: np.ndarray) -> PathTable:
        """The paths of requests ``keys`` (one sub-flow each); src and dst are not read."""
        keys = np.asarray(keys, dtype=_I)
        if keys.size and (keys.min() < 0 or keys.max() >= len(self.path_ptr) - 1
                          or (self.path_ptr[keys + 1] == self.path_ptr[keys]).any()):
            raise RoutingError("explicit paths: a request has no path of its own")
        if keys.size == len(self.path_ptr) - 1 and (keys == np.arange(keys.size)).all():
            ptr, links = self.path_ptr, self.path_links
        else:
            ptr, pos = gather(self.path_ptr, keys)
            links = self.path_links[pos]
        return PathTable(np.arange(keys.size + 1, dtype=_I), np.ones(keys.size), ptr, links)
