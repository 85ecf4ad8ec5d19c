"""The Topology model: nodes (endpoints and switches) joined by directed links.

A topology is stored as arrays, because the engine and the router work on link ids:

* nodes ``0..n-1`` with a name, a switch flag, optional drawing coordinates and a dict
  of attributes (``{"reduce": True}`` on a switch able to reduce in-network);
* links ``0..m-1``, each *directed*, with ``src``/``dst`` node indices, a bandwidth in
  bytes/s (one direction) and a latency in s. A full-duplex cable is two links.
  Parallel links between the same pair are separate links numbered by ``plane``
  (0, 1, ...). Grid families also tag each link with the dimension it runs along
  (``dim``, -1 elsewhere), its direction along it (``sign`` = +1 or -1) and whether
  it is a torus wrap-around link (``wrap``).

Topologies are immutable once built; build them with :class:`TopologyBuilder`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable, Sequence

import numpy as np

from ..errors import TopologyError

__all__ = ["Topology", "TopologyBuilder", "GRID_FAMILIES"]

#: Families whose node index is the row-major index of a coordinate in ``params['dims']``
#: (what routing, rank orders, placement and re-routing call "a grid").
GRID_FAMILIES = ("mesh", "torus", "ring")


@dataclass(frozen=True, eq=False)
class Topology:
    """An immutable interconnect: see the module docstring for the fields.

    ``family`` names the generator (``'mesh'``, ``'torus'``, ``'ring'``, ``'fat_tree'``,
    ``'leaf_spine'``, ``'nvswitch'``, ``'full_mesh'``, ``'custom'`` ...) and ``params`` its
    arguments (``{'dims': (8, 4)}`` ...), which routing and drawing use.
    ``endpoints`` lists the compute endpoints' node indices in the natural rank order.
    """

    name: str
    family: str
    params: dict[str, Any]
    node_names: tuple[str, ...]
    is_switch: np.ndarray            # bool, per node
    coords: tuple[tuple[float, ...] | None, ...]
    node_attrs: tuple[dict[str, Any], ...]
    endpoints: np.ndarray            # int64 node indices, natural rank order
    link_src: np.ndarray             # int64
    link_dst: np.ndarray             # int64
    bandwidth: np.ndarray            # float64, bytes/s, one direction
    latency: np.ndarray              # float64, s
    plane: np.ndarray                # int64, index among parallel links of a pair
    dim: np.ndarray                  # int64, grid dimension of the link, -1 if none
    sign: np.ndarray                 # int64, +1 / -1 along dim, 0 if none
    wrap: np.ndarray                 # bool, torus wrap-around link
    link_names: tuple[str, ...]
    meta: dict[str, Any] = field(default_factory=dict)

    # -- sizes and look-ups -------------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        return len(self.node_names)

    @property
    def num_links(self) -> int:
        return len(self.link_names)

    @property
    def num_endpoints(self) -> int:
        return len(self.endpoints)

    @property
    def num_switches(self) -> int:
        return int(self.is_switch.sum())

    @cached_property
    def node_index(self) -> dict[str, int]:
        """Node name -> node index."""
        return {name: i for i, name in enumerate(self.node_names)}

    @cached_property
    def link_index(self) -> dict[str, int]:
        """Link name -> link id."""
        return {name: i for i, name in enumerate(self.link_names)}

    def node(self, name: str) -> int:
        """Index of the node called ``name``; a clear error if there is none."""
        try:
            return self.node_index[name]
        except KeyError:
            raise TopologyError(f"topology {self.name!r} has no node {name!r}") from None

    def link(self, name: str) -> int:
        """Id of the link called ``name``; a clear error if there is none."""
        try:
            return self.link_index[name]
        except KeyError:
            raise TopologyError(f"topology {self.name!r} has no link {name!r}") from None

    @cached_property
    def pair_links(self) -> dict[tuple[int, int], np.ndarray]:
        """(src node, dst node) -> ids of the parallel links from src to dst, by plane."""
        order = np.lexsort((self.plane, self.link_dst, self.link_src))
        table: dict[tuple[int, int], list[int]] = {}
        for lid in order.tolist():
            table.setdefault((int(self.link_src[lid]), int(self.link_dst[lid])), []).append(lid)
        return {pair: np.asarray(ids, dtype=np.int64) for pair, ids in table.items()}

    @cached_property
    def out_degree_bandwidth(self) -> np.ndarray:
        """Total outgoing bandwidth of every node, bytes/s (injection bandwidth of endpoints)."""
        return np.bincount(self.link_src, weights=self.bandwidth, minlength=self.num_nodes)

    @cached_property
    def in_degree_bandwidth(self) -> np.ndarray:
        """Total incoming bandwidth of every node, bytes/s."""
        return np.bincount(self.link_dst, weights=self.bandwidth, minlength=self.num_nodes)

    def first_endpoints(self, num_ranks: int) -> np.ndarray:
        """The default placement: rank i on the i-th endpoint (node indices).

        >>> from netsim.topology import ring
        >>> ring(4).first_endpoints(2).tolist()
        [0, 1]
        """
        total = len(self.endpoints)
        if not 1 <= num_ranks <= total:
            raise TopologyError(f"{num_ranks} ranks do not fit on the {total} endpoints of "
                                f"{self.name!r}: ranks must be in 1..{total}, got {num_ranks}")
        return np.asarray(self.endpoints[:num_ranks], dtype=np.int64)

    @property
    def grid_dims(self) -> tuple[int, ...] | None:
        """The grid shape of a mesh, torus or ring (node i at row-major index i), else None.

        >>> from netsim.topology import mesh
        >>> from netsim.topology import fat_tree
        >>> mesh((2, 3)).grid_dims, fat_tree(4).grid_dims
        ((2, 3), None)
        """
        dims = self.params.get("dims")
        if self.family not in GRID_FAMILIES or not dims:
            return None
        return tuple(int(d) for d in dims)

    def can_reduce(self, node: int) -> bool:
        """True for a switch marked able to reduce in-network (NVLS / SHARP style)."""
        return bool(self.node_attrs[node].get("reduce", False))

    def to_networkx(self):
        """A ``networkx.MultiDiGraph`` with node and link attributes (units: bytes/s, s)."""
        import networkx as nx

        graph = nx.MultiDiGraph(name=self.name, family=self.family)
        for i, name in enumerate(self.node_names):
            attrs = dict(self.node_attrs[i])
            attrs["kind"] = "switch" if self.is_switch[i] else "endpoint"
            if self.coords[i] is not None:
                attrs["coord"] = tuple(self.coords[i])
            graph.add_node(name, **attrs)
        for lid, name in enumerate(self.link_names):
            graph.add_edge(self.node_names[self.link_src[lid]], self.node_names[self.link_dst[lid]],
                           key=name, id=name, bandwidth=float(self.bandwidth[lid]),
                           latency=float(self.latency[lid]), plane=int(self.plane[lid]))
        return graph

    def with_links(self, *, bandwidth: np.ndarray | None = None,
                   latency: np.ndarray | None = None, name: str | None = None) -> "Topology":
        """A copy with new per-link bandwidths and/or latencies (arrays of num_links)."""
        from dataclasses import replace

        bw = self.bandwidth if bandwidth is None else np.asarray(bandwidth, dtype=np.float64)
        lat = self.latency if latency is None else np.asarray(latency, dtype=np.float64)
        _check_link_values(self.link_names, bw, lat)
        return replace(self, bandwidth=bw, latency=lat, name=name or self.name)

    def __repr__(self) -> str:
        return (f"Topology({self.name!r}, family={self.family!r}, endpoints={self.num_endpoints}, "
                f"switches={self.num_switches}, links={self.num_links})")


def _check_link_values(names: Sequence[str], bw: np.ndarray, lat: np.ndarray) -> None:
    bad = np.flatnonzero(~np.isfinite(bw) | (bw <= 0))
    if bad.size:
        raise TopologyError(f"link {names[bad[0]]!r}: bandwidth must be a positive finite "
                            f"number of bytes/s, got {bw[bad[0]]!r}")
    bad = np.flatnonzero(~np.isfinite(lat) | (lat < 0))
    if bad.size:
        raise TopologyError(f"link {names[bad[0]]!r}: latency must be a finite number of seconds "
                            f">= 0, got {lat[bad[0]]!r}")


class TopologyBuilder:
    """Accumulates nodes and links, then :meth:`build` checks and freezes them.

    >>> b = TopologyBuilder("pair", family="custom")
    >>> a, c = b.add_node("a"), b.add_node("c")
    >>> b.add_cable(a, c, bandwidth=25e9, latency=1e-6)
    (0, 1)
    >>> b.build().num_links
    2
    """

    def __init__(self, name: str, family: str = "custom", **params: Any) -> None:
        self.name = name
        self.family = family
        self.params = dict(params)
        self.meta: dict[str, Any] = {}
        self._names: list[str] = []
        self._index: dict[str, int] = {}
        self._switch: list[bool] = []
        self._coords: list[tuple[float, ...] | None] = []
        self._attrs: list[dict[str, Any]] = []
        self._endpoints: list[int] | None = None
        self._links: list[tuple] = []
        self._link_names: list[str] = []
        self._pair_count: dict[tuple[int, int], int] = {}

    def add_node(self, name: str, *, switch: bool = False,
                 coord: Iterable[float] | None = None, **attrs: Any) -> int:
        """Add a node and return its index. ``attrs`` such as ``reduce=True`` are kept."""
        name = str(name)
        if name in self._index:
            raise TopologyError(f"topology {self.name!r}: node {name!r} is defined twice")
        self._index[name] = len(self._names)
        self._names.append(name)
        self._switch.append(bool(switch))
        self._coords.append(None if coord is None else tuple(float(c) for c in coord))
        self._attrs.append(attrs)
        return self._index[name]

    def node(self, name_or_index: str | int) -> int:
        if isinstance(name_or_index, (int, np.integer)):
            if not 0 <= name_or_index < len(self._names):
                raise TopologyError(f"topology {self.name!r}: no node number {name_or_index}")
            return int(name_or_index)
        try:
            return self._index[str(name_or_index)]
        except KeyError:
            raise TopologyError(f"topology {self.name!r}: link end {name_or_index!r} is not a "
                                f"node") from None

    def add_link(self, src: str | int, dst: str | int, bandwidth: float, latency: float = 0.0,
                 *, name: str | None = None, dim: int = -1, sign: int = 0,
                 wrap: bool = False) -> int:
        """Add one directed link and return its id; a repeated pair gets the next plane."""
        s, d = self.node(src), self.node(dst)
        if s == d:
            raise TopologyError(f"topology {self.name!r}: link {name or self._names[s]!r} is a "
                                f"self-loop on node {self._names[s]!r}")
        plane = self._pair_count.get((s, d), 0)
        self._pair_count[(s, d)] = plane + 1
        if name is None:
            name = f"{self._names[s]}->{self._names[d]}" + (f"#{plane}" if plane else "")
        self._links.append((s, d, float(bandwidth), float(latency), plane, dim, sign, wrap))
        self._link_names.append(name)
        return len(self._links) - 1

    def add_cable(self, a: str | int, b: str | int, bandwidth: float, latency: float = 0.0,
                  *, dim: int = -1, wrap: bool = False) -> tuple[int, int]:
        """A full-duplex cable: two directed links a->b and b->a, each of ``bandwidth``."""
        forward = self.add_link(a, b, bandwidth, latency, dim=dim, sign=1 if dim >= 0 else 0,
                                wrap=wrap)
        backward = self.add_link(b, a, bandwidth, latency, dim=dim, sign=-1 if dim >= 0 else 0,
                                 wrap=wrap)
        return forward, backward

    def set_endpoints(self, nodes: Iterable[str | int]) -> None:
        """Fix the natural rank order of the compute endpoints (default: non-switch nodes)."""
        self._endpoints = [self.node(n) for n in nodes]

    def build(self) -> Topology:
        if not self._names:
            raise TopologyError(f"topology {self.name!r} has no nodes")
        switch = np.asarray(self._switch, dtype=bool)
        endpoints = (np.flatnonzero(~switch) if self._endpoints is None
                     else np.asarray(self._endpoints, dtype=np.int64))
        if endpoints.size == 0:
            raise TopologyError(f"topology {self.name!r} has no endpoints (every node is a switch)")
        cols = list(zip(*self._links)) if self._links else [[]] * 8
        src, dst, bw, lat, plane, dim, sign, wrap = cols
        bw = np.asarray(bw, dtype=np.float64)
        lat = np.asarray(lat, dtype=np.float64)
        _check_link_values(self._link_names, bw, lat)
        if len(set(self._link_names)) != len(self._link_names):
            seen: set[str] = set()
            dup = next(n for n in self._link_names if n in seen or seen.add(n))
            raise TopologyError(f"topology {self.name!r}: link {dup!r} is defined twice")
        return Topology(
            name=self.name, family=self.family, params=dict(self.params),
            node_names=tuple(self._names), is_switch=switch, coords=tuple(self._coords),
            node_attrs=tuple(dict(a) for a in self._attrs), endpoints=endpoints.astype(np.int64),
            link_src=np.asarray(src, dtype=np.int64), link_dst=np.asarray(dst, dtype=np.int64),
            bandwidth=bw, latency=lat, plane=np.asarray(plane, dtype=np.int64),
            dim=np.asarray(dim, dtype=np.int64), sign=np.asarray(sign, dtype=np.int64),
            wrap=np.asarray(wrap, dtype=bool), link_names=tuple(self._link_names),
            meta=dict(self.meta),
        )
