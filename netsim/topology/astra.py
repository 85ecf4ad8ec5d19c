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

A machine file of this form is a topology wherever one is taken (``--topo net.yml``).

netsim writes every machine in this form, exactly where ASTRA-sim can say it and with a
stated approximation where it cannot:

* a ring or torus: each dimension a Ring (netsim's last dimension is ASTRA-sim's first);
  parallel links between a pair (planes, ``links=4``) are one link of their summed
  bandwidth, as ASTRA-sim's own examples aggregate them;
* a full mesh: FullyConnected;
* switched machines: endpoints grouped by the switches only they reach (a DGX's NVSwitch
  chips) give a Switch dimension of the group size at each endpoint's summed bandwidth to
  those chips; the fabric beyond (a cluster's leaf/spine tiers, a fat tree) is one more
  Switch dimension at each endpoint's bandwidth into it. ASTRA-sim's Switch is one
  non-blocking switch: the tiers' extra hops and their latency are not written (noted);
* a mesh: its lines are written as Rings, which wrap (noted), since ASTRA-sim has no line.

Each approximation is a ``# note:`` line of the YAML (:func:`astra_export` returns them);
an oversubscribed fabric, links that differ within a dimension, or a group layout
ASTRA-sim's NPU numbering cannot express are refused in one line.

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

__all__ = ["ASTRA_GB", "astra_export", "astra_network", "astra_network_yaml",
           "is_astra_network", "topology_from_astra", "load_astra_network"]

#: ASTRA-sim's analytical backend converts GB/s with 2^30 B (``bw_GBps_to_Bpns``).
ASTRA_GB = float(1 << 30)
_KINDS = ("Ring", "FullyConnected", "Switch")
_KEYS = ("topology", "npus_count", "bandwidth", "latency")


def _refuse(topo, why: str) -> TopologyError:
    return TopologyError(f"{topo.name}: cannot be written for ASTRA-sim's analytical network: "
                         f"{why}")


def _one(topo, values: np.ndarray, what: str, quantity: str) -> float:
    """The single value of ``values`` (bandwidths or latencies of one dimension)."""
    distinct = np.unique(np.round(values, 9)) if values.size else values
    if distinct.size != 1:
        raise _refuse(topo, f"{quantity} differs within {what} (ASTRA-sim has one value per "
                            f"dimension)")
    return float(values[0])


def _pair_bandwidth(topo, links: np.ndarray) -> np.ndarray:
    """Summed bandwidth per directed node pair of ``links`` (planes aggregated), bytes/s."""
    src, dst = topo.link_src[links], topo.link_dst[links]
    _, pair = np.unique(src.astype(np.int64) * topo.num_nodes + dst, return_inverse=True)
    return np.bincount(pair.ravel(), weights=topo.bandwidth[links])


def astra_export(topo) -> tuple[dict[str, list], list[str]]:
    """``topo`` as an analytical network description (bandwidth in ASTRA-sim's GB/s =
    2^30 B/s, latency in ns) and the approximations made, one sentence each; or a one-line
    :class:`TopologyError` saying what ASTRA-sim cannot express."""
    family = topo.family
    notes: list[str] = []
    if topo.num_links and int(topo.plane.max()) > 0:
        notes.append(f"parallel links between a pair ({int(topo.plane.max()) + 1} planes at "
                     f"most) are written as one link of their summed bandwidth")
    if family in ("ring", "torus", "mesh"):
        dims = tuple(int(d) for d in topo.params["dims"])
        if family == "ring" and not (topo.sign < 0).any():
            raise _refuse(topo, "a one-way ring (ASTRA-sim's Ring is bidirectional)")
        if family == "mesh":
            notes.append("a mesh has no wrap-around links; its lines are written as "
                         "ASTRA-sim Rings, which wrap")
        kinds, counts, bws, lats = [], [], [], []
        for d in reversed(range(len(dims))):          # netsim's last dimension is fastest
            if dims[d] < 2:
                continue
            links = np.flatnonzero(topo.dim == d)
            kinds.append("Ring")
            counts.append(dims[d])
            bws.append(_one(topo, _pair_bandwidth(topo, links), f"dimension {d}",
                            "bandwidth"))
            lats.append(_one(topo, topo.latency[links], f"dimension {d}", "latency"))
        return _doc(kinds, counts, bws, lats), notes
    if family == "full_mesh":
        links = np.arange(topo.num_links)
        return _doc(["FullyConnected"], [topo.num_endpoints],
                    [_one(topo, _pair_bandwidth(topo, links), "the full mesh", "bandwidth")],
                    [_one(topo, topo.latency[links], "the full mesh", "latency")]), notes
    if float(topo.params.get("oversubscription", 1.0)) != 1.0:
        raise _refuse(topo, "oversubscription (ASTRA-sim's Switch is non-blocking)")
    if topo.num_switches == 0:
        raise _refuse(topo, f"a {family} machine without switches is not a Ring, "
                            f"FullyConnected or Switch dimension")
    return _switched(topo, notes)


def _switched(topo, notes: list[str]) -> tuple[dict[str, list], list[str]]:
    """Switch dimensions of a switched machine: the switches that reach endpoints only (a
    node's NVSwitch chips) group the endpoints; the rest of the switches are the fabric."""
    sw, src, dst = topo.is_switch, topo.link_src, topo.link_dst
    if (~sw[src] & ~sw[dst]).any():
        raise _refuse(topo, "links between two endpoints beside switches")
    fabric = np.zeros(topo.num_nodes, bool)          # a switch with a switch neighbour
    fabric[src[sw[src] & sw[dst]]] = True
    ends = topo.endpoints
    index = np.full(topo.num_nodes, -1)
    index[ends] = np.arange(ends.size)
    # union the endpoints that share a local switch (a smallest-label sweep to a fixpoint)
    label = np.arange(ends.size)
    local_up = ~sw[src] & sw[dst] & ~fabric[dst]
    e_of, s_of = index[src[local_up]], dst[local_up]
    while e_of.size:
        low = np.full(topo.num_nodes, ends.size)
        np.minimum.at(low, s_of, label[e_of])
        new = label.copy()
        np.minimum.at(new, e_of, low[s_of])
        if (new == label).all():
            break
        label = new
    _, group = np.unique(label, return_inverse=True)
    groups = int(group.max()) + 1
    size = ends.size // groups
    if groups * size != ends.size or not (group == np.arange(ends.size) // size).all():
        raise _refuse(topo, "its endpoint groups are not consecutive blocks of one size "
                            "(ASTRA-sim numbers NPUs dimension by dimension)")
    kinds, counts, bws, lats = [], [], [], []
    up_fabric = ~sw[src] & fabric[dst]
    for in_dim, count in ((local_up, size), (up_fabric, groups)):
        if count < 2:
            continue
        per_end = np.bincount(index[src[in_dim]], weights=topo.bandwidth[in_dim],
                              minlength=ends.size)
        kinds.append("Switch")
        counts.append(count)
        what = "the endpoints' links to their " + ("switch chips" if in_dim is local_up
                                                   else "fabric")
        bws.append(_one(topo, per_end, what, "bandwidth"))
        lats.append(_one(topo, topo.latency[in_dim], what, "latency"))
    if int(sw.sum()) > 1 and local_up.any():
        notes.append(f"{int((sw & ~fabric).sum())} switch chips reached by endpoints only "
                     f"are one Switch dimension at each endpoint's summed bandwidth to them")
    if fabric.any():
        notes.append(f"a fabric of {int(fabric.sum())} switches is one non-blocking Switch "
                     f"dimension: its extra hops and their latency are not written")
    if not kinds:
        raise _refuse(topo, "fewer than two endpoints")
    return _doc(kinds, counts, bws, lats), notes


def astra_network(topo) -> dict[str, list]:
    """The analytical network description of ``topo`` (see :func:`astra_export`)."""
    return astra_export(topo)[0]


def _doc(kinds, counts, bws, lats) -> dict[str, list]:
    return {"topology": list(kinds), "npus_count": [int(c) for c in counts],
            "bandwidth": [float(b) / ASTRA_GB for b in bws],
            "latency": [float(t) * 1e9 for t in lats]}


def astra_network_yaml(topo) -> str:
    """:func:`astra_network` as the YAML file ASTRA-sim reads (flow lists, unit comments)."""
    doc, notes = astra_export(topo)

    def show(values) -> str:
        return "[ " + ", ".join(repr(v) if isinstance(v, float) else str(v)
                                for v in values) + " ]"

    return (f"# ASTRA-sim analytical network of netsim machine {topo.name}\n"
            + "".join(f"# note: {note}\n" for note in notes) +
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
    from .grid import torus
    from .ring import ring
    from .switched import full_mesh, nvswitch

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
    from .model import TopologyBuilder

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
