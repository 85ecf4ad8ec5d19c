"""Failed and degraded links: from the start of a run or at a time during it.

A :class:`Fault` names links (by id) that fail (carry nothing from ``time`` on) or degrade
(their bandwidth is multiplied by ``factor`` from ``time`` on). Failing a node fails every
link into and out of it.

Routing around failures: requests are first routed as usual; those whose path crosses a
failed link are routed again on the surviving links (the machine's own router where it can
avoid the failure, e.g. up/down ECMP on a fat-tree, else fewest hops), and the new link ids
are mapped back to the full topology. A failure that leaves two talking endpoints without
a path is an error that names them. Mid-run, the remaining bytes of every unfinished flow
that crosses a newly failed link continue on a new path, after that path's latency.
Faults as users write them (``--fail-link '1_1<->1_2@20us'``) are parsed at the edge, in
:mod:`netsim.faultspec`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Sequence

import numpy as np

from ..errors import InputError, RoutingError
from ..topology.model import Topology

__all__ = ["Fault", "fail_links", "degrade_links", "fail_nodes", "surviving_topology",
           "reroute"]


@dataclass(frozen=True)
class Fault:
    """Links ``links`` fail (``factor`` 0) or degrade to ``factor`` x bandwidth at ``time`` s."""

    links: tuple[int, ...]
    time: float = 0.0
    factor: float = 0.0

    @property
    def is_failure(self) -> bool:
        return self.factor == 0.0


def _link_ids(topology: Topology, links: Iterable[int | str]) -> tuple[int, ...]:
    return tuple(topology.link(l) if isinstance(l, str) else int(l) for l in links)


def fail_links(topology: Topology, links: Iterable[int | str], time: float = 0.0) -> Fault:
    """Links (ids or names) that fail at ``time`` seconds."""
    return Fault(_link_ids(topology, links), float(time), 0.0)


def degrade_links(topology: Topology, links: Iterable[int | str], factor: float,
                  time: float = 0.0) -> Fault:
    """Links whose bandwidth becomes ``factor`` (0 < factor <= 1) x nominal at ``time``."""
    if not 0.0 < factor <= 1.0:
        raise InputError(f"degrade factor must be in (0, 1], got {factor!r}")
    return Fault(_link_ids(topology, links), float(time), float(factor))


def fail_nodes(topology: Topology, nodes: Iterable[int | str], time: float = 0.0) -> Fault:
    """Every link into or out of the nodes (ids or names) fails at ``time``."""
    ids = [topology.node(n) if isinstance(n, str) else int(n) for n in nodes]
    touched = np.isin(topology.link_src, ids) | np.isin(topology.link_dst, ids)
    return Fault(tuple(np.flatnonzero(touched).tolist()), float(time), 0.0)


def surviving_topology(topology: Topology, failed: np.ndarray) -> tuple[Topology, np.ndarray]:
    """The topology without the ``failed`` links, and new link id -> old link id."""
    keep = np.flatnonzero(~failed)
    family = "custom" if topology.family in ("mesh", "torus", "ring") else topology.family
    sub = replace(
        topology, family=family,
        params={**topology.params, "base_family": topology.family},
        link_src=topology.link_src[keep], link_dst=topology.link_dst[keep],
        bandwidth=topology.bandwidth[keep], latency=topology.latency[keep],
        plane=topology.plane[keep], dim=topology.dim[keep], sign=topology.sign[keep],
        wrap=topology.wrap[keep], link_names=tuple(topology.link_names[i] for i in keep))
    return sub, keep


def _route_on(sub: Topology, src, dst, keys):
    from ..topology.routing import ShortestPathRouter, default_router, route

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
