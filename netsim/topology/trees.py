"""Switched trees for scale-out fabrics: the k-ary fat tree and the two-tier leaf-spine.

Hosts come first, so host i is node i and rank i. Every node carries a ``tier`` attribute
(0 host, 1 edge/leaf, 2 aggregation/spine, 3 core) and drawing coordinates
``coord = (tier, x)``.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import TopologyError
from ..budget import require_topology
from ._generate import (DEFAULT_BANDWIDTH, DEFAULT_LATENCY, assemble, check_bandwidth,
                        check_latency, check_links, duplex, positive_int)
from .model import Topology

__all__ = ["fat_tree", "leaf_spine"]


def _centered(count: int, width: float) -> np.ndarray:
    """x positions of ``count`` nodes spread evenly under a row of ``width`` hosts."""
    return (np.arange(count) + 0.5) * (width / count) - 0.5


def _join(*parts):
    """Concatenate (a, b, bandwidth) cable groups into three arrays."""
    return tuple(np.concatenate([np.asarray(p[i], dtype=float if i == 2 else np.int64)
                                 for p in parts]) for i in range(3))


def fat_tree(k: int, *, bandwidth: float | str = DEFAULT_BANDWIDTH,
             latency: float | str = DEFAULT_LATENCY, links: int = 1,
             host_bandwidth: float | str | None = None, name: str | None = None) -> Topology:
    """The k-ary three-tier fat tree of Al-Fares et al. (SIGCOMM 2008), k even.

    k pods, each with k/2 edge and k/2 aggregation switches; (k/2)^2 core switches; k^3/4
    hosts. Edge switch j of pod p serves hosts ``h{(p*k/2 + j)*k/2 + i}``, is cabled to every
    aggregation switch of its pod, and aggregation switch a of every pod is cabled to core
    switches a*k/2 .. a*k/2 + k/2 - 1.

    Nodes: hosts ``h0..``, then ``edge{p}_{j}``, ``agg{p}_{j}``, ``core{j}``; attributes
    ``tier`` (0 host, 1 edge, 2 aggregation, 3 core) and ``pod`` (-1 for core switches).

    Parameters
    ----------
    bandwidth : bytes/s of each switch-to-switch link in one direction (default 50 GB/s).
    host_bandwidth : bytes/s of each host link in one direction (default ``bandwidth``).
    latency : seconds per link (default 0).
    links : parallel links (planes) per cable direction; ``links=k`` makes k separate links,
        each of the stated bandwidth (not one link of k x bandwidth).

    Family ``'fat_tree'``, ``params={'k': k}``.

    >>> t = fat_tree(4)
    >>> t.num_endpoints, t.num_switches, t.num_links   # 48 cables
    (16, 20, 96)
    """
    k = positive_int(k, "k", "fat_tree", minimum=2)
    if k % 2:
        raise TopologyError(f"fat_tree: k must be even, got {k}")
    bw = check_bandwidth(bandwidth, "fat_tree")
    host_bw = bw if host_bandwidth is None else check_bandwidth(host_bandwidth, "fat_tree",
                                                                "host_bandwidth")
    lat = check_latency(latency, "fat_tree")
    links = check_links(links, "fat_tree")
    # k^3/4 hosts, 5k^2/4 switches, 3k^3/4 cables of two directions.
    require_topology(k ** 3 / 4 + 5 * k * k / 4, 3 * k ** 3 / 2 * links, f"fat_tree:k={k}")
    h = k // 2
    hosts, per_pod = k * h * h, h  # per_pod switches of each kind per pod
    edge0, agg0, core0 = hosts, hosts + k * h, hosts + 2 * k * h
    host = np.arange(hosts)
    pod_of_switch = np.repeat(np.arange(k), per_pod)        # for edge and agg indices
    up_edge = (host, edge0 + host // h, np.full(hosts, host_bw))
    e, a = np.meshgrid(np.arange(k * h), np.arange(h), indexing="ij")   # edge x agg-in-pod
    edge_agg = (edge0 + e.ravel(), agg0 + pod_of_switch[e.ravel()] * h + a.ravel(),
                np.full(e.size, bw))
    g, c = np.meshgrid(np.arange(k * h), np.arange(h), indexing="ij")   # agg x its cores
    agg_core = (agg0 + g.ravel(), core0 + (g.ravel() % h) * h + c.ravel(), np.full(g.size, bw))
    a_end, b_end, cable_bw = _join(up_edge, edge_agg, agg_core)
    src, dst, plane, tags = duplex(a_end, b_end, links, bw=cable_bw)

    names = ([f"h{i}" for i in range(hosts)]
             + [f"edge{p}_{j}" for p in range(k) for j in range(h)]
             + [f"agg{p}_{j}" for p in range(k) for j in range(h)]
             + [f"core{j}" for j in range(h * h)])
    pods = np.concatenate([host // (h * h), pod_of_switch, pod_of_switch, np.full(h * h, -1)])
    tiers = np.repeat([0, 1, 2, 3], [hosts, k * h, k * h, h * h])
    xs = np.concatenate([host.astype(float), _centered(k * h, hosts), _centered(k * h, hosts),
                         _centered(h * h, hosts)])
    return assemble(
        name or f"fat_tree-k{k}", "fat_tree", {"k": k}, names, src=src, dst=dst,
        bandwidth=tags["bw"], latency=lat, plane=plane, is_switch=tiers > 0,
        coords=[(float(t), float(x)) for t, x in zip(tiers, xs)],
        node_attrs=[{"tier": int(t), "pod": int(p)} for t, p in zip(tiers, pods)])


def leaf_spine(hosts_per_leaf: int, leaves: int, spines: int, *,
               bandwidth: float | str = DEFAULT_BANDWIDTH, oversubscription: float = 1.0,
               latency: float | str = DEFAULT_LATENCY, links: int = 1,
               name: str | None = None) -> Topology:
    """A two-tier leaf-spine: every leaf switch cabled to every spine switch.

    ``bandwidth`` is the bytes/s of each host link in one direction. The bandwidth of each
    leaf-spine link is chosen so that a leaf's host bandwidth over its uplink bandwidth is
    the ``oversubscription`` ratio::

        uplink = hosts_per_leaf * bandwidth / (spines * oversubscription)

    (1.0 = non-blocking, 2.0 = 2:1 oversubscribed). ``links=k`` makes k separate links per
    cable direction, each of the stated bandwidth (not one link of k x bandwidth); the ratio
    is unchanged. ``latency`` is seconds per link.

    Nodes: hosts ``h0..`` (host i on leaf i // hosts_per_leaf), ``leaf0..``, ``spine0..``,
    with ``tier`` 0/1/2. Family ``'leaf_spine'``.

    >>> t = leaf_spine(16, 8, 4, bandwidth="50GB/s", oversubscription=2)
    >>> t.num_endpoints, t.num_switches, t.num_links   # (128 + 32) cables
    (128, 12, 320)
    >>> float(t.bandwidth[-1])                         # 16 * 50 / (4 * 2) GB/s
    100000000000.0
    """
    family = "leaf_spine"
    hpl = positive_int(hosts_per_leaf, "hosts_per_leaf", family)
    leaves = positive_int(leaves, "leaves", family)
    spines = positive_int(spines, "spines", family)
    bw = check_bandwidth(bandwidth, family)
    try:
        over = float(oversubscription)
    except (TypeError, ValueError):
        over = math.nan
    if not math.isfinite(over) or over <= 0:
        raise TopologyError(f"{family}: oversubscription must be a positive number, "
                            f"got {oversubscription!r}")
    lat = check_latency(latency, family)
    links = check_links(links, family)
    require_topology(hpl * leaves + leaves + spines,
                     2 * (hpl * leaves + leaves * spines) * links, family)
    hosts = hpl * leaves
    uplink = hpl * bw / (spines * over)
    host = np.arange(hosts)
    leaf0, spine0 = hosts, hosts + leaves
    lf, sp = np.meshgrid(np.arange(leaves), np.arange(spines), indexing="ij")
    a_end, b_end, cable_bw = _join((host, leaf0 + host // hpl, np.full(hosts, bw)),
                                   (leaf0 + lf.ravel(), spine0 + sp.ravel(),
                                    np.full(lf.size, uplink)))
    src, dst, plane, tags = duplex(a_end, b_end, links, bw=cable_bw)
    names = ([f"h{i}" for i in range(hosts)] + [f"leaf{i}" for i in range(leaves)]
             + [f"spine{j}" for j in range(spines)])
    tiers = np.repeat([0, 1, 2], [hosts, leaves, spines])
    xs = np.concatenate([host.astype(float), _centered(leaves, hosts),
                         _centered(spines, hosts)])
    attrs = ([{"tier": 0, "leaf": int(i // hpl)} for i in host]
             + [{"tier": int(t)} for t in tiers[hosts:]])
    return assemble(
        name or f"leaf_spine-{leaves}x{spines}", family,
        {"hosts_per_leaf": hpl, "leaves": leaves, "spines": spines, "oversubscription": over},
        names, src=src, dst=dst, bandwidth=tags["bw"], latency=lat, plane=plane,
        is_switch=tiers > 0, coords=[(float(t), float(x)) for t, x in zip(tiers, xs)],
        node_attrs=attrs)
