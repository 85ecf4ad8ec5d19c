"""In-network reduction one plane per class: the builder's side.

The planes of :mod:`.innetwork` (one reducing switch each) are independent, and planes
whose switches and links are alike run alike (:mod:`netsim.engine.planes`, where the
engine checks that at run time, runs a few planes per class and expands the result).
:func:`plane_classes` groups the planes by what the topology says of them; the builder
builds :func:`~netsim.engine.planes.built_planes` of them (two per class) when
``options.extra["planes"]`` asks for it.
"""

from __future__ import annotations

import numpy as np

from ..engine.planes import PlaneMap, built_planes, expand_result, plane_map, _rate

__all__ = ["PlaneMap", "plane_classes", "built_planes", "plane_map", "expand_result"]


def plane_classes(nodes: np.ndarray, topo, switches: list[int]) -> list[list[int]]:
    """Plane indices (into ``switches``) grouped by reduction rate and, rank by rank, the
    (capacity, latency) of the links between the rank's node and the switch, both ways;
    classes ordered by their first plane, planes ascending.

    >>> from netsim.topology import parse_topology
    >>> topo = parse_topology("dgx-h100")      # 4 NVSwitches cabled 5/4/4/5 per GPU
    >>> switches = [int(v) for v in np.flatnonzero(topo.is_switch)]
    >>> plane_classes(topo.first_endpoints(8), topo, switches)
    [[0, 3], [1, 2]]
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    # the links of every (source, destination) pair, found by one sort (not one scan of
    # every link per rank and switch: 2,592 scans on gb200-nvl72, at every size of a sweep)
    n = np.int64(topo.num_nodes)
    pair = topo.link_src.astype(np.int64) * n + topo.link_dst
    order = np.argsort(pair, kind="stable")
    pair = pair[order]
    bandwidth, latency = topo.bandwidth.tolist(), topo.latency.tolist()

    def links(a: int, b: int) -> tuple:
        lo, hi = np.searchsorted(pair, (a * n + b, a * n + b + 1))
        return tuple(sorted((bandwidth[j], latency[j]) for j in order[lo:hi].tolist()))

    groups: dict[tuple, list[int]] = {}
    for s, switch in enumerate(switches):
        key: list = [_rate(topo, switch), topo.can_reduce(switch)]
        for node in nodes.tolist():
            key += [links(node, switch), links(switch, node)]
        groups.setdefault(tuple(key), []).append(s)
    return sorted(groups.values())
