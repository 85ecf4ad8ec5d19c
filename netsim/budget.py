"""The memory budget: one place that says how much memory a run may use, and refuses,
before allocating, what would need more.

Loaders and generators estimate what they are about to build (nodes, links, sends, input
bytes) with :func:`require_memory`; beyond the budget they stop with one line giving the
estimate and the budget, instead of growing until the operating system kills them. The
budget is the memory the machine has available (``MemAvailable`` of ``/proc/meminfo``,
else ``os.sysconf``), capped by the process's address-space limit, unless the global
``--max-memory SIZE`` option sets it (:func:`set_max_memory`).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

from .errors import ResourceError

__all__ = ["BYTES_PER_NODE", "BYTES_PER_LINK", "BYTES_PER_SEND", "MAX_INPUT_BYTES",
           "YAML_BYTES_PER_CHAR",
           "available_memory", "memory_budget", "memory_room", "set_max_memory", "max_memory",
           "require_memory",
           "require_topology", "require_sends", "send_memory", "require_engine",
           "require_search", "SEARCH_BYTES_PER_ITEM"]

# Rough sizes of what a topology keeps per item at its peak (CPython 3.11 / numpy 2.4,
# benchmarks/bench_memory_estimates.py, rounded up): a node has a name, an index entry and
# an attribute dict (a fat tree's tier and pod: ~600 B); a link its name, its arrays and,
# while a file is built, the builder's per-link lists (a file of 4M links peaked 370 B a
# link above the interpreter, a torus:512x512 280 B, a fat tree k=64 about 370 B).
BYTES_PER_NODE = 600
BYTES_PER_LINK = 360
# Peak RSS above the interpreter's, per send, of a whole ring all-reduce run (schedule,
# routes, engine), measured with benchmarks/bench_big_rings.py (numpy 2.4, CPython 3.11):
# 432 B at 1,024 ranks (torus:32x32, 2.1M sends, one link each; the engine's symmetry
# search runs there and costs ~105 B of it), 327 B at 2,048 (8.4M sends) and 325 B at
# 4,096 (33.5M sends, 10.5 GB peak). The worst, rounded up, less the one incidence:
BYTES_PER_SEND = 420
# An extra link on every path (mesh:32x64 ring in natural order, 2.0 links per send:
# 359 B against the torus's 327 B per send): 32 B per (flow, link) incidence.
BYTES_PER_INCIDENCE = 32
#: Bytes of memory per character of a YAML document while it is read: PyYAML's composed
#: node tree (kept for line numbers) and the values built from it. A 10,000-chip chain
#: topology file (797 kB) peaked at 122 B a character above the interpreter.
YAML_BYTES_PER_CHAR = 130
#: The largest input file read, whatever the budget: a real flow or scenario file is far
#: smaller, and `/dev/zero` must not be read forever.
MAX_INPUT_BYTES = 256 * 2**20

_MAX_MEMORY: ContextVar[int | None] = ContextVar("netsim_max_memory", default=None)


def available_memory() -> int:
    """Bytes this process can still allocate: the machine's available memory, capped by
    the address-space limit (``ulimit -v``) when there is one."""
    available = None
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if available is None:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            available = 8 * 2**30               # no way to know: assume a small machine
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit != resource.RLIM_INFINITY:
            # the limit counts the address space already mapped (the interpreter, numpy's
            # and scipy's libraries: ~300 MB), which MemAvailable leaves out already
            available = min(available, limit - _address_space())
    except (ImportError, ValueError, OSError):
        pass
    return max(available, 0)


def _address_space() -> int:
    """Bytes of address space this process has mapped (``VmSize``), 0 if unknown."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def set_max_memory(size: int | None) -> None:
    """Set (or with ``None`` clear) the budget given by ``--max-memory``."""
    _MAX_MEMORY.set(size)


@contextmanager
def max_memory(size: int | None) -> Iterator[None]:
    """``--max-memory size`` inside this block, the caller's budget after it: a worker
    process that runs a caller's request (a sweep's point) does not inherit the caller's
    :func:`set_max_memory`, and gets the budget with the request instead (None: leave
    the budget as it is).

    >>> with max_memory(2**30):
    ...     memory_budget()
    1073741824
    """
    if size is None:
        yield
        return
    token = _MAX_MEMORY.set(int(size))
    try:
        yield
    finally:
        _MAX_MEMORY.reset(token)


def memory_budget() -> int:
    """Bytes a run may use: ``--max-memory`` if given, else :func:`available_memory`."""
    chosen = _MAX_MEMORY.get()
    return chosen if chosen is not None else available_memory()


def memory_room() -> int:
    """Bytes this process may still add now: under ``--max-memory``, the budget less the
    process's resident memory; else what the machine has available (which already
    leaves out what this process holds). For optional work space that changes no result,
    such as a cache (the engine's path never depends on it: netsim.engine.config)."""
    chosen = _MAX_MEMORY.get()
    if chosen is None:
        return available_memory()
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            resident = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        resident = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return chosen - resident


def require_memory(need: float, what: str, *, advice: str = "a smaller case",
                   budget: int | None = None) -> None:
    """Refuse, with one line, a build of ``what`` estimated to need ``need`` bytes when
    that is above the budget (``budget`` bytes if given, else :func:`memory_budget`);
    ``advice`` says how to need less."""
    given = budget is not None
    budget = budget if given else memory_budget()
    if need > budget:
        from .units import format_size

        chosen = _MAX_MEMORY.get()
        # a budget passed in is --max-memory's when the command line set the same one
        origin = ("memory budget" if given and budget != chosen else
                  "--max-memory" if chosen is not None else "available on this machine")
        raise ResourceError(f"{what} would need about {format_size(need)} of memory, above "
                            f"the {format_size(budget)} {origin} ({advice}, or "
                            f"--max-memory SIZE to allow more)")


def require_topology(nodes: float, links: float, what: str) -> None:
    """:func:`require_memory` for a topology of ``nodes`` nodes and ``links`` links."""
    require_memory(nodes * BYTES_PER_NODE + links * BYTES_PER_LINK,
                   f"{what} ({nodes:.3g} nodes, {links:.3g} links)")


def _mean_hops(topology) -> float:
    """Mean hop count from the first endpoint to the others: the flow-link incidences a
    send adds, estimated with one breadth-first search."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    n, ends = topology.num_nodes, topology.endpoints
    if len(ends) < 2:
        return 1.0
    graph = csr_matrix((np.ones(topology.num_links), (topology.link_src, topology.link_dst)),
                       shape=(n, n))
    dist = shortest_path(graph, unweighted=True, directed=True, indices=[int(ends[0])])[0]
    reached = dist[ends[1:]]
    reached = reached[np.isfinite(reached)]
    return float(reached.mean()) if reached.size else 1.0


def send_memory(sends: float, hops: float) -> float:
    """Bytes a run of ``sends`` sends of ``hops`` links each needs at its peak (schedule,
    routes and engine; measured, see :data:`BYTES_PER_SEND`).

    >>> round(send_memory(2 * 1023 * 1024, 1) / 2**30, 2)     # ring all-reduce, 1,024 ranks
    0.88
    """
    return float(sends) * (BYTES_PER_SEND + BYTES_PER_INCIDENCE * float(hops))


def require_sends(sends: float, topology, what: str, *, hops=None,
                  advice: str = "a smaller case", budget: int | None = None) -> None:
    """:func:`require_memory` for a run of ``sends`` sends on ``topology``: each send's
    op and flow, and the links of its route: ``hops`` links (default: the mean distance
    between endpoints; a function is called only when the longest routes would not fit).
    Like every estimate here it is what the run adds to the interpreter's own memory.
    ``budget`` (bytes; None: :func:`memory_budget`) as :func:`require_memory`'s."""
    if hops is None or callable(hops):
        longest = send_memory(sends, max(topology.num_nodes - 1, 1))
        if longest <= (budget if budget is not None else memory_budget()):
            return  # fits even if every route crossed every node: skip the search (sweeps)
        hops = _mean_hops(topology) if hops is None else hops()
    require_memory(send_memory(sends, hops), f"{what} ({sends:.3g} sends)", advice=advice,
                   budget=budget)


#: What the symmetry search (engine.symmetry) allocates per item of what it partitions
#: (path incidences + sub-flows + ops + dependency edges): keys, transposes, colours and
#: signatures. Measured as the peak RSS the search adds (NCCL's NVLS tree on
#: dgx-h100-cluster, 1 GiB all-reduce): nodes=128, 786 MiB over 17.7M items (46.6 B);
#: nodes=256, 1,525 MiB over 35.7M (44.8 B).
SEARCH_BYTES_PER_ITEM = 48
#: Searches over fewer items are not checked (well under 100 MiB).
SEARCH_CHECK_FROM = 2_000_000


def require_search(items: int) -> None:
    """Refuse, before it allocates, a symmetry search over ``items`` (path incidences +
    sub-flows + ops + dependencies) that would not fit (:data:`SEARCH_BYTES_PER_ITEM`).

    >>> require_search(1000)              # small searches are never checked
    """
    if items < SEARCH_CHECK_FROM:
        return
    require_memory(items * SEARCH_BYTES_PER_ITEM,
                   f"the symmetry search over {items:.3g} incidences, flows, ops and "
                   f"dependencies", advice="fewer ranks or fewer chunks")


#: What the engine adds, per flow and per (flow, link) incidence, when it simulates every
#: flow (no symmetry classes: an irregular machine, a topology file): ring all-reduce on
#: 512 ranks with symmetry off, measured above the built schedule and routes: torus:16x32
#: 650 B a flow at 1.03 links, mesh:16x32 735 B at 2.0, a 500-chip chain file 727 B at
#: 2.0 (CPython 3.11, numpy 2.4). With classes it simulates a quotient and needs far less,
#: which is what :data:`BYTES_PER_SEND` (measured on tori) assumes.
ENGINE_BYTES_PER_FLOW = 600
ENGINE_BYTES_PER_INCIDENCE = 90
#: Runs with fewer flows are not checked (a sweep or a search runs thousands of them).
ENGINE_CHECK_FROM = 100_000


def require_engine(flows: int, incidences: int) -> None:
    """Refuse, before the engine allocates, a run of every flow (no symmetry classes)
    whose ``flows`` and path ``incidences`` would not fit (:data:`ENGINE_BYTES_PER_FLOW`).

    >>> require_engine(10, 20)            # small runs are never checked
    """
    if flows < ENGINE_CHECK_FROM:
        return
    require_memory(flows * ENGINE_BYTES_PER_FLOW + incidences * ENGINE_BYTES_PER_INCIDENCE,
                   f"the engine on {flows:.3g} flows of {incidences / flows:.3g} links "
                   f"each (no symmetry to share)", advice="fewer ranks or fewer chunks")
