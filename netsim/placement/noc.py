"""Inside a chip: a Tensix-like core grid, and operators placed on rectangles of cores.

The core grid (:func:`tensix_grid`) follows Wormhole (``docs/placement.md``; figures from
``hardware-specs.md`` section 3.2, citing tenstorrent/tt-isa-documentation
``WormholeB0/NoC/README.md``):

* 8 x 10 Tensix cores, here ``rows=10`` by ``cols=8`` (the NoC grid is 10 wide and 12
  tall; its other tiles, DRAM, Ethernet, PCIe and ARC, are left out);
* two NoCs, each a 2-D torus of *unidirectional* rings: NoC0 runs +x then +y ("right
  then down"), NoC1 is its reverse, -y then -x ("up then left"). Each NoC link is its own
  directed link, tagged ``sign=+1`` (NoC0) or ``sign=-1`` (NoC1) along ``dim`` 1 (x,
  columns) or 0 (y, rows); ``wrap`` marks the torus closing links;
* a link moves one 256-bit flit per cycle: 32 B/cycle x 1 GHz = 32 GB/s per direction;
* a router-to-router hop takes 9 cycles = 9 ns (the NIU's ~5 cycles are left out).

:class:`NocRouter` routes on it: ``noc0``, ``noc1``, ``split`` (half the bytes on each NoC)
or ``shortest`` (the NoC with fewer hops, NoC0 on a tie).

Operators (:class:`Operator`) occupy rectangles of cores and pass their output tensor to
their successors, split across cores: producer core i of P holds bytes
``[i T/P, (i+1) T/P)`` of the tensor T, consumer core j of Q needs ``[j T/Q, (j+1) T/Q)``,
and each pair sends its overlap. Placements: ``adjacent`` (rectangles packed in shelves,
left to right, top to bottom), ``snake`` (folded: every other shelf right to left),
``scattered`` (the shelves of a seeded random order of the operators), ``random`` (every
core anywhere, seeded) and ``search`` (simulated annealing over core maps, seeded with the
others, never worse than the best of them). They are compared by simulated transfer time
and NoC link load (:func:`compare_chip_placements`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import InputError, unknown_name
from ..schedule import Schedule, concurrent, sends_from_arrays, sequential
from ..topology import Topology, TopologyBuilder
from ..routing import PathTable

__all__ = ["tensix_grid", "NocRouter", "NOC_POLICIES", "Operator", "chain", "ChipLayout",
           "CHIP_STRATEGIES", "place_operators", "transfer_schedule", "WORMHOLE"]

#: Wormhole figures: 32 B/cycle at 1 GHz per NoC link (bytes/s), 9 cycles per hop (s).
WORMHOLE = {"rows": 10, "cols": 8, "bandwidth": 32 * 1e9, "latency": 9e-9}
NOC_POLICIES = ("shortest", "split", "noc0", "noc1")


# -- the core grid -------------------------------------------------------------------------

def tensix_grid(rows: int = WORMHOLE["rows"], cols: int = WORMHOLE["cols"],
                *, bandwidth: float = WORMHOLE["bandwidth"], latency: float = WORMHOLE["latency"],
                name: str | None = None) -> Topology:
    """A Tensix-like core grid with two opposite unidirectional torus NoCs (module doc).

    Nodes ``'r_c'`` (node index = r * cols + c, as on meshes), coordinates (r, c);
    family ``'noc'``, ``params={'dims': (rows, cols), 'nocs': 2}``.

    >>> t = tensix_grid()
    >>> t.num_endpoints, t.num_links       # 80 cores x 2 NoCs x 2 directions (x, y)
    (80, 320)
    """
    if min(rows, cols) < 2:
        raise InputError(f"tensix_grid: rows and cols must be >= 2, got {rows}x{cols}")
    from ..budget import require_topology

    require_topology(rows * cols, 4 * rows * cols, f"tensix_grid {rows}x{cols}")
    b = TopologyBuilder(name or f"tensix-{rows}x{cols}", family="noc", dims=(rows, cols),
                        nocs=2)
    for r in range(rows):
        for c in range(cols):
            b.add_node(f"{r}_{c}", coord=(r, c))
    for sign, noc in ((+1, 0), (-1, 1)):
        for r in range(rows):
            for c in range(cols):
                for dim, (r2, c2) in ((1, (r, (c + sign) % cols)), (0, ((r + sign) % rows, c))):
                    wrap = (c2 if dim == 1 else r2) != (c if dim == 1 else r) + sign
                    b.add_link(f"{r}_{c}", f"{r2}_{c2}", bandwidth, latency,
                               name=f"{r}_{c}->{r2}_{c2}@noc{noc}", dim=dim, sign=sign,
                               wrap=wrap)
    b.meta["source"] = ("Wormhole NoC: tt-isa-documentation WormholeB0/NoC/README.md "
                        "(32 B/cycle per link, 9 cycles per hop, 2 opposite torus NoCs)")
    return b.build()


class NocRouter:
    """Routes of the two NoCs of :func:`tensix_grid` (the Router plugin seam).

    NoC0: +x along the row to the destination's column, then +y down to its row; NoC1:
    -y then -x (the NoC0 route of the reverse trip, reversed). ``policy`` picks per
    message: ``noc0``, ``noc1``, ``split`` (two sub-flows of half the bytes) or
    ``shortest`` (fewer hops; NoC0 on a tie). All-pairs paths are compiled once per grid.
    """

    def __init__(self, policy: str = "shortest") -> None:
        if policy not in NOC_POLICIES:
            raise unknown_name("NoC policy", policy, NOC_POLICIES)
        self.policy = policy
        self._tables: "weakref.WeakKeyDictionary[Topology, tuple]" = weakref.WeakKeyDictionary()

    def __getstate__(self):
        return {"policy": self.policy}

    def __setstate__(self, state):
        self.__init__(state["policy"])

    def _compiled(self, topo: Topology):
        if topo not in self._tables:
            _require_tables(topo)
            self._tables[topo] = tuple(_all_pairs(topo, noc) for noc in (0, 1))
        return self._tables[topo]

    def link_paths(self, topo: Topology, src: np.ndarray, dst: np.ndarray,
                   keys: np.ndarray) -> PathTable:
        from ..routing.core import gather, seg_ptr

        if topo.family != "noc":
            raise InputError(f"NocRouter routes core grids made by tensix_grid, not "
                             f"{topo.name!r} (family {topo.family!r})")
        (ptr0, links0), (ptr1, links1) = self._compiled(topo)
        pair = np.asarray(src, np.int64) * topo.num_nodes + np.asarray(dst, np.int64)
        hops0, hops1 = np.diff(ptr0)[pair], np.diff(ptr1)[pair]
        if self.policy == "split":
            noc = np.stack([np.zeros_like(pair), np.ones_like(pair)], axis=1).ravel()
            pair, frac, per = np.repeat(pair, 2), np.full(2 * pair.size, 0.5), 2
        else:
            use1 = {"noc0": np.zeros(pair.size, bool), "noc1": np.ones(pair.size, bool),
                    "shortest": hops1 < hops0}[self.policy]
            noc, frac, per = use1.astype(np.int64), np.ones(pair.size), 1
        lens = np.where(noc == 1, np.diff(ptr1)[pair], np.diff(ptr0)[pair])
        path_ptr = seg_ptr(lens)
        links = np.empty(int(path_ptr[-1]), dtype=np.int64)
        for k, (ptr, table) in enumerate(((ptr0, links0), (ptr1, links1))):
            subs = np.flatnonzero(noc == k)
            _, pos = gather(ptr, pair[subs])
            _, out = gather(path_ptr, subs)
            links[out] = table[pos]
        sub_ptr = np.arange(0, per * (len(src) + 1), per, dtype=np.int64)[:len(src) + 1]
        return PathTable(sub_ptr, frac, path_ptr, links)


#: Bytes per route of :func:`_all_pairs` while it builds a NoC's table, beyond 16 B per
#: link of the route: the route's list (56 B) and its pointer and length entries.
_ROUTE_BYTES = 80


def _require_tables(topo: Topology) -> None:
    """Refuse, before building them, all-pairs route tables that would not fit: n^2 routes
    per NoC of (rows - 1)/2 + (cols - 1)/2 links on average (a ring of k nodes one way
    round: mean distance (k - 1)/2)."""
    from ..budget import require_memory

    rows, cols = topo.params["dims"]
    pairs = float(rows * cols) ** 2
    hops = (rows - 1) / 2 + (cols - 1) / 2
    require_memory(2 * pairs * (_ROUTE_BYTES + 16 * hops),
                   f"NoC route tables of {topo.name!r} ({2 * pairs:.3g} routes)",
                   advice="a smaller core grid")


def _all_pairs(topo: Topology, noc: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR over pairs (src * n + dst) of the link ids of NoC ``noc``'s route."""
    rows, cols = topo.params["dims"]
    sign = 1 if noc == 0 else -1
    step = {}   # (node, dim) -> link id of this NoC
    for lid in np.flatnonzero(topo.sign == sign).tolist():
        step[(int(topo.link_src[lid]), int(topo.dim[lid]))] = lid
    order = (1, 0) if noc == 0 else (0, 1)     # NoC0: x then y; NoC1: y then x
    paths = []
    for s in range(rows * cols):
        for d in range(rows * cols):
            paths.append(_walk(s, d, rows, cols, sign, order, step))
    lens = np.fromiter((len(p) for p in paths), dtype=np.int64, count=len(paths))
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    links = np.fromiter((l for p in paths for l in p), dtype=np.int64, count=int(ptr[-1]))
    return ptr, links


def _walk(s: int, d: int, rows: int, cols: int, sign: int, order, step) -> list[int]:
    r, c = divmod(s, cols)
    rd, cd = divmod(d, cols)
    path = []
    for dim in order:
        size = cols if dim == 1 else rows
        here, there = (c, cd) if dim == 1 else (r, rd)
        for _ in range(((there - here) * sign) % size):
            lid = step[(r * cols + c, dim)]
            path.append(lid)
            if dim == 1:
                c = (c + sign) % cols
            else:
                r = (r + sign) % rows
    return path


# -- operators -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Operator:
    """An operator on a ``rows x cols`` rectangle of cores whose output tensor of
    ``out_bytes`` bytes goes to each of ``successors`` (names; see :func:`chain`)."""

    name: str
    rows: int
    cols: int
    out_bytes: float = 0.0
    successors: tuple[str, ...] = ()

    @property
    def cores(self) -> int:
        return self.rows * self.cols


def chain(specs: Sequence[tuple[str, int, int, float]]) -> list[Operator]:
    """Operators from ``(name, rows, cols, out_bytes)``, each feeding the next.

    >>> [o.successors for o in chain([("a", 2, 2, 1e6), ("b", 2, 4, 1e6)])]
    [('b',), ()]
    """
    ops = [Operator(n, int(r), int(c), float(b)) for n, r, c, b in specs]
    return [Operator(o.name, o.rows, o.cols, o.out_bytes,
                     (ops[i + 1].name,) if i + 1 < len(ops) else ()) for i, o in enumerate(ops)]


def _check_operators(ops: Sequence[Operator], topo: Topology) -> dict[str, int]:
    names = [o.name for o in ops]
    index = {n: i for i, n in enumerate(names)}
    if len(index) != len(names):
        raise InputError("operators: two operators have the same name")
    for o in ops:
        if o.rows < 1 or o.cols < 1:
            raise InputError(f"operator {o.name!r}: shape must be at least 1x1, got "
                             f"{o.rows}x{o.cols}")
        for s in o.successors:
            if s not in index:
                raise unknown_name(f"successor of operator {o.name!r}", s, names)
    total = sum(o.cores for o in ops)
    if total > topo.num_endpoints:
        raise InputError(f"operators need {total} cores, the grid has {topo.num_endpoints}")
    return index


@dataclass(frozen=True, eq=False)
class ChipLayout:
    """Operators as ranks: operator k's cores are ranks ``offset[k] .. offset[k] + cores``
    in row-major order of its rectangle."""

    operators: tuple[Operator, ...]
    offset: np.ndarray

    @classmethod
    def of(cls, ops: Sequence[Operator]) -> "ChipLayout":
        sizes = [o.cores for o in ops]
        return cls(tuple(ops), np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64))

    @property
    def num_ranks(self) -> int:
        return int(self.offset[-1])

    def ranks(self, k: int) -> np.ndarray:
        return np.arange(self.offset[k], self.offset[k + 1])


# -- placements of operators ---------------------------------------------------------------

def _shelves(ops: Sequence[Operator], order: Sequence[int], dims, fold: bool,
             strategy: str) -> dict[int, tuple[int, int]]:
    """Top-left corner of each operator: shelves filled in ``order``; a shelf is as tall
    as its first operator; with ``fold`` every other shelf fills right to left."""
    rows, cols = dims
    corners: dict[int, tuple[int, int]] = {}
    top, height, used, shelf = 0, 0, cols, -1
    for k in order:
        o = ops[k]
        if o.cols > cols:
            raise InputError(f"operator {o.name!r} is {o.cols} cores wide, the grid {cols}")
        if used + o.cols > cols or o.rows > height:
            top, height, used, shelf = top + height, o.rows, 0, shelf + 1
        if top + o.rows > rows:
            raise InputError(f"{strategy}: the operators do not fit on the {rows}x{cols} "
                             f"core grid in shelves (operator {o.name!r} would reach row "
                             f"{top + o.rows})")
        left = cols - used - o.cols if fold and shelf % 2 else used
        corners[k] = (top, left)
        used += o.cols
    return corners


def _rectangle_cells(o: Operator, corner: tuple[int, int], cols: int) -> np.ndarray:
    r0, c0 = corner
    r, c = np.mgrid[r0:r0 + o.rows, c0:c0 + o.cols]
    return (r * cols + c).ravel()


def _by_shelves(ops, dims, order, fold, strategy) -> np.ndarray:
    corners = _shelves(ops, order, dims, fold, strategy)
    return np.concatenate([_rectangle_cells(ops[k], corners[k], dims[1])
                           for k in range(len(ops))])


#: Fixed chip-level strategies (``search`` is :func:`compare_chip_placements`' job).
CHIP_STRATEGIES = ("adjacent", "snake", "scattered", "random")


def place_operators(strategy: str, topo: Topology, ops: Sequence[Operator],
                    seed: int = 0) -> np.ndarray:
    """Core node of every rank of :class:`ChipLayout` ``ops`` under ``strategy``."""
    _check_operators(ops, topo)
    dims = tuple(topo.params["dims"])
    n = len(ops)
    rng = np.random.default_rng(seed)
    if strategy == "adjacent":
        return _by_shelves(ops, dims, range(n), False, strategy)
    if strategy == "snake":
        return _by_shelves(ops, dims, range(n), True, strategy)
    if strategy == "scattered":
        return _by_shelves(ops, dims, rng.permutation(n).tolist(), False, strategy)
    if strategy == "random":
        total = sum(o.cores for o in ops)
        return rng.permutation(topo.num_endpoints)[:total].astype(np.int64)
    raise unknown_name("chip placement strategy", strategy, (*CHIP_STRATEGIES, "search"))


# -- transfers -----------------------------------------------------------------------------

def _reshard(p: int, q: int, total: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(producer core, consumer core, bytes) of a tensor split evenly over p then q cores."""
    bounds_p = np.arange(p + 1) * total / p
    bounds_q = np.arange(q + 1) * total / q
    i, j = np.meshgrid(np.arange(p), np.arange(q), indexing="ij")
    overlap = (np.minimum(bounds_p[i + 1], bounds_q[j + 1])
               - np.maximum(bounds_p[i], bounds_q[j]))
    keep = overlap > total * 1e-12
    return i[keep], j[keep], overlap[keep]


def transfer_schedule(ops: Sequence[Operator], pipelined: bool = True) -> Schedule:
    """Every operator's output resharded to its successors, on :class:`ChipLayout` ranks.

    ``pipelined``: all edges at once (a pipeline's steady state); otherwise edge by edge
    in operator order. Each edge is tagged ``'<producer>-><consumer>'``.
    """
    lay = ChipLayout.of(ops)
    index = {o.name: k for k, o in enumerate(ops)}
    edges = []
    for k, o in enumerate(ops):
        for succ in o.successors:
            if succ not in index:          # before any placement checks the operators
                raise unknown_name(f"successor of operator {o.name!r}", succ, list(index))
            m = index[succ]
            i, j, nbytes = _reshard(o.cores, ops[m].cores, o.out_bytes)
            edges.append(sends_from_arrays(lay.num_ranks, lay.offset[k] + i,
                                           lay.offset[m] + j, nbytes,
                                           tag=f"{o.name}->{succ}"))
    if not edges:
        raise InputError("operators: no operator passes a tensor to a successor")
    return concurrent(*edges) if pipelined or len(edges) == 1 else sequential(*edges)
