"""The packet-level model: the same placed schedule as the fluid engine, packet by packet.

Links serialise packets and add latency, routers hold per-input-port buffers under credit
flow control and serve each output port round-robin, store-and-forward or virtual
cut-through (:mod:`netsim.packet.network`; defaults in :mod:`netsim.packet.options`). It
answers how far the fluid model's max-min sharing of continuous bytes is from packets on
wires, on small cases: at most :data:`MAX_ENDPOINTS` endpoints and :data:`MAX_PACKETS`
packets, refused beyond with the estimate before anything is simulated.

A lone 8-packet message over 2 store-and-forward hops of 1 GB/s and 1 us:
h (P + H)/C + (B/P - 1)(P + H)/C + h L = 2 us + 7 us + 2 us.

>>> from netsim.topology import mesh
>>> from netsim.schedule import ScheduleBuilder
>>> b = ScheduleBuilder(3); _ = b.send(0, 2, 8000)
>>> topo = mesh((1, 3), bandwidth=1e9, latency=1e-6)
>>> r = simulate_packets(topo, b.build(), options=PacketOptions(payload=1000))
>>> round(r.makespan * 1e6, 9)
11.0
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import ResourceError, ScheduleError, SimulationError
from ..schedule import SEND, Schedule
from .network import execute_packets
from .options import DEFAULT_PAYLOAD, SWITCHING, PacketOptions

__all__ = ["simulate_packets", "execute_packets", "PacketOptions", "SWITCHING",
           "DEFAULT_PAYLOAD", "MAX_ENDPOINTS", "MAX_PACKETS", "check_packet_scale",
           "estimate_packets"]

#: The packet model's size limits: endpoints a schedule's ranks sit on, packets in a run.
MAX_ENDPOINTS = 64
MAX_PACKETS = 1_000_000


def estimate_packets(topology, schedule: Schedule, options: PacketOptions | None = None,
                     parts: np.ndarray | None = None) -> int:
    """Packets a run cuts its sends into: ceil(bytes / payload) per sub-flow, where a send
    sprayed over k paths has k sub-flows (``parts``: sub-flows per send, default 1)."""
    payload = float((options or PacketOptions()).resolved(topology).payload)
    nbytes = schedule.nbytes[schedule.kind == SEND]
    parts = np.ones(nbytes.size) if parts is None else np.asarray(parts, dtype=np.float64)
    per = np.ceil(nbytes / np.maximum(parts, 1) / payload)
    return int((per * parts).sum())


def check_packet_scale(topology, schedule: Schedule, placement: np.ndarray,
                       options: PacketOptions | None = None,
                       parts: np.ndarray | None = None) -> int:
    """Refuse, with one line, a run above the size limits; return its packet count."""
    used = np.unique(np.asarray(placement))
    endpoints = int((~np.asarray(topology.is_switch)[used]).sum())
    if endpoints > MAX_ENDPOINTS:
        raise ResourceError(f"packet model: {endpoints} endpoints, above its limit of "
                            f"{MAX_ENDPOINTS}: use the fluid model (--model fluid) for this case")
    packets = estimate_packets(topology, schedule, options, parts)
    if packets > MAX_PACKETS:
        raise ResourceError(f"packet model: about {packets:,} packets, above its limit of "
                            f"{MAX_PACKETS:,}: use a smaller size, a larger packet payload "
                            f"or the fluid model (--model fluid)")
    return packets


def simulate_packets(topology, schedule: Schedule, placement: Sequence[int] | None = None, *,
                     router=None, overhead: float = 0.0, not_before: np.ndarray | None = None,
                     options: PacketOptions | None = None, faults=(),
                     record_queues: bool = False, record_deliveries: bool = False,
                     progress=None):
    """:func:`netsim.engine.simulate`'s inputs run by the packet model (module docstring).

    ``options`` (:class:`PacketOptions`) sets payload, header, buffer depth and switching;
    faults are not modelled and refused. Returns a :class:`~netsim.engine.Result`.
    """
    from ..engine import default_placement, route_schedule

    if faults:
        raise SimulationError("the packet model does not model faults: use --model fluid")
    placement = (default_placement(topology, schedule.num_ranks) if placement is None
                 else np.asarray(placement, dtype=np.int64))
    if placement.shape != (schedule.num_ranks,) or placement.size and (
            placement.min() < 0 or placement.max() >= topology.num_nodes):
        raise ScheduleError(f"placement {placement.tolist()[:8]} does not map the schedule's "
                            f"{schedule.num_ranks} ranks to nodes of {topology.name!r}")
    check_packet_scale(topology, schedule, placement, options)       # before routing
    routes = route_schedule(topology, schedule, placement, router)
    check_packet_scale(topology, schedule, placement, options, np.diff(routes.sub_ptr))
    result = execute_packets(topology, schedule, routes, overhead=overhead,
                             not_before=not_before, options=options,
                             record_queues=record_queues, record_deliveries=record_deliveries,
                             progress=progress)
    result.placement = placement
    return result
