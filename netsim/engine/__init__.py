"""The flow-level engine: max-min fair fluid network driven by a schedule's DAG.

>>> from netsim.topology import ring
>>> from netsim.schedule import ScheduleBuilder
>>> b = ScheduleBuilder(2); _ = b.send(0, 1, 1e9)
>>> round(simulate(ring(2, bandwidth=1e9), b.build()).makespan, 6)
1.0
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import ScheduleError
from ..schedule import SEND, Schedule
from .config import EngineConfig, EnginePath, choose_path, describe
from .executor import ProgressCallback, execute
from .faults import Fault, degrade_links, fail_links, fail_nodes
from .maxmin import max_min_rates
from .result import Result

__all__ = ["simulate", "execute", "max_min_rates", "Result", "ProgressCallback",
           "default_placement", "route_schedule", "Fault", "fail_links", "degrade_links",
           "fail_nodes", "EngineConfig", "EnginePath", "choose_path", "describe"]


def default_placement(topology, num_ranks: int) -> np.ndarray:
    """Rank i on the i-th endpoint of the topology's natural order."""
    return topology.first_endpoints(num_ranks)


def _checked_placement(topology, schedule: Schedule, placement) -> np.ndarray:
    if placement is None:
        return default_placement(topology, schedule.num_ranks)
    placement = np.asarray(placement, dtype=np.int64)
    if placement.shape != (schedule.num_ranks,):
        raise ScheduleError(f"placement maps {placement.size} ranks but the schedule has "
                            f"{schedule.num_ranks}")
    bad = (placement < 0) | (placement >= topology.num_nodes)
    if bad.any():
        raise ScheduleError(f"placement: rank {int(np.flatnonzero(bad)[0])} is on node "
                            f"{int(placement[bad][0])}, not a node of {topology.name!r}")
    return placement


def route_schedule(topology, schedule: Schedule, placement: np.ndarray, router=None):
    """Routes of the schedule's sends, in send-op order (explicit op paths win)."""
    from ..routing import route

    send_ops = np.flatnonzero(schedule.kind == SEND)
    src = placement[schedule.src[send_ops]]
    dst = placement[schedule.dst[send_ops]]
    paths = None
    if schedule.paths:
        position = {int(op): i for i, op in enumerate(send_ops)}
        paths = {position[op]: list(p) for op, p in schedule.paths.items()}
    return route(topology, src, dst, keys=send_ops, router=router, paths=paths)


def simulate(topology, schedule: Schedule, placement: Sequence[int] | None = None, *,
             router=None, overhead=0.0, not_before: np.ndarray | None = None,
             progress: ProgressCallback | None = None, record_timeline: bool = False,
             faults=(), tolerance: float = 0.0, config: EngineConfig | None = None) -> Result:
    """Run ``schedule`` on ``topology`` with rank r on node ``placement[r]``.

    ``overhead`` is a per-message cost at the sender (s; one value, or one per op);
    ``not_before`` an optional earliest release time per op (s); ``faults`` links that fail
    or degrade (see
    :mod:`netsim.engine.faults`); ``tolerance`` the approximate mode's relative window
    (default 0: exact; see :func:`~netsim.engine.executor.execute`); ``config`` the
    engine's tunables (:class:`EngineConfig`; the path taken is in
    ``result.meta["engine"]``). Returns a :class:`Result`.
    """
    placement = _checked_placement(topology, schedule, placement)
    routes = route_schedule(topology, schedule, placement, router)
    result = execute(topology, schedule, routes, overhead=overhead, not_before=not_before,
                     progress=progress, record_timeline=record_timeline, faults=faults,
                     tolerance=tolerance, config=config)
    result.placement = placement
    return result
