"""Routing speed: direct all-to-all (every ordered pair of endpoints) on meshes and fabrics.

Prints requests, sub-flows, nnz (sub-flow x link entries) and wall time of :func:`route`
with a fresh router (cold: includes building the router's per-topology tables) and again
with the same router (warm: caches filled). Run: ``python benchmarks/bench_routing.py``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from netsim.topology.grid import mesh, torus
from netsim.routing import DimensionOrderRouter, ShortestPathRouter, UpDownRouter, route
from netsim.topology.trees import fat_tree


def all_to_all(topo):
    """Sources and destinations of every ordered pair of distinct endpoints."""
    ep = topo.endpoints
    s, d = np.meshgrid(ep, ep, indexing="ij")
    keep = s != d
    return s[keep], d[keep]


def measure(label: str, topo, make_router) -> None:
    src, dst = all_to_all(topo)
    router = make_router()
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        routes = route(topo, src, dst, router=router)
        times.append(time.perf_counter() - t0)
    print(f"{label:<34} {routes.num_requests:>10,} {routes.num_subflows:>10,} "
          f"{routes.nnz:>12,} {times[0]:>8.3f} {times[1]:>8.3f}")


def main(argv: list[str]) -> None:
    print(f"{'case':<34} {'requests':>10} {'subflows':>10} {'nnz':>12} {'cold s':>8} "
          f"{'warm s':>8}")
    for k in (8, 16, 32):
        measure(f"mesh {k}x{k} dimension-order", mesh((k, k)), DimensionOrderRouter)
    measure("torus 16x16 links=2 dim-order", torus((16, 16), links=2), DimensionOrderRouter)
    measure("mesh 16x16 shortest-path", mesh((16, 16)), ShortestPathRouter)
    measure("fat_tree k=8 up/down hash", fat_tree(8), UpDownRouter)
    measure("fat_tree k=8 up/down spray", fat_tree(8), lambda: UpDownRouter(ecmp="spray"))
    if "--large" in argv:
        measure("mesh 32x32 shortest-path", mesh((32, 32)), ShortestPathRouter)
        measure("fat_tree k=16 up/down hash", fat_tree(16), UpDownRouter)


if __name__ == "__main__":
    main(sys.argv[1:])
