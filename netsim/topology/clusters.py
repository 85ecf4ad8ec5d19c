"""Multi-node GPU clusters: NVSwitch nodes joined by a rail-optimised InfiniBand leaf-spine.

The model of an NVIDIA DGX SuperPOD compute fabric (DGX H100 reference architecture):

* every node is an NVSwitch machine (:func:`~netsim.topology.switched.nvswitch`): GPUs
  ``n{k}.gpu{g}`` cabled to the node's switch chips ``n{k}.sw{s}``;
* every GPU has its own NIC (``nic_bandwidth`` per direction; the NIC is folded into the
  GPU, PCIe is not modelled) cabled to the leaf switch of its *rail*: GPU g of every node
  of a scalable unit (SU, ``nodes_per_su`` nodes) goes to leaf ``su{u}.leaf{g}``, so traffic
  between the same rail of two nodes of an SU is one switch hop;
* every leaf is cabled to every spine ``spine{j}`` (a two-tier, non-blocking fabric:
  each leaf has at least as many up-cables as down-cables, all of ``nic_bandwidth``).

Every node carries ``tier`` (0 GPU, 1 NVSwitch or leaf, 2 spine), so up/down routing never
crosses a GPU, and ``fabric`` (``'nvlink'`` or ``'ib'``) on switches, which calibrations
use to tell NVLink from InfiniBand links. ``meta['groups']`` lists the endpoint (rank)
indices of each node, for hierarchical algorithms.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..budget import require_topology
from ..errors import TopologyError
from ._generate import assemble, check_bandwidth, check_latency, duplex, positive_int
from .model import Topology

__all__ = ["dgx_cluster", "rail_groups"]

#: DGX H100: 450 GB/s of NVLink per GPU per direction (18 x 25 GB/s; NVIDIA Hopper page).
_NVLINK_BW = 450e9
#: One ConnectX-7 NDR port per GPU: 400 Gb/s = 50 GB/s per direction (DGX BasePOD docs).
_NIC_BW = 50e9
#: Spines per SU in the H100 SuperPOD tables (1 SU: 8 leaves, 4 spines; 2 SU: 16 / 8).
_SPINES_PER_SU = 4


def rail_groups(nodes: int, gpus_per_node: int) -> list[list[int]]:
    """Endpoint (rank) indices of each node: ``[[0..g-1], [g..2g-1], ...]``."""
    return [list(range(k * gpus_per_node, (k + 1) * gpus_per_node)) for k in range(nodes)]


def _per_switch(links_per_switch, switches: int) -> tuple[int, ...]:
    if isinstance(links_per_switch, (int, np.integer)):
        links_per_switch = (int(links_per_switch),) * switches
    counts = tuple(int(c) for c in links_per_switch)
    if len(counts) != switches or min(counts) < 1:
        raise TopologyError(f"dgx_cluster: links_per_switch needs {switches} positive counts, "
                            f"got {links_per_switch!r}")
    return counts


class _Layout:
    """Node indices of one cluster: GPUs, then NVSwitches, then leaves, then spines."""

    def __init__(self, nodes: int, gpus: int, switches: int, nodes_per_su: int) -> None:
        self.nodes, self.gpus, self.switches = nodes, gpus, switches
        self.sus = math.ceil(nodes / nodes_per_su)
        self.nodes_per_su = min(nodes, nodes_per_su)
        self.spines = _SPINES_PER_SU * self.sus
        self.sw0 = nodes * gpus
        self.leaf0 = self.sw0 + nodes * switches
        self.spine0 = self.leaf0 + self.sus * gpus
        self.total = self.spine0 + self.spines

    def names(self) -> list[str]:
        return ([f"n{k}.gpu{g}" for k in range(self.nodes) for g in range(self.gpus)]
                + [f"n{k}.sw{s}" for k in range(self.nodes) for s in range(self.switches)]
                + [f"su{u}.leaf{g}" for u in range(self.sus) for g in range(self.gpus)]
                + [f"spine{j}" for j in range(self.spines)])

    def coords(self) -> list[tuple[float, float]]:
        """Drawing positions: NVSwitches below the GPUs, leaves and spines above."""
        width = self.nodes * self.gpus
        gpu = [(0.0, float(i)) for i in range(width)]
        per_node = np.arange(self.switches) + 0.5
        sw = [(-1.0, float(k * self.gpus + x * self.gpus / self.switches - 0.5))
              for k in range(self.nodes) for x in per_node]
        leaf = [(1.0, float(x)) for x in (np.arange(self.sus * self.gpus) + 0.5)
                * width / (self.sus * self.gpus) - 0.5]
        spine = [(2.0, float(x)) for x in (np.arange(self.spines) + 0.5)
                 * width / self.spines - 0.5]
        return gpu + sw + leaf + spine


def _nvlink_cables(lay: _Layout, counts: tuple[int, ...]):
    """(src, dst, plane) of GPU <-> NVSwitch links: counts[s] planes to switch s."""
    gpu = np.arange(lay.nodes * lay.gpus)
    node = gpu // lay.gpus
    parts = [duplex(gpu, lay.sw0 + node * lay.switches + s, c) for s, c in enumerate(counts)]
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


def _ib_cables(lay: _Layout):
    """(src, dst, plane) of GPU <-> leaf and leaf <-> spine links (one NIC per GPU)."""
    gpu = np.arange(lay.nodes * lay.gpus)
    su, rail = (gpu // lay.gpus) // lay.nodes_per_su, gpu % lay.gpus
    down = duplex(gpu, lay.leaf0 + su * lay.gpus + rail, 1)
    # Non-blocking: a leaf's up-cables (spread over every spine) cover its down-cables.
    per_pair = math.ceil(lay.nodes_per_su / lay.spines)
    leaf, spine = np.meshgrid(np.arange(lay.sus * lay.gpus), np.arange(lay.spines),
                              indexing="ij")
    up = duplex(lay.leaf0 + leaf.ravel(), lay.spine0 + spine.ravel(), per_pair)
    return tuple(np.concatenate([down[i], up[i]]) for i in range(3))


def _attrs(lay: _Layout, reduce: bool, reduce_bandwidth: float | None) -> list[dict]:
    gpu = [{"tier": 0, "node": k, "rail": g} for k in range(lay.nodes) for g in range(lay.gpus)]
    sw = {"tier": 1, "fabric": "nvlink"}
    if reduce:
        sw["reduce"] = True
        if reduce_bandwidth is not None:
            sw["reduce_bandwidth"] = reduce_bandwidth
    nvs = [{**sw, "node": k} for k in range(lay.nodes) for _ in range(lay.switches)]
    leaf = [{"tier": 1, "fabric": "ib", "rail": g} for _ in range(lay.sus)
            for g in range(lay.gpus)]
    spine = [{"tier": 2, "fabric": "ib"} for _ in range(lay.spines)]
    return gpu + nvs + leaf + spine


def dgx_cluster(nodes: int = 4, *, gpus_per_node: int = 8, switches: int = 4,
                links_per_switch: int | Sequence[int] = (5, 4, 4, 5),
                bandwidth: float | str = _NVLINK_BW, nic_bandwidth: float | str = _NIC_BW,
                latency: float | str = 0.0, nic_latency: float | str = 0.0,
                nodes_per_su: int = 32, reduce: bool = True,
                reduce_bandwidth: float | str | None = None,
                name: str | None = None) -> Topology:
    """``nodes`` NVSwitch nodes on a rail-optimised, non-blocking leaf-spine (module doc).

    Parameters
    ----------
    bandwidth : NVLink bytes/s per GPU per direction in total (as for ``nvswitch``), split
        evenly over the GPU's ``sum(links_per_switch)`` links (DGX H100: 450 GB/s, 18 links).
    nic_bandwidth : bytes/s per direction of each GPU's NIC and of every fabric cable.
    latency, nic_latency : s per NVLink link and per InfiniBand link.
    nodes_per_su : nodes per scalable unit (one leaf per rail per SU; 32 in the SuperPOD).
    reduce, reduce_bandwidth : NVSwitch chips reduce in-network (NVLS), at this rate.

    Spines: 4 per SU; each leaf-spine pair gets ``ceil(nodes_per_su / spines)`` cables.
    Family ``'dgx_cluster'``; ``meta['groups']`` holds each node's rank indices.

    >>> t = dgx_cluster(2)
    >>> t.num_endpoints, t.num_switches, t.meta["groups"][1][:3]
    (16, 20, [8, 9, 10])
    """
    fam = "dgx_cluster"
    nodes = positive_int(nodes, "nodes", fam)
    gpus = positive_int(gpus_per_node, "gpus_per_node", fam)
    switches = positive_int(switches, "switches", fam)
    counts = _per_switch(links_per_switch, switches)
    nvl = check_bandwidth(bandwidth, fam) / sum(counts)
    nic = check_bandwidth(nic_bandwidth, fam, "nic_bandwidth")
    lat, nic_lat = check_latency(latency, fam), check_latency(nic_latency, fam, "nic_latency")
    reduce_bw = (None if reduce_bandwidth is None
                 else check_bandwidth(reduce_bandwidth, fam, "reduce_bandwidth"))
    lay = _Layout(nodes, gpus, switches, positive_int(nodes_per_su, "nodes_per_su", fam))
    # before any array: nodes=100000 is 1.2M nodes and 32M links (~12 GiB)
    require_topology(lay.total, 2 * nodes * gpus * (sum(counts) + 1) + 2 * lay.sus * gpus
                     * lay.spines * math.ceil(lay.nodes_per_su / lay.spines),
                     f"dgx_cluster:nodes={nodes}")
    nv_src, nv_dst, nv_plane = _nvlink_cables(lay, counts)
    ib_src, ib_dst, ib_plane = _ib_cables(lay)
    topo = assemble(
        name or f"dgx_cluster-{nodes}", fam,
        {"nodes": nodes, "gpus_per_node": gpus, "switches": switches,
         "links_per_switch": counts, "nodes_per_su": lay.nodes_per_su, "spines": lay.spines},
        lay.names(), src=np.concatenate([nv_src, ib_src]),
        dst=np.concatenate([nv_dst, ib_dst]), plane=np.concatenate([nv_plane, ib_plane]),
        bandwidth=np.concatenate([np.full(nv_src.size, nvl), np.full(ib_src.size, nic)]),
        latency=np.concatenate([np.full(nv_src.size, lat), np.full(ib_src.size, nic_lat)]),
        is_switch=np.arange(lay.total) >= lay.sw0, coords=lay.coords(),
        node_attrs=_attrs(lay, reduce, reduce_bw))
    topo.meta["groups"] = rail_groups(nodes, gpus)
    return topo


# -- spec family ``dgxcluster:nodes=4`` -----------------------------------------------------

def _counts(options, key: str):
    text = options.get(key)
    if text is None:
        return (5, 4, 4, 5)
    try:
        return tuple(int(p) for p in str(text).replace("x", "/").split("/"))
    except ValueError:
        raise options.error(key, "expected counts such as 5/4/4/5") from None


def _spec(args: str, options) -> Topology:
    """``dgxcluster:4`` or ``dgxcluster:nodes=4,nic_bw=50GB/s,...`` (see :func:`dgx_cluster`)."""
    if args and "nodes" in options:
        raise TopologyError(f"nodes given twice ({args!r} and nodes=)")
    try:
        nodes = int(args) if args else options.int("nodes", 4)
    except ValueError:
        raise TopologyError(f"dgxcluster: nodes must be an integer, got {args!r}") from None
    return dgx_cluster(
        nodes, gpus_per_node=options.int("gpus", 8), switches=options.int("switches", 4),
        links_per_switch=_counts(options, "links_per_switch"),
        bandwidth=options.get("bandwidth", _NVLINK_BW),
        nic_bandwidth=options.rate("nic_bandwidth", _NIC_BW),
        latency=options.get("latency", 0.0), nic_latency=options.time("nic_latency", 0.0),
        nodes_per_su=options.int("nodes_per_su", 32), reduce=options.bool("reduce", True),
        reduce_bandwidth=options.rate("reduce_bandwidth", None), name=options.get("name"))


def _register() -> None:
    from .spec import OPTION_ALIASES, register_family

    OPTION_ALIASES.setdefault("nic_bw", "nic_bandwidth")
    OPTION_ALIASES.setdefault("nic_lat", "nic_latency")
    OPTION_ALIASES.setdefault("su", "nodes_per_su")
    register_family("dgxcluster", _spec, aliases=("dgx_cluster", "dgx-cluster"))


_register()
