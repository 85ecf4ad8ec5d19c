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
:mod:`netsim.run.faultspec`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..errors import InputError
from ..topology.model import Topology

__all__ = ["Fault", "fail_links", "degrade_links", "fail_nodes"]


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
