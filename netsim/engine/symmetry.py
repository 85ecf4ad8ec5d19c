"""Symmetry is beauty: flows that cannot be told apart are simulated once.

Collectives on symmetric machines are full of sends with the same size, the same release,
the same dependency shape and paths that map onto each other under the machine's symmetry.
If ops, sub-flows and links are partitioned into classes such that

* every op of a class has the same kind, bytes, compute time, per-message overhead and
  release floor, the same
  number of dependencies, successors and sub-flows in each class;
* every sub-flow of a class has the same bytes and path latency, an op of the same class,
  and the same number of links of each link class on its path;
* every link of a class has the same capacity and carries the same number of sub-flows of
  each sub-flow class

(an *equitable partition* of the op-dependency, op-sub-flow and sub-flow-link graph, with
the attributes in the starting colours), then by induction over events every member of a
class is released, drains and finishes at the same instants: progressive filling raises
flows of one class together and saturates links of one class together, because each link
of class L sees ``n[L, f]`` flows of class f and each flow of class f meets the same link
classes. One representative per class, with the multiplicity ``n[L, f]`` as the weight of
its incidence on L (a link of class L carries ``sum_f n[L, f] r_f``), is then exact.

The partition comes from colour refinement (1-dimensional Weisfeiler-Leman) without being
told the symmetry group: colours start from the attributes plus the longest-path depth from
the sources and to the sinks of the DAG (so long pipelines do not need one round per
step), and each round hashes every node's colour with the multiset of its neighbours'
colours. Hashes are only a way to find a candidate: the partition is used only after an
exact integer check that it is equitable (:func:`_equitable`), so a hash collision can
cost compression, never correctness.

With numba (a base dependency) the search runs on compiled kernels (:func:`_k_search`):
the same start colours, rounds and exact checks, with hash tables and counting sorts in
place of numpy's sorts and one pass over the DAG for the depths (benchmarks/
bench_symmetry.py times both). It finds the same partition, and the numpy search
renumbers its classes by first appearance as the compiled one numbers them, so both give
the same arrays, and which one ran never changes a result's last bits (the quotient run
visits classes in id order). Small searches run on numpy, whose cost is below that of
loading numba (:attr:`~.config.EngineConfig.symmetry_compiled_from`).

>>> from netsim.topology import ring
>>> from netsim.schedule import sends_from_arrays
>>> from netsim.engine import route_schedule
>>> topo = ring(8, bandwidth=1e9)
>>> sched = sends_from_arrays(8, range(8), [(i + 1) % 8 for i in range(8)], 1e9)
>>> routes = route_schedule(topo, sched, topo.endpoints)
>>> classes = find_classes(sched, routes, topo.bandwidth, min_subflows=0)
>>> int(classes.op.max()) + 1, int(classes.sub.max()) + 1    # one class of 8 sends
(1, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ..interrupts import checkpoint
from ..schedule import SEND, Schedule

from .config import EngineConfig
from ..kept import Kept

__all__ = ["Classes", "find_classes"]


@dataclass(frozen=True)
class Classes:
    """Class ids (dense, 0..k-1) per op, per sub-flow and per link, and each class's size."""

    op: np.ndarray
    sub: np.ndarray
    link: np.ndarray

    @staticmethod
    def sizes(cls_of: np.ndarray) -> np.ndarray:
        return np.bincount(cls_of, minlength=int(cls_of.max()) + 1 if cls_of.size else 0)

    @staticmethod
    def representatives(cls_of: np.ndarray) -> np.ndarray:
        """The first member of every class, in class order."""
        return np.unique(cls_of, return_index=True)[1]


def _dense(*keys: np.ndarray) -> np.ndarray:
    """Dense codes of the rows (keys[0][i], keys[1][i], ...): equal rows, equal codes."""
    n = keys[0].size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort(keys[::-1])
    change = np.zeros(n, dtype=bool)
    for key in keys:
        k = key[order]
        change[1:] |= k[1:] != k[:-1]
    code = np.empty(n, dtype=np.int64)
    code[order] = np.cumsum(change)
    return code


def _segment_sum(ptr: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per CSR row, the wrapping uint64 sum of its values (0 for an empty row)."""
    rows = len(ptr) - 1
    out = np.zeros(rows, dtype=np.uint64)
    if values.size == 0:
        return out
    full = np.diff(ptr) > 0
    out[full] = np.add.reduceat(values, ptr[:-1][full])
    return out


def transpose(ptr: np.ndarray, idx: np.ndarray, n_cols: int) -> tuple[np.ndarray, np.ndarray]:
    """The transpose of the CSR incidence (``ptr``, ``idx``) with ``n_cols`` columns:
    (ptr, rows) per column, rows in order within a column.

    >>> ptr, rows = transpose(np.array([0, 2, 3]), np.array([1, 0, 1]), 2)
    >>> ptr.tolist(), rows.tolist()         # column 0: row 0; column 1: rows 0 and 1
    ([0, 1, 3], [0, 0, 1])
    """
    owner = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    order = np.argsort(idx, kind="stable")
    tptr = np.zeros(n_cols + 1, dtype=np.int64)
    np.cumsum(np.bincount(idx, minlength=n_cols), out=tptr[1:])
    return tptr, owner[order]


def _depths(ptr: np.ndarray, idx: np.ndarray, n: int) -> np.ndarray:
    """Longest path (in edges) from a source of the DAG whose in-edges are CSR (ptr, idx)."""
    sptr, succ = transpose(ptr, idx, n)
    waiting = np.diff(ptr).copy()
    depth = np.zeros(n, dtype=np.int64)
    frontier = np.flatnonzero(waiting == 0)
    level = 0
    while frontier.size:
        depth[frontier] = level
        nxt = succ[_spans(sptr, frontier)]
        if nxt.size == 0:
            break
        uniq, count = np.unique(nxt, return_counts=True)
        waiting[uniq] -= count
        frontier = uniq[waiting[uniq] == 0]
        level += 1
    return depth


def _spans(ptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Concatenated index ranges ptr[r]:ptr[r+1] of ``rows``."""
    lengths = ptr[rows + 1] - ptr[rows]
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(ptr[rows] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(total) + offsets


def _equitable(x_cls: np.ndarray, ptr: np.ndarray, nb: np.ndarray, y_cls: np.ndarray) -> bool:
    """Exact: every member of an x class has the same number of neighbours in each y class.

    Rows are put in class order, so that every key (row, class of neighbour) comes out
    nearly sorted and a stable sort (timsort: runs) groups them in about linear time; then
    each row's list of (class, count) must equal its class's first row's, entry by entry.
    """
    n = len(ptr) - 1
    if nb.size == 0 or n == 0:
        return True
    ny = int(y_cls.max()) + 1
    order = np.argsort(x_cls, kind="stable")                 # rows, class by class
    lengths = (ptr[1:] - ptr[:-1])[order]
    row = np.repeat(np.arange(n, dtype=np.int64), lengths)
    key = np.sort(row * ny + y_cls[nb[_spans(ptr, order)]], kind="stable")
    first = np.concatenate([[True], key[1:] != key[:-1]])
    starts = np.flatnonzero(first)
    pair = key[starts]
    count = np.diff(np.concatenate([starts, [key.size]]))
    owner, ycls = pair // ny, pair % ny
    seg_len = np.bincount(owner, minlength=n)
    seg_start = np.concatenate([[0], np.cumsum(seg_len)[:-1]])
    cls = x_cls[order]
    class_first = np.flatnonzero(np.concatenate([[True], cls[1:] != cls[:-1]]))
    rep = class_first[np.cumsum(np.concatenate([[False], cls[1:] != cls[:-1]]))]
    if not (seg_len == seg_len[rep]).all():
        return False
    mirror = np.arange(pair.size) - seg_start[owner] + seg_start[rep[owner]]
    return bool((ycls == ycls[mirror]).all() and (count == count[mirror]).all())


def find_classes(schedule: Schedule, routes, capacity: np.ndarray, *,
                 not_before: np.ndarray | None = None, overhead=0.0,
                 min_subflows: int | None = None,
                 config: EngineConfig | None = None) -> Classes | None:
    """An equitable partition of ops, sub-flows and links, or None if it would not pay.

    None when there are fewer than ``min_subflows`` sub-flows (default
    ``config.symmetry_min_subflows``), more path incidences than
    ``config.symmetry_max_incidences``, when the sub-flow classes are more than
    ``config.symmetry_max_class_share`` of the sub-flows, or when refinement does not
    settle within ``config.symmetry_max_rounds`` rounds (:class:`~.config.EngineConfig`,
    default its defaults). ``capacity`` is bytes/s per link (the capacities the run
    starts with).
    """
    config = EngineConfig() if config is None else config
    n_sub = len(routes.sub_req)
    floor = config.symmetry_min_subflows if min_subflows is None else min_subflows
    if n_sub == 0 or n_sub < floor or len(routes.path_links) > config.symmetry_max_incidences:
        return None
    from ..budget import require_search

    work = len(routes.path_links) + len(schedule.dep_idx) + n_sub
    require_search(work + schedule.num_ops)
    kernels = _compiled(work, config)
    attrs = _attributes(schedule, routes, capacity, not_before, overhead)
    start = _start_labels(kernels, *attrs[:3])
    # all the search's result depends on: the graph, the start labels, the configuration's
    # limits and which search runs (both find the same partition, each with its own
    # random values)
    limits = (config.symmetry_max_rounds, config.symmetry_max_class_share, kernels is None)
    arrays = (*attrs[3], *start)
    kept = _kept.find(limits, arrays)
    if kept is not None:                      # a sweep's sizes: the same graph, again
        return kept[0]
    if kernels is not None:
        found = _find_compiled(kernels, start, attrs[3], config)
    else:
        found = _find_numpy(start, attrs[3], config)
    _kept.put(limits, arrays, found,
              held=0 if found is None else found.op.nbytes + found.sub.nbytes
              + found.link.nbytes)
    return found


def _start_labels(k, op_attrs, sub_attrs, capacity) -> tuple[np.ndarray, ...]:
    """Where the search starts: per op, sub-flow and link, the class of its attributes (a
    tuple of :func:`_attributes`), classes numbered by first appearance. Only which
    attributes are equal counts, not their values: a sweep's sizes scale every op's bytes
    alike and start from the same labels. ``k``: the compiled kernels, or None (numpy)."""
    op_keys = (op_attrs[0].view(np.uint64), *(_bits(a) for a in op_attrs[1:]))
    sub_keys = tuple(_bits(a) for a in sub_attrs)
    rows = (op_keys, sub_keys, (_bits(capacity),))
    if k is None:
        return tuple(_by_first_appearance(_dense(*keys)) for keys in rows)
    labels = []
    for keys in rows:
        label = np.zeros(keys[0].size, np.int64)
        for key in keys:
            label, _ = k._k_relabel(label, key)
        labels.append(label)
    return tuple(labels)


def _copied(found: Classes | None) -> Classes | None:
    return None if found is None else Classes(op=found.op.copy(), sub=found.sub.copy(),
                                              link=found.link.copy())


#: The last four searches (classes, or None where none paid) with all that each depended
#: on (find_classes). The sizes of a sweep build the same schedule but for its bytes
#: (gb200-nvl72, 1 KiB to 16 GiB: 25 sizes, 5 graphs), so the same search ran again at
#: every size; kept, it runs once per graph.
_kept = Kept(copy=_copied)


def forget_searches() -> None:
    """Drop the kept searches (a benchmark timing the search itself)."""
    _kept.clear()


def _attributes(schedule: Schedule, routes, capacity, not_before, overhead):
    """What both searches start from: per op its kind (int64), bytes, per-message
    overhead, compute time and release floor; per sub-flow its bytes and path latency;
    per link its capacity (floats); and the graph as int64 CSR arrays (dep_ptr, dep_idx,
    sub_op, path_ptr, path_links)."""
    n_ops = schedule.num_ops
    send_ops = np.flatnonzero(schedule.kind == SEND)
    sub_op = send_ops[routes.sub_req].astype(np.int64)
    floor = np.zeros(n_ops) if not_before is None else np.asarray(not_before, dtype=float)
    cost = np.broadcast_to(np.asarray(overhead, dtype=float), (n_ops,))   # per message, s
    op_attrs = (schedule.kind.astype(np.int64), schedule.nbytes, cost, schedule.seconds, floor)
    sub_attrs = (schedule.nbytes[sub_op] * routes.sub_frac, np.asarray(routes.sub_latency))
    graph = tuple(np.asarray(a, dtype=np.int64) for a in (
        schedule.dep_ptr, schedule.dep_idx, sub_op, routes.path_ptr, routes.path_links))
    return op_attrs, sub_attrs, np.asarray(capacity, dtype=float), graph


def _find_numpy(start, graph, config: EngineConfig) -> Classes | None:
    """:func:`find_classes` with numpy only: sorts where the compiled search hashes."""
    share, max_rounds = config.symmetry_max_class_share, config.symmetry_max_rounds
    dep_ptr, dep_idx, sub_op, path_ptr, path_links = graph
    op, sub, link = start
    n_ops, n_sub, n_links = op.size, sub.size, link.size
    if sub.max() + 1 > share * n_sub:       # e.g. sizes all different: no classes
        return None
    succ_ptr, succ_idx = transpose(dep_ptr, dep_idx, n_ops)
    one_ptr = np.arange(n_sub + 1, dtype=np.int64)
    osub_ptr, osub_idx = transpose(one_ptr, sub_op, n_ops)
    lsub_ptr, lsub_idx = transpose(path_ptr, path_links, n_links)
    op = _dense(op, _depths(dep_ptr, dep_idx, n_ops), _depths(succ_ptr, succ_idx, n_ops))
    counts = (-1, -1, -1)
    rng = np.random.default_rng(0x5EED)
    for rounds in range(max_rounds):
        new_counts = (int(op.max()) + 1 if n_ops else 0, int(sub.max()) + 1,
                      int(link.max()) + 1 if n_links else 0)
        if new_counts[1] > share * n_sub or \
                np.unique(op[sub_op]).size > share * n_sub:   # see _k_search
            return None
        if new_counts == counts:
            break

        counts = new_counts

        def table(k: int) -> np.ndarray:
            return rng.integers(0, np.iinfo(np.uint64).max, size=max(k, 1), dtype=np.uint64)

        t_dep, t_succ, t_osub = table(counts[0]), table(counts[0]), table(counts[1])
        t_sop, t_path, t_lsub = table(counts[0]), table(counts[2]), table(counts[1])
        with np.errstate(over="ignore"):
            op_sig = (_segment_sum(dep_ptr, t_dep[op[dep_idx]])
                      + _segment_sum(succ_ptr, t_succ[op[succ_idx]])
                      + _segment_sum(osub_ptr, t_osub[sub[osub_idx]]))
            sub_sig = t_sop[op[sub_op]] + _segment_sum(path_ptr, t_path[link[path_links]])
            link_sig = _segment_sum(lsub_ptr, t_lsub[sub[lsub_idx]])
        op, sub, link = _dense(op, op_sig), _dense(sub, sub_sig), _dense(link, link_sig)
    else:
        return None
    checks = [(op, dep_ptr, dep_idx, op), (op, succ_ptr, succ_idx, op),
              (op, osub_ptr, osub_idx, sub), (sub, one_ptr, sub_op, op),
              (sub, path_ptr, path_links, link), (link, lsub_ptr, lsub_idx, sub)]
    if not all(_equitable(*check) for check in checks):
        return None
    return Classes(op=_by_first_appearance(op), sub=_by_first_appearance(sub),
                   link=_by_first_appearance(link))


def _by_first_appearance(codes: np.ndarray) -> np.ndarray:
    """Dense codes renumbered in order of their first element, as the compiled search
    numbers its classes.

    >>> _by_first_appearance(np.array([2, 0, 2, 1])).tolist()
    [0, 1, 0, 2]
    """
    if codes.size == 0:
        return codes
    first = np.unique(codes, return_index=True)[1]       # codes are dense: 0..k-1
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[codes]


@dataclass(frozen=True)
class QuotientRoutes:
    """The sub-flow classes' representatives as :class:`~netsim.routing.Routes` fields,
    plus ``path_weight``: the flows of the class that each link of the class carries."""

    src: np.ndarray
    dst: np.ndarray
    sub_req: np.ndarray
    sub_frac: np.ndarray
    path_ptr: np.ndarray
    path_links: np.ndarray
    path_weight: np.ndarray
    sub_latency: np.ndarray


def _unique(values: np.ndarray, *, counts: bool = False):
    """``np.unique`` of an integer array (with counts if asked), by a sort: numpy 2.4's
    ``np.unique`` hashes integers first, which on pair codes spread over a wide range is
    many times slower than the sort.

    >>> _unique(np.array([5, 1, 5, 3]), counts=True)
    (array([1, 3, 5]), array([1, 1, 2]))
    """
    ordered = np.sort(values)
    first = np.empty(ordered.size, dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    kept = ordered[first]
    if not counts:
        return kept
    return kept, np.diff(np.append(np.flatnonzero(first), ordered.size))


def quotient(schedule: Schedule, routes, capacity: np.ndarray, classes: Classes,
             not_before: np.ndarray | None, overhead=0.0):
    """The problem on one representative per class: (schedule, routes, capacity,
    not_before, overhead); the per-op arrays (release floors, per-message overheads when
    given per op) are the representatives' own.

    Op class c stands for op ``rep[c]``; its dependencies are the classes of the rep's
    dependencies (each once: all members of a class finish together). A sub-flow class
    crosses each link class L it meets once, weighted by ``n[L, f] = |f| k / |L|``, where k
    is how many links of L its representative crosses (double counting of the incidences
    between the two classes).
    """
    op_rep = Classes.representatives(classes.op)
    sub_rep = Classes.representatives(classes.sub)
    link_rep = Classes.representatives(classes.link)
    n_q = op_rep.size
    # Dependencies: classes of the representative's dependencies, each once.
    owner = np.repeat(np.arange(n_q), schedule.dep_ptr[op_rep + 1] - schedule.dep_ptr[op_rep])
    deps = classes.op[schedule.dep_idx[_spans(np.asarray(schedule.dep_ptr, dtype=np.int64),
                                              op_rep)]]
    pair = _unique(owner * n_q + deps)
    dep_ptr = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(np.bincount(pair // n_q, minlength=n_q), out=dep_ptr[1:])
    q_schedule = Schedule(
        num_ranks=schedule.num_ranks, kind=schedule.kind[op_rep], src=schedule.src[op_rep],
        dst=schedule.dst[op_rep], nbytes=schedule.nbytes[op_rep],
        seconds=schedule.seconds[op_rep], dep_ptr=dep_ptr, dep_idx=pair % n_q,
        tag=schedule.tag[op_rep], tags=schedule.tags)
    # Sub-flows: the representative's op class, as a position among the quotient's sends.
    send_ops = np.flatnonzero(schedule.kind == SEND)
    q_send_position = np.cumsum(q_schedule.kind == SEND) - 1
    rep_op = classes.op[send_ops[routes.sub_req[sub_rep]]]
    path_ptr = np.asarray(routes.path_ptr, dtype=np.int64)
    n_l = link_rep.size
    owner = np.repeat(np.arange(sub_rep.size), path_ptr[sub_rep + 1] - path_ptr[sub_rep])
    links = classes.link[np.asarray(routes.path_links)[_spans(path_ptr, sub_rep)]]
    pair, k = _unique(owner * n_l + links, counts=True)
    f, lc = pair // n_l, pair % n_l
    weight = Classes.sizes(classes.sub)[f] * k / Classes.sizes(classes.link)[lc]
    q_path_ptr = np.zeros(sub_rep.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(f, minlength=sub_rep.size), out=q_path_ptr[1:])
    src = np.asarray(routes.src)[routes.sub_req[sub_rep]]
    dst = np.asarray(routes.dst)[routes.sub_req[sub_rep]]
    q_routes = QuotientRoutes(
        src=src, dst=dst, sub_req=q_send_position[rep_op],
        sub_frac=np.asarray(routes.sub_frac)[sub_rep], path_ptr=q_path_ptr, path_links=lc,
        path_weight=np.rint(weight), sub_latency=np.asarray(routes.sub_latency)[sub_rep])
    q_not_before = None if not_before is None else np.asarray(not_before)[op_rep]
    q_overhead = np.asarray(overhead, dtype=float)[op_rep] if np.ndim(overhead) else overhead
    return (q_schedule, q_routes, np.asarray(capacity, dtype=float)[link_rep], q_not_before,
            q_overhead)


# --- The compiled search (numba; see _compiled) -------------------------------------------
# Plain loops, compiled lazily by _compiled(): each is one O(n) pass where the numpy code
# sorts (np.lexsort, np.unique, argsort) or loops over DAG levels in Python.

def _k_mix(x):
    """splitmix64's finaliser: a random-looking uint64 for every uint64 (a bijection)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _k_relabel(old, key):
    """Dense codes of the pairs (old[i], key[i]), numbered by first appearance (a hash
    table of the distinct pairs, both stored: equal codes only for equal pairs). The
    table starts small and doubles: it stays as small as the classes (in cache) when there
    are few, which is when the search pays."""
    n = old.size
    size = 256
    t_old = np.full(size, -1, np.int64)
    t_key = np.zeros(size, np.uint64)
    t_val = np.zeros(size, np.int64)
    out = np.empty(n, np.int64)
    count = 0
    last_o, last_k, last = np.int64(-1), np.uint64(0), np.int64(0)
    for i in range(n):
        o = old[i]
        k = key[i]
        if o == last_o and k == last_k:     # runs of equal pairs are common: no probe
            out[i] = last
            continue
        mask = np.uint64(size - 1)
        j = _k_mix(k ^ _k_mix(np.uint64(o))) & mask
        while True:
            if t_old[j] == -1:
                t_old[j] = o
                t_key[j] = k
                t_val[j] = count
                out[i] = count
                count += 1
                break
            if t_old[j] == o and t_key[j] == k:
                out[i] = t_val[j]
                break
            j = (j + np.uint64(1)) & mask
        last_o, last_k, last = o, k, out[i]
        if 2 * count > size:                 # at most half full: short probes
            size *= 2
            mask = np.uint64(size - 1)
            n_old = np.full(size, -1, np.int64)
            n_key = np.zeros(size, np.uint64)
            n_val = np.zeros(size, np.int64)
            for s in range(t_old.size):
                if t_old[s] != -1:
                    j = _k_mix(t_key[s] ^ _k_mix(np.uint64(t_old[s]))) & mask
                    while n_old[j] != -1:
                        j = (j + np.uint64(1)) & mask
                    n_old[j] = t_old[s]
                    n_key[j] = t_key[s]
                    n_val[j] = t_val[s]
            t_old, t_key, t_val = n_old, n_key, n_val
    return out, count


def _k_transpose(ptr, idx, n_cols):
    """(tptr, owner): the CSR of the transposed incidence, rows in order within a column."""
    tptr = np.zeros(n_cols + 1, np.int64)
    for e in range(idx.size):
        tptr[idx[e] + 1] += 1
    for c in range(n_cols):
        tptr[c + 1] += tptr[c]
    fill = tptr[:-1].copy()
    owner = np.empty(idx.size, np.int64)
    for r in range(ptr.size - 1):
        for e in range(ptr[r], ptr[r + 1]):
            c = idx[e]
            owner[fill[c]] = r
            fill[c] += 1
    return tptr, owner


def _k_depths(ptr, idx, sptr, succ):
    """Longest path (edges) from a source of the DAG with in-edges (ptr, idx), out-edges
    (sptr, succ): Kahn's order, each node once."""
    n = ptr.size - 1
    waiting = np.empty(n, np.int64)
    depth = np.zeros(n, np.int64)
    queue = np.empty(n, np.int64)
    tail = 0
    for i in range(n):
        waiting[i] = ptr[i + 1] - ptr[i]
        if waiting[i] == 0:
            queue[tail] = i
            tail += 1
    head = 0
    while head < tail:
        u = queue[head]
        head += 1
        for e in range(sptr[u], sptr[u + 1]):
            v = succ[e]
            if depth[u] + 1 > depth[v]:
                depth[v] = depth[u] + 1
            waiting[v] -= 1
            if waiting[v] == 0:
                queue[tail] = v
                tail += 1
    return depth


def _k_signature(ptr, nb, cls, salt, out):
    """Adds to out[row] the wrapping sum of a random uint64 per class of each neighbour.
    The salt is mixed first: salts a few apart (one per relation) used as they are let a
    neighbour of class c by one relation and of class c ^ 1 by the next add the same value
    (c ^ s == (c ^ 1) ^ (s + 1) for an even s), and the search then kept ops that differ
    only there in one class."""
    salt = _k_mix(salt)
    for r in range(ptr.size - 1):
        s = np.uint64(0)
        for e in range(ptr[r], ptr[r + 1]):
            s += _k_mix(np.uint64(cls[nb[e]]) ^ salt)
        out[r] += s


def _k_equitable(x_cls, nx, ptr, nb, y_cls, ny):
    """:func:`_equitable`, in O(rows + incidences): each row's (class, count) tallies
    against its class's first row's (same degree and same count for each neighbour class
    it has: then the tallies are equal)."""
    n = ptr.size - 1
    start = np.zeros(nx + 1, np.int64)
    for i in range(n):
        start[x_cls[i] + 1] += 1
    for c in range(nx):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    rows = np.empty(n, np.int64)
    for i in range(n):
        rows[fill[x_cls[i]]] = i
        fill[x_cls[i]] += 1
    ref = np.zeros(ny, np.int64)
    tally = np.zeros(ny, np.int64)
    for c in range(nx):
        if start[c + 1] - start[c] < 2:
            continue
        r = rows[start[c]]
        degree = ptr[r + 1] - ptr[r]
        for e in range(ptr[r], ptr[r + 1]):
            ref[y_cls[nb[e]]] += 1
        ok = True
        for k in range(start[c] + 1, start[c + 1]):
            m = rows[k]
            if ptr[m + 1] - ptr[m] != degree:
                ok = False
                break
            for e in range(ptr[m], ptr[m + 1]):
                tally[y_cls[nb[e]]] += 1
            for e in range(ptr[m], ptr[m + 1]):      # check and clear in one pass: a
                y = y_cls[nb[e]]                     # cleared tally (0) was checked
                if tally[y] != 0:
                    if tally[y] != ref[y]:
                        ok = False
                    tally[y] = 0
            if not ok:
                break
        for e in range(ptr[r], ptr[r + 1]):
            ref[y_cls[nb[e]]] = 0
        if not ok:
            return False
    return True


def _k_distinct(cls, n_cls, at):
    """How many distinct values ``cls[at]`` holds (``cls`` in 0..n_cls-1)."""
    seen = np.zeros(n_cls, np.bool_)
    count = 0
    for i in range(at.size):
        c = cls[at[i]]
        if not seen[c]:
            seen[c] = True
            count += 1
    return count


def _k_search(op, sub, link, dep_ptr, dep_idx, sub_op, path_ptr, path_links, max_rounds,
              max_classes, seed):
    """The search, driven from Python over the compiled kernels, from the start labels
    (:func:`_start_labels`): depths, rounds, exact checks. Returns (found, op, sub, link);
    found is False when the classes are too many, refinement does not settle or a check
    fails.

    Python calls each kernel (a few microseconds a call, tens of calls a round, where a
    search this large takes a second or more): a signal is answered between two kernels
    (netsim.interrupts), where one compiled search of 4,096 GPUs ran for seconds deaf to
    Ctrl-C. The graph's arrays are taken as writable copies, so that each kernel is
    compiled for one kind of array (numba types read-only arrays apart)."""
    dep_ptr, dep_idx, sub_op, path_ptr, path_links = (
        np.require(a, np.int64, ("C", "W")) for a in (dep_ptr, dep_idx, sub_op, path_ptr,
                                                       path_links))
    n_ops, n_sub, n_links = op.size, sub.size, link.size
    none = np.zeros(0, np.int64)
    n_oc, n_sc, n_lc = (int(a.max()) + 1 if a.size else 0 for a in (op, sub, link))
    if n_sc > max_classes:
        return False, none, none, none
    one_ptr = np.arange(n_sub + 1)
    succ_ptr, succ_idx = _k_transpose(dep_ptr, dep_idx, n_ops)
    osub_ptr, osub_idx = _k_transpose(one_ptr, sub_op, n_ops)
    lsub_ptr, lsub_idx = _k_transpose(path_ptr, path_links, n_links)
    depth = _k_depths(dep_ptr, dep_idx, succ_ptr, succ_idx)
    op, n_oc = _k_relabel(op, depth.view(np.uint64))
    depth = _k_depths(succ_ptr, succ_idx, dep_ptr, dep_idx)
    op, n_oc = _k_relabel(op, depth.view(np.uint64))
    counts = (-1, -1, -1)
    settled = False
    op_sig = np.empty(n_ops, np.uint64)
    sub_sig = np.empty(n_sub, np.uint64)
    link_sig = np.empty(n_links, np.uint64)
    for rounds in range(max_rounds):
        # Refinement only splits classes, and an equitable partition gives all sub-flows of
        # a class ops of one class: so the sub-flow classes found will be at least the op
        # classes that sends hold now, and when those are too many already the search can
        # stop a round early.
        if n_sc > max_classes or _k_distinct(op, n_oc, sub_op) > max_classes:
            return False, none, none, none
        if (n_oc, n_sc, n_lc) == counts:
            settled = True
            break
        counts = (n_oc, n_sc, n_lc)
        checkpoint()          # between two rounds: a safe point for Ctrl-C
        salt = np.uint64(seed + 8 * rounds)      # one per relation: + 0 .. + 5
        op_sig[:] = 0
        sub_sig[:] = 0
        link_sig[:] = 0
        _k_signature(dep_ptr, dep_idx, op, salt, op_sig)
        _k_signature(succ_ptr, succ_idx, op, salt + np.uint64(1), op_sig)
        _k_signature(osub_ptr, osub_idx, sub, salt + np.uint64(2), op_sig)
        _k_signature(one_ptr, sub_op, op, salt + np.uint64(3), sub_sig)
        _k_signature(path_ptr, path_links, link, salt + np.uint64(4), sub_sig)
        _k_signature(lsub_ptr, lsub_idx, sub, salt + np.uint64(5), link_sig)
        op, n_oc = _k_relabel(op, op_sig)
        sub, n_sc = _k_relabel(sub, sub_sig)
        link, n_lc = _k_relabel(link, link_sig)
    if not settled:
        return False, none, none, none
    ok = (_k_equitable(op, n_oc, dep_ptr, dep_idx, op, n_oc)
          and _k_equitable(op, n_oc, succ_ptr, succ_idx, op, n_oc)
          and _k_equitable(op, n_oc, osub_ptr, osub_idx, sub, n_sc)
          and _k_equitable(sub, n_sc, one_ptr, sub_op, op, n_oc)
          and _k_equitable(sub, n_sc, path_ptr, path_links, link, n_lc)
          and _k_equitable(link, n_lc, lsub_ptr, lsub_idx, sub, n_sc))
    return ok, op, sub, link


#: Compiled in this order; each replaces its plain function as a module global, so the
#: ones after it and :func:`_k_search` call it compiled.
_KERNEL_NAMES = ("_k_relabel", "_k_transpose", "_k_depths", "_k_signature", "_k_equitable",
                 "_k_distinct")
_kernels = None                  # the compiled kernels, once loaded


def _compiled(work: int, config: EngineConfig | None = None):
    """The compiled kernels (a namespace), or None for the numpy search: None when numba
    is missing or the search is smaller than ``config.symmetry_compiled_from`` incidences
    (``work``), where the numpy search costs less than loading the kernels (about 0.3 s
    once per process). Both searches find the same arrays."""
    global _kernels
    threshold = (EngineConfig() if config is None else config).symmetry_compiled_from
    if threshold is None or work < threshold:
        return None
    if _kernels is None:
        from .numba_loader import load
        numba = load()
        if numba is None:                   # pragma: no cover - exercised without numba only
            return None
        # The kernels call each other by their global names: _k_mix is inlined.
        globals()["_k_mix"] = numba.njit(cache=True, inline="always")(_k_mix)
        for name in _KERNEL_NAMES:
            globals()[name] = numba.njit(cache=True)(globals()[name])
        _kernels = SimpleNamespace(**{name: globals()[name] for name in _KERNEL_NAMES},
                                   _k_search=_k_search)
    return _kernels


def _bits(values) -> np.ndarray:
    """uint64 keys equal exactly when the float values are equal (-0.0 is 0.0)."""
    return (np.asarray(values, dtype=float).reshape(-1) + 0.0).view(np.uint64)


def _find_compiled(k, start, graph, config: EngineConfig) -> Classes | None:
    """:func:`find_classes` with the compiled kernels (:func:`_k_search`): the same
    refinement (start labels, sums of random 64-bit values per neighbour colour, stop when
    no class count grows) and exact checks, with hash tables in place of sorts; class ids
    are numbered by first appearance."""
    found, op, sub, link = k._k_search(
        *start, *graph, config.symmetry_max_rounds,
        int(config.symmetry_max_class_share * start[1].size), 0x5EED << 8)
    return Classes(op=op, sub=sub, link=link) if found else None
