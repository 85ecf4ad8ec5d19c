"""Issue 2's speed target: direct all-to-all on a k x k mesh, the whole `netsim flows` path.

1 MiB per pair, 50 GB/s links, XY routing, zero latency. Each size runs in a fresh process
so its peak memory (max RSS) is its own. Target: 16x16 (65,280 flows) in at most 3 s on a
2-core machine, path building included. Prints flows, flow-link incidences, events, wall
time, peak memory, and the makespan against the bisection bound k^3 m / (4 B).

    python benchmarks/bench_engine_alltoall.py [8 16 32]
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time


def one(k: int) -> dict:
    start = time.perf_counter()
    from netsim.engine import execute, route_schedule
    from netsim.topology import mesh
    from netsim.schedule.traffic import all_to_all

    m, bandwidth = 1 << 20, 50e9
    topology = mesh((k, k), bandwidth=bandwidth)
    schedule = all_to_all(k * k, m)
    built = time.perf_counter()
    routes = route_schedule(topology, schedule, topology.endpoints)
    routed = time.perf_counter()
    result = execute(topology, schedule, routes)
    done = time.perf_counter()
    bound = k**3 * m / (4 * bandwidth)
    return {"mesh": f"{k}x{k}", "flows": result.num_flows, "incidences": int(len(routes.path_links)),
            "events": result.events, "build_s": round(built - start, 3),
            "route_s": round(routed - built, 3), "simulate_s": round(done - routed, 3),
            "wall_s": round(done - start, 3),
            "peak_MiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "makespan_s": result.makespan, "bound_s": bound,
            "rel_err": abs(result.makespan - bound) / bound}


def main(sizes: list[int]) -> None:
    for k in sizes:
        out = subprocess.run([sys.executable, __file__, "--one", str(k)], capture_output=True,
                             text=True, check=True).stdout
        row = json.loads(out)
        print("  ".join(f"{key}={value}" for key, value in row.items()), flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        print(json.dumps(one(int(sys.argv[2]))))
    else:
        main([int(a) for a in sys.argv[1:]] or [8, 16, 32])
