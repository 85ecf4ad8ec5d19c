"""Flow sets checked column-wise: the fast path for large flow files and flow tables.

A 16x16 mesh all-to-all is 65,280 flows with some 700,000 path hops; validating it one
pydantic record at a time takes seconds. Here the flows are columns (numpy arrays and
flat lists) and every check runs on whole columns: types, units and ranges, ids,
node and link names, dependencies (a level-by-level topological sort) and explicit paths
(each link leaves where the previous one entered, from the flow's source to its
destination, no link twice). A failed check raises :class:`Refused` with the row, the
field and the value; the JSON loader then reruns its per-record models to word the error
exactly as for a small file, and the table loader reports the row itself.

>>> from netsim.topology import mesh
>>> topo = mesh((1, 2), bandwidth=1e9)
>>> cols = FlowColumns.from_arrays(src=["0_0"], dst=["0_1"], nbytes=[1e6])
>>> flowset_from_columns(topo, cols).schedule.num_sends
1
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter
from typing import Callable, Sequence

import numpy as np

from ..units import MAX_SIZE, parse_size, parse_time
from ..topology.model import Topology
from .ir import Schedule

__all__ = ["FlowSet", "FlowColumns", "Refused", "columns_from_records", "flowset_from_columns",
           "topological_levels"]


@dataclass(frozen=True)
class FlowSet:
    """A topology, a schedule of its flows (ranks = node indices) and per-op metadata."""

    topology: Topology
    schedule: Schedule
    flow_ids: tuple            # the file's id of each schedule op
    not_before: np.ndarray     # earliest release per op, s


FLOW_KEYS = ("id", "src", "dst", "bytes", "start", "path", "deps")


class Refused(Exception):
    """A column check failed at ``row`` (a flow's position), ``field``: ``message``."""

    def __init__(self, row: int, field: str, message: str):
        super().__init__(f"flows[{row}].{field}: {message}" if field else
                         f"flows[{row}]: {message}")
        self.row, self.field, self.message = row, field, message


@dataclass
class FlowColumns:
    """Flows as columns. ``ids``, ``src``, ``dst`` and the flat ``path_links`` and
    ``dep_ids`` hold names as the file gives them (strings or integers); ``path_ptr`` and
    ``dep_ptr`` are CSR offsets (a flow with no path entries is routed); ``path_links``
    may be a numpy column (a flow table's), looked up as arrays. ``path_ids``,
    when a reader has already resolved the names, holds the links of ``path_links`` as
    link ids (``path_links`` may then be None)."""

    ids: list
    src: list
    dst: list
    nbytes: np.ndarray                 # bytes
    start: np.ndarray                  # s, earliest release
    path_ptr: np.ndarray | None = None
    path_links: list | np.ndarray | None = None
    dep_ptr: np.ndarray | None = None
    dep_ids: list | None = None
    path_ids: np.ndarray | None = None

    @property
    def num_flows(self) -> int:
        return len(self.src)

    @classmethod
    def from_arrays(cls, *, src: Sequence, dst: Sequence, nbytes, start=None, ids=None,
                    path_ptr=None, path_links=None, dep_ptr=None, dep_ids=None
                    ) -> "FlowColumns":
        """Columns from sequences; ``nbytes`` and ``start`` numbers or unit strings."""
        n = len(src)
        return cls(ids=list(range(n)) if ids is None else list(ids), src=list(src),
                   dst=list(dst), nbytes=_numbers(list(nbytes), "bytes", parse_size, True),
                   start=(np.zeros(n) if start is None
                          else _numbers(list(start), "start", parse_time, False)),
                   path_ptr=None if path_ptr is None else np.asarray(path_ptr, np.int64),
                   path_links=(path_links if path_links is None
                               or isinstance(path_links, np.ndarray) else list(path_links)),
                   dep_ptr=None if dep_ptr is None else np.asarray(dep_ptr, np.int64),
                   dep_ids=None if dep_ids is None else list(dep_ids))


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _numbers(values: list, field: str, parser: Callable, is_size: bool) -> np.ndarray:
    """A float column from numbers or unit strings, checked as :mod:`netsim.units` does."""
    kinds = set(map(type, values))
    if kinds <= {int, float}:
        try:
            column = np.array(values, dtype=np.float64)
        except (OverflowError, ValueError):
            column = np.array([float(v) for v in values])
    elif bool not in kinds and kinds <= {int, float, str}:
        column = np.empty(len(values))
        for row, value in enumerate(values):
            try:
                column[row] = parser(value, field) if type(value) is str else value
            except ValueError as err:
                raise Refused(row, field, str(err)) from None
    else:
        row = next(r for r, v in enumerate(values) if type(v) not in (int, float, str))
        raise Refused(row, field, f"expected a number or a unit string, got {values[row]!r}")
    bad = ~np.isfinite(column)
    if bad.any():
        raise Refused(_first(bad), field, f"{values[_first(bad)]!r} is not a finite number")
    bad = column < 0
    if bad.any():
        raise Refused(_first(bad), field, f"must be >= 0, got {values[_first(bad)]!r}")
    if is_size:
        bad = ((column > 0) & (column < 1)) | (column > MAX_SIZE)
        if bad.any():
            raise Refused(_first(bad), field, f"{values[_first(bad)]!r} is not a size of 0 "
                                              f"or 1 byte to 1 EiB")
    return column


def _names(values, field: str, index: dict, what: str) -> np.ndarray:
    """Indices of node or link names (strings, or integers meaning their text); a numpy
    unicode column is looked up as arrays (:mod:`.namekeys`)."""
    if isinstance(values, np.ndarray):
        if values.dtype.kind == "U":
            from .namekeys import find_unicode

            found = find_unicode(values, list(index))
            if found is not None:
                return np.fromiter(index.values(), dtype=np.int64, count=len(index))[found]
        values = values.tolist()          # one by one: the error names the value
    try:             # names are strings in nearly every file: no pass over their types
        return np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))
    except (KeyError, TypeError):
        pass
    kinds = set(map(type, values))
    if not kinds <= {str, int}:
        row = next(r for r, v in enumerate(values) if type(v) not in (str, int))
        raise Refused(row, field, f"expected a {what} name, got {values[row]!r}")
    if int in kinds:
        values = [str(v) for v in values]
    found = np.fromiter(map(index.get, values, repeat(-1)), dtype=np.int64, count=len(values))
    bad = found < 0
    if bad.any():
        raise Refused(_first(bad), field, f"unknown {what} {values[_first(bad)]!r}")
    return found


def columns_from_records(flows: list) -> FlowColumns:
    """The columns of a flow file's ``flows`` list (dicts as parsed from JSON)."""
    n = len(flows)
    kinds = set(map(type, flows))
    if kinds != {dict}:
        row = next(r for r, f in enumerate(flows) if type(f) is not dict)
        raise Refused(row, "", f"expected an object, got {flows[row]!r}")
    keys = set(chain.from_iterable(flows))
    if not keys <= set(FLOW_KEYS):
        key = sorted(keys - set(FLOW_KEYS))[0]
        raise Refused(next(r for r, f in enumerate(flows) if key in f), key, "unknown field")
    columns = {}
    for key in ("src", "dst", "bytes"):
        try:
            columns[key] = [f[key] for f in flows]
        except KeyError:
            raise Refused(next(r for r, f in enumerate(flows) if key not in f), key,
                          "missing (required)") from None
    ids = _ids(flows) if "id" in keys else list(range(n))
    start = (_numbers([f.get("start", 0.0) for f in flows], "start", parse_time, False)
             if "start" in keys else np.zeros(n))
    cols = FlowColumns(ids=ids, src=columns["src"], dst=columns["dst"],
                       nbytes=_numbers(columns["bytes"], "bytes", parse_size, True),
                       start=start)
    if "path" in keys:
        cols.path_ptr, cols.path_links = _csr([f.get("path") for f in flows], "path", False)
    if "deps" in keys:
        cols.dep_ptr, cols.dep_ids = _csr([f.get("deps", _NONE) for f in flows], "deps", True)
    return cols


def _ids(flows: list) -> list:
    """The ``id`` column; a flow without one is named by its position."""
    try:
        return list(map(itemgetter("id"), flows))   # every flow has one: no Python loop
    except KeyError:
        return [f.get("id", r) for r, f in enumerate(flows)]


_NONE: list = []       # a missing "deps" (an explicit null is refused, as by the model)


def _csr(lists: list, field: str, deps: bool) -> tuple[np.ndarray, list]:
    """CSR offsets and the flat values of a column of lists (a path's None: routed)."""
    kinds = set(map(type, lists))
    allowed = (list,) if deps else (list, type(None))
    if not kinds <= set(allowed):
        row = next(r for r, v in enumerate(lists) if type(v) not in allowed)
        raise Refused(row, field, f"expected a list, got {lists[row]!r}")
    if type(None) in kinds:
        lists = [v if v is not None else _NONE for v in lists]
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    if not deps and not lengths.all():
        empty = next((r for r in np.flatnonzero(lengths == 0).tolist()
                      if lists[r] is not _NONE), None)
        if empty is not None:
            raise Refused(empty, field, "expected a non-empty list, got []")
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    return ptr, list(chain.from_iterable(lists))


def _check_ids(ids: list) -> dict:
    """Position of each flow id; duplicates and 1-vs-"1" twins are refused."""
    kinds = set(map(type, ids))
    if not kinds <= {str, int}:
        row = next(r for r, v in enumerate(ids) if type(v) not in (str, int))
        raise Refused(row, "id", f"expected a string or an integer, got {ids[row]!r}")
    position = dict(zip(ids, range(len(ids))))
    if len(position) < len(ids):
        seen: set = set()
        row = next(r for r, v in enumerate(ids) if v in seen or seen.add(v))
        raise Refused(row, "id", f"duplicate id {ids[row]!r}")
    if len(kinds) > 1 and len(set(map(str, ids))) < len(ids):
        seen = set()
        row = next(r for r, v in enumerate(map(str, ids)) if v in seen or seen.add(v))
        raise Refused(row, "id", f"{ids[row]!r} differs only in type from another id: "
                                 f"ambiguous")
    return position


def topological_levels(num: int, dep_ptr: np.ndarray, dep_pos: np.ndarray) -> np.ndarray:
    """Rows ordered level by level (those without deps first, in row order; then those
    whose deps are all earlier ...), so every row comes after its deps. A row on a cycle
    raises :class:`Refused`.

    >>> topological_levels(3, np.array([0, 1, 1, 2]), np.array([2, 1])).tolist()
    [1, 2, 0]
    """
    if dep_pos.size == 0:
        return np.arange(num)
    child = np.repeat(np.arange(num), np.diff(dep_ptr))
    by_parent = np.argsort(dep_pos, kind="stable")
    kids, kid_ptr = child[by_parent], np.zeros(num + 1, dtype=np.int64)
    np.cumsum(np.bincount(dep_pos, minlength=num), out=kid_ptr[1:])
    waiting = np.diff(dep_ptr).copy()
    frontier = np.flatnonzero(waiting == 0)
    levels = []
    while frontier.size:
        levels.append(frontier)
        counts = kid_ptr[frontier + 1] - kid_ptr[frontier]
        at = np.repeat(kid_ptr[frontier] - np.cumsum(counts) + counts, counts) \
            + np.arange(int(counts.sum()))
        released = kids[at]
        waiting -= np.bincount(released, minlength=num)
        frontier = np.unique(released[waiting[released] == 0])
    order = np.concatenate(levels) if levels else np.zeros(0, dtype=np.int64)
    if order.size < num:
        raise Refused(_first(waiting > 0), "", "dependency cycle among the flows' deps")
    return order


def _check_paths(topology, src: np.ndarray, dst: np.ndarray, ptr: np.ndarray,
                 links: np.ndarray) -> None:
    """Explicit paths lead from the flow's source to its destination, no link twice."""
    lengths = np.diff(ptr)
    has = np.flatnonzero(lengths > 0)
    if has.size == 0:
        return
    row_of = np.repeat(np.arange(src.size), lengths)
    link_src, link_dst = topology.link_src[links], topology.link_dst[links]
    first = ptr[has]
    bad = link_src[first] != src[has]
    if bad.any():
        raise Refused(int(has[_first(bad)]), "path", "does not start at the flow's source")
    follows = np.ones(links.size, dtype=bool)
    follows[first] = False
    bad = follows[1:] & (link_src[1:] != link_dst[:-1])
    if bad.any():
        raise Refused(int(row_of[_first(bad) + 1]), "path", "not a path")
    bad = link_dst[ptr[has + 1] - 1] != dst[has]
    if bad.any():
        raise Refused(int(has[_first(bad)]), "path", "does not end at the destination")
    if topology.num_links <= 1 << 16:
        # A stable sort of 16-bit link ids is a radix sort (a few passes, no comparisons)
        # and keeps each link's hops in row order: a link that one path crosses twice
        # shows as two neighbours of that row.
        by_link = np.argsort(links.astype(np.uint16), kind="stable")
        rows, hops = row_of[by_link], links[by_link]
        bad = (hops[1:] == hops[:-1]) & (rows[1:] == rows[:-1])
        if bad.any():
            raise Refused(int(rows[1:][bad].min()), "path", "loops")
        return
    key = row_of * np.int64(topology.num_links) + links
    if key[-1] < 2**31:
        key = key.astype(np.int32)       # sorts faster
    key.sort()
    bad = key[1:] == key[:-1]
    if bad.any():
        raise Refused(int(key[_first(bad)] // topology.num_links), "path", "loops")


def _op_paths(links: np.ndarray, ptr: np.ndarray, order: np.ndarray | None = None
              ) -> "ExplicitPaths":
    """The explicit paths of the ops as CSR arrays, op k being row ``order[k]`` (default:
    row k): no tuple per flow is made (the engine takes them as arrays).

    >>> dict(_op_paths(np.array([4, 5, 6]), np.array([0, 2, 2, 3]), np.array([2, 1, 0])))
    {0: (6,), 2: (4, 5)}
    """
    from ..routing.core import gather           # (routing loads scipy.sparse: not before
    from ..routing.explicit import ExplicitPaths  # a flow set has paths to hold)

    if order is None:
        return ExplicitPaths(ptr, links)
    new_ptr, pos = gather(ptr, np.asarray(order, dtype=np.int64))
    return ExplicitPaths(new_ptr, links[pos])


def flowset_from_columns(topology, cols: FlowColumns):
    """Check ``cols`` on ``topology`` column-wise and build its :class:`FlowSet`."""

    n = cols.num_flows
    position = _check_ids(cols.ids)
    src = _names(cols.src, "src", topology.node_index, "node")
    dst = _names(cols.dst, "dst", topology.node_index, "node")
    links = cols.path_ids
    if links is None and cols.path_ptr is not None and cols.path_ptr[-1] > 0:
        try:
            links = _names(cols.path_links, "path", topology.link_index, "link")
        except Refused as refused:      # its row is a hop of all paths: name the flow's
            flow = int(np.searchsorted(cols.path_ptr, refused.row, side="right")) - 1
            raise Refused(flow, refused.field, refused.message) from None
    if links is not None:
        _check_paths(topology, src, dst, cols.path_ptr, links)
    order = np.arange(n)
    dep_ptr = np.zeros(n + 1, dtype=np.int64)
    dep_idx = np.zeros(0, dtype=np.int64)
    if cols.dep_ptr is not None and cols.dep_ptr[-1] > 0:
        kinds = set(map(type, cols.dep_ids))
        dep_pos = (np.fromiter(map(position.get, cols.dep_ids, repeat(-1)), dtype=np.int64,
                               count=len(cols.dep_ids))
                   if kinds <= {str, int} else np.full(len(cols.dep_ids), -1))
        bad = dep_pos < 0
        if bad.any():
            row = int(np.searchsorted(cols.dep_ptr, _first(bad), side="right") - 1)
            raise Refused(row, "deps", f"no flow with id {cols.dep_ids[_first(bad)]!r}")
        order = topological_levels(n, cols.dep_ptr, dep_pos)
        op_of = np.empty(n, dtype=np.int64)
        op_of[order] = np.arange(n)
        counts = np.diff(cols.dep_ptr)[order]
        np.cumsum(counts, out=dep_ptr[1:])
        starts = np.repeat(cols.dep_ptr[order] - dep_ptr[:-1], counts)
        dep_idx = op_of[dep_pos[starts + np.arange(int(dep_ptr[-1]))]]
    identity = bool((order == np.arange(n)).all())
    paths = {} if links is None else _op_paths(links, cols.path_ptr,
                                                None if identity else order)
    if identity:
        order = slice(None)
    schedule = Schedule(num_ranks=topology.num_nodes, kind=np.zeros(n, dtype=np.int8),
                        src=src[order], dst=dst[order], nbytes=cols.nbytes[order],
                        seconds=np.zeros(n), dep_ptr=dep_ptr, dep_idx=dep_idx,
                        tag=np.full(n, -1, dtype=np.int64), paths=paths)
    ids = cols.ids
    ids = tuple(ids) if identity else tuple(ids[row] for row in order.tolist())
    return FlowSet(topology, schedule, ids, cols.start[order])
