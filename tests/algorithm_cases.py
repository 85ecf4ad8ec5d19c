"""Options under which every registered algorithm can run, for the algorithm tests."""

from __future__ import annotations

from netsim.algorithms import AlgoOptions, algorithms_for
from netsim.algorithms.registry import OPS
from netsim.topology import mesh, nvswitch, torus

#: A grid of p nodes for the dimension-wise algorithms.
GRIDS = {2: (2,), 3: (3,), 4: (2, 2), 5: (5,), 6: (2, 3), 7: (7,), 8: (2, 2, 2), 9: (3, 3),
         12: (3, 4), 16: (4, 4)}


def groups_for(p: int) -> tuple[tuple[int, ...], ...]:
    """Equal groups: 2 of p/2 when p is even, else p groups of one."""
    size = p // 2 if p % 2 == 0 else 1
    return tuple(tuple(range(g * size, (g + 1) * size)) for g in range(p // size))


def options_for(algorithm, p: int, **knobs) -> AlgoOptions:
    """Options that satisfy ``algorithm.requires`` for p ranks."""
    if algorithm.requires == "grid":
        topo = (torus if p % 3 == 0 else mesh)(GRIDS[p])
        return AlgoOptions(topology=topo, **knobs)
    if algorithm.requires == "reducing-switch":
        return AlgoOptions(topology=nvswitch(p, switches=2, reduce=True,
                                             reduce_bandwidth=2e12), **knobs)
    if algorithm.requires == "groups":
        return AlgoOptions(groups=groups_for(p), **knobs)
    return AlgoOptions(**knobs)


#: The modules of the built-in algorithms tested here (other modules may register more).
BUILT_IN = {f"netsim.algorithms.{m}" for m in (
    "allreduce", "reducescatter", "allgather", "alltoall", "broadcast", "dimensionwise",
    "hierarchical", "innetwork")}


def every_algorithm():
    """(op, algorithm) for every built-in algorithm."""
    return [(op, a) for op in OPS for a in algorithms_for(op) if a.build.__module__ in BUILT_IN]
