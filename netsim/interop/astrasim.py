"""ASTRA-sim analytical network files <-> netsim machines.

The analytical backend's network YAML (``examples/network/analytical/*.yml`` of
github.com/astra-sim/astra-sim, parsed by ``common/network-parser/NetworkParser.cpp`` of
astra-network-analytical)::

    topology: [ Ring, Switch ]     # per dimension: Ring, FullyConnected or Switch
    npus_count: [ 4, 2 ]           # NPUs per dimension (each > 1); NPUs = product
    bandwidth: [ 50.0, 25.0 ]      # GB/s per link and direction, GB = 2^30 B there
    latency: [ 500.0, 1000.0 ]     # ns per link

NPU i has coordinate ``(i // prod(npus[:d])) % npus[d]`` in dimension d (dimension 0
varies fastest), and a message goes along the first dimension where the two NPUs differ.
A Ring is bidirectional (the shorter way round), FullyConnected has one link per ordered
pair, Switch one cable per NPU to its switch (two links' latency per message).

netsim writes a machine this way when it is one of them exactly: a bidirectional ring, a
torus (each dimension a Ring; netsim's last dimension is ASTRA-sim's first), a full mesh,
one switch with one cable per endpoint; every dimension with one bandwidth and latency.
Anything else (a mesh without wrap-around links, parallel links or planes, several
switches or switch tiers, oversubscription, links that differ within a dimension) is
refused in one line naming it.

>>> import netsim
>>> doc = astra_network(netsim.torus((2, 4), bandwidth=2**30 * 50, latency=5e-7))
>>> doc["topology"], doc["npus_count"], doc["bandwidth"], doc["latency"]
(['Ring', 'Ring'], [4, 2], [50.0, 50.0], [500.0, 500.0])
>>> topology_from_astra(doc).params["dims"]
(2, 4)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TopologyError

__all__ = ["ASTRA_GB", "astra_network", "astra_network_yaml", "is_astra_network",
           "topology_from_astra", "load_astra_network"]

#: ASTRA-sim's analytical backend converts GB/s with 2^30 B (``bw_GBps_to_Bpns``).
ASTRA_GB = float(1 << 30)
_KINDS = ("Ring", "FullyConnected", "Switch")
_KEYS = ("topology", "npus_count", "bandwidth", "latency")


def _uniform(topo, links: np.ndarray, what: str) -> tuple[float, float]:
    bw, lat = np.unique(topo.bandwidth[links]), np.unique(topo.latency[links])
    if bw.size != 1 or lat.size != 1:
        raise TopologyError(f"{topo.name}: cannot be written for ASTRA-sim: links of {what} "
                            f"differ in bandwidth or latency (one value per dimension)")
    return float(bw[0]), float(lat[0])


def _refuse(topo, why: str) -> TopologyError:
    return TopologyError(f"{topo.name}: cannot be written for ASTRA-sim's analytical network: "
                         f"{why}")


def astra_network(topo) -> dict[str, list]:
    """The analytical network description of ``topo`` (bandwidth in ASTRA-sim's GB/s =
    2^30 B/s, latency in ns), or a one-line :class:`TopologyError` saying what it lacks."""
    if topo.num_links and int(topo.plane.max()) > 0:
        raise _refuse(topo, "it has parallel links (planes) between the same pair")
    family = topo.family
    if family == "mesh":
        raise _refuse(topo, "a mesh has no wrap-around links (ASTRA-sim's Ring wraps)")
    if family in ("ring", "torus"):
        dims = tuple(int(d) for d in topo.params["dims"])
        if family == "ring" and not (topo.sign < 0).any():
            raise _refuse(topo, "a one-way ring (ASTRA-sim's Ring is bidirectional)")
        kinds, counts, bws, lats = [], [], [], []
        for d in reversed(range(len(dims))):          # netsim's last dimension is fastest
            if dims[d] < 2:
                continue
            bw, lat = _uniform(topo, np.flatnonzero(topo.dim == d), f"dimension {d}")
            kinds.append("Ring")
            counts.append(dims[d])
            bws.append(bw)
            lats.append(lat)
        return _doc(kinds, counts, bws, lats)
    if family == "full_mesh":
        bw, lat = _uniform(topo, np.arange(topo.num_links), "the full mesh")
        return _doc(["FullyConnected"], [topo.num_endpoints], [bw], [lat])
    switches = np.flatnonzero(topo.is_switch)
    if switches.size == 1:
        ends = set(topo.endpoints.tolist())
        touching = (topo.is_switch[topo.link_src] | topo.is_switch[topo.link_dst])
        per_end = np.bincount(topo.link_src[topo.is_switch[topo.link_dst]],
                              minlength=topo.num_nodes)[topo.endpoints]
        if touching.all() and (per_end == 1).all() and \
                set(topo.link_src[~topo.is_switch[topo.link_src]].tolist()) == ends:
            bw, lat = _uniform(topo, np.arange(topo.num_links), "the switch")
            return _doc(["Switch"], [topo.num_endpoints], [bw], [lat])
    if family == "leaf_spine" and float(topo.params.get("oversubscription", 1.0)) != 1.0:
        raise _refuse(topo, "oversubscription (ASTRA-sim's Switch is non-blocking)")
    if switches.size > 1:
        raise _refuse(topo, f"{switches.size} switches (ASTRA-sim's Switch dimension is one "
                            f"switch per group of NPUs)")
    raise _refuse(topo, f"a {family} machine is not a Ring, FullyConnected or Switch "
                        f"dimension")


def _doc(kinds, counts, bws, lats) -> dict[str, list]:
    return {"topology": list(kinds), "npus_count": [int(c) for c in counts],
            "bandwidth": [float(b) / ASTRA_GB for b in bws],
            "latency": [float(t) * 1e9 for t in lats]}


def astra_network_yaml(topo) -> str:
    """:func:`astra_network` as the YAML file ASTRA-sim reads (flow lists, unit comments)."""
    doc = astra_network(topo)

    def show(values) -> str:
        return "[ " + ", ".join(repr(v) if isinstance(v, float) else str(v)
                                for v in values) + " ]"

    return (f"# ASTRA-sim analytical network of netsim machine {topo.name}\n"
            f"topology: {show(doc['topology'])}\n"
            f"npus_count: {show(doc['npus_count'])}\n"
            f"bandwidth: {show(doc['bandwidth'])}  # GB/s per link and direction "
            f"(GB = 2^30 B)\n"
            f"latency: {show(doc['latency'])}  # ns per link\n")


def is_astra_network(spec: Any) -> bool:
    """Is ``spec`` a YAML file holding an ASTRA-sim analytical network (``npus_count``)?"""
    path = Path(str(spec))
    if path.suffix.lower() not in (".yml", ".yaml") or not path.is_file():
        return False
    from .._inputs.yamlio import load_yaml, read_text

    try:
        text = read_text(path, "topology file")
        if "npus_count" not in text:    # a netsim file: not parsed twice (200k lines: 40 s)
            return False
        doc, _ = load_yaml(text, str(path))
    except Exception:                   # noqa: BLE001 - not ours: the topology loader says why
        return False
    return isinstance(doc, dict) and "npus_count" in doc and "topology" in doc


def _number_list(doc: dict, key: str, source: str, n: int | None) -> list:
    values = doc.get(key)
    if not isinstance(values, list) or not values:
        raise TopologyError(f"{source}: {key}: expected a list with one value per dimension, "
                            f"got {values!r}")
    if n is not None and len(values) != n:
        raise TopologyError(f"{source}: {key}: {len(values)} values for {n} dimensions")
    out = []
    for v in values:
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            raise TopologyError(f"{source}: {key}: {v!r} is not a number") from None
    return out


def topology_from_astra(doc: dict, source: str = "astra-sim network") -> "Any":
    """A netsim machine from an ASTRA-sim analytical network description."""
    from ..topology import TopologyBuilder, full_mesh, nvswitch, ring, torus

    if not isinstance(doc, dict):
        raise TopologyError(f"{source}: expected a mapping with {', '.join(_KEYS)}")
    unknown = sorted(set(doc) - set(_KEYS))
    if unknown:
        raise TopologyError(f"{source}: unknown key {unknown[0]!r} (an ASTRA-sim analytical "
                            f"network has {', '.join(_KEYS)})")
    kinds = doc.get("topology")
    if not isinstance(kinds, list) or not kinds:
        raise TopologyError(f"{source}: topology: expected a list such as [ Ring, Switch ], "
                            f"got {kinds!r}")
    for k in kinds:
        if k not in _KINDS:
            raise TopologyError(f"{source}: topology: {k!r} is not one of {', '.join(_KINDS)}")
    n = len(kinds)
    counts = _number_list(doc, "npus_count", source, n)
    bws = _number_list(doc, "bandwidth", source, n)
    lats = _number_list(doc, "latency", source, n)
    for c in counts:
        if c != int(c) or c < 2:
            raise TopologyError(f"{source}: npus_count: {c!r} must be an integer above 1")
    if any(b <= 0 for b in bws) or any(t < 0 for t in lats):
        raise TopologyError(f"{source}: bandwidth must be > 0 and latency >= 0")
    counts = [int(c) for c in counts]
    total = int(np.prod(counts))
    if total > 1 << 20:
        raise TopologyError(f"{source}: {total} NPUs is more than netsim's limit of 2^20")
    bw = [b * ASTRA_GB for b in bws]
    lat = [t * 1e-9 for t in lats]
    name = Path(source).stem
    if all(k == "Ring" for k in kinds) and len(set(bw)) == 1 and len(set(lat)) == 1:
        if n == 1:
            return ring(counts[0], bandwidth=bw[0], latency=lat[0], name=name)
        return torus(tuple(reversed(counts)), bandwidth=bw[0], latency=lat[0], name=name)
    if n == 1 and kinds[0] == "FullyConnected":
        return full_mesh(counts[0], bandwidth=bw[0], latency=lat[0], name=name)
    if n == 1 and kinds[0] == "Switch":
        return nvswitch(counts[0], switches=1, bandwidth=bw[0], latency=lat[0], name=name)
    return _built(kinds, counts, bw, lat, name)


def _built(kinds, counts, bw, lat, name: str):
    """Any mix of dimensions, link by link as the analytical backend connects them."""
    from ..topology import TopologyBuilder

    b = TopologyBuilder(name, "custom", dims=tuple(counts), kinds=tuple(kinds))
    total = int(np.prod(counts))
    npus = [b.add_node(f"npu{i}") for i in range(total)]
    stride = 1
    for d, (kind, k) in enumerate(zip(kinds, counts)):
        groups: dict[int, list[int]] = {}
        for i in range(total):
            base = i - ((i // stride) % k) * stride
            groups.setdefault(base, []).append(i)
        for base, members in groups.items():
            if kind == "Ring":
                # a Ring of 2 would connect the pair twice, but a device holds one link
                # per peer (Device::connect asserts it): one cable, as netsim's torus has
                for j in range(k if k > 2 else 1):
                    b.add_cable(npus[members[j]], npus[members[(j + 1) % k]], bw[d], lat[d])
            elif kind == "FullyConnected":
                for x in members:
                    for y in members:
                        if x != y:
                            b.add_link(npus[x], npus[y], bw[d], lat[d])
            else:
                sw = b.add_node(f"sw{d}_{base}", switch=True)
                for x in members:
                    b.add_cable(npus[x], sw, bw[d], lat[d])
        stride *= k
    b.set_endpoints(npus)
    return b.build()


def load_astra_network(path: str | Path):
    """:func:`topology_from_astra` of a YAML file."""
    from .._inputs.yamlio import load_yaml, read_text

    path = Path(path)
    doc, _ = load_yaml(read_text(path, "topology file"), str(path))
    return topology_from_astra(doc, str(path))
