"""Shared by the engine benchmarks: one engine run timed stage by stage.

    from engine_stages import timed_engine   # benchmarks/ is the script's own folder
"""

from __future__ import annotations

import time


def timed_engine(topo, schedule, routes, *, overhead=0.0) -> dict:
    """``symmetry_s`` and ``classes``: the symmetry search alone (engine.symmetry);
    ``engine_s``, ``events`` and ``makespan_s``: the run (engine.execute, which searches
    again, so ``engine_s`` includes a second search)."""
    from netsim.engine import execute
    from netsim.engine.symmetry import find_classes

    t = time.perf_counter()
    classes = find_classes(schedule, routes, topo.bandwidth)
    out = {"symmetry_s": time.perf_counter() - t,
           "classes": None if classes is None else int(classes.sub.max()) + 1}
    del classes
    t = time.perf_counter()
    result = execute(topo, schedule, routes, overhead=overhead)
    out.update(engine_s=time.perf_counter() - t, events=int(result.events),
               makespan_s=float(result.makespan))
    return out
