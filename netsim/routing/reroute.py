"""Routing around failed links: the machine's own router where it can, else fewest hops.

Requests are routed on the topology without the failed links (the machine's router where
it can avoid the failure, e.g. up/down ECMP on a fat-tree, else fewest hops) and the new
link ids are mapped back to the full topology. A failure that leaves two talking
endpoints without a path is an error that names them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from ..errors import RoutingError
from ..topology.model import GRID_FAMILIES, Topology
from . import ShortestPathRouter, default_router, route

__all__ = ["surviving_topology", "reroute"]


def surviving_topology(topology: Topology, failed: np.ndarray) -> tuple[Topology, np.ndarray]:
    """The topology without the ``failed`` links, and new link id -> old link id."""
    keep = np.flatnonzero(~failed)
    family = "custom" if topology.family in GRID_FAMILIES else topology.family
    sub = replace(
        topology, family=family,
        params={**topology.params, "base_family": topology.family},
        link_src=topology.link_src[keep], link_dst=topology.link_dst[keep],
        bandwidth=topology.bandwidth[keep], latency=topology.latency[keep],
        plane=topology.plane[keep], dim=topology.dim[keep], sign=topology.sign[keep],
        wrap=topology.wrap[keep], link_names=tuple(topology.link_names[i] for i in keep))
    return sub, keep


def _route_on(sub: Topology, src, dst, keys):
    try:
        return route(sub, src, dst, keys=keys, router=default_router(sub))
    except RoutingError:
        return route(sub, src, dst, keys=keys, router=ShortestPathRouter())


def reroute(topology: Topology, failed: np.ndarray, src: np.ndarray, dst: np.ndarray,
            keys: np.ndarray, names: Sequence[str] | None = None):
    """New routes (link ids of ``topology``) for requests, avoiding ``failed`` links.

    ``names`` label the endpoints of each request in the error raised when a failure
    disconnects them (default: node names).
    """
    sub, old_id = surviving_topology(topology, failed)
    try:
        routes = _route_on(sub, src, dst, keys)
    except RoutingError:
        for i in range(len(src)):
            try:
                _route_on(sub, src[i:i + 1], dst[i:i + 1], keys[i:i + 1])
            except RoutingError:
                a = names[2 * i] if names else topology.node_names[src[i]]
                b = names[2 * i + 1] if names else topology.node_names[dst[i]]
                raise RoutingError(f"the failed links disconnect {a} from {b}: no path left "
                                   f"between them") from None
        raise
    return replace(routes, path_links=old_id[routes.path_links])
