"""Benchmark: whole collectives at scale through run_collective (build + route + simulate + bound).

Cases (target: each under 10 s of wall time on 2 cores):

* ring all-reduce, 1024 ranks on a 32x32 torus, 64 MiB (links without latency, and
  1 us per link with the snake order, whose ring hops are all one link);
* direct all-to-all, 256 ranks on a 16x16 mesh, 64 MiB per rank's send buffer (links
  without latency, and 1 us per link).

Prints per case the wall time of the whole run and of its parts (schedule build, lower
bound), the events and flows of the simulation, the simulated time and the efficiency.
``--profile`` adds the top functions by cumulative time (cProfile).

    python benchmarks/bench_collectives.py [--profile] [--case ring|ring-lat|direct|direct-lat]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

from netsim.algorithms import AlgoOptions, get_algorithm
from netsim.algorithms.bounds import lower_bound
from netsim.run.collective import run_collective
from netsim.topology import parse_topology

# name -> (op, algorithm, topology, size, rank order). Zero link latency keeps every step of
# a collective in lock-step (few events); 1 us per hop staggers flows by path length, which
# multiplies the events (each a full max-min re-solve), hence both variants.
CASES = {
    "ring": ("allreduce", "ring", "torus:32x32,bw=50GB/s", "64MiB", "natural"),
    "ring-lat": ("allreduce", "ring", "torus:32x32,bw=50GB/s,lat=1us", "64MiB", "snake"),
    "direct": ("alltoall", "direct", "mesh:16x16,bw=50GB/s", "64MiB", "natural"),
    "direct-lat": ("alltoall", "direct", "mesh:16x16,bw=50GB/s,lat=1us", "64MiB", "natural"),
}
TARGET_S = 10.0


def _timed(fn, *args, **kwargs):
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - start


def bench(case: str, profile: bool) -> None:
    op, algo, spec, size, order = CASES[case]
    topo = parse_topology(spec)
    n = topo.num_endpoints
    options = AlgoOptions(order=order)
    schedule, build_s = _timed(get_algorithm(op, algo).build, n, float(2**26),
                               AlgoOptions(topology=topo, order=order))
    _, bound_s = _timed(lower_bound, op, topo, float(2**26), n)
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    run, wall = _timed(run_collective, op, topo, algo, size, options=options)
    if profiler:
        profiler.disable()
    verdict = "ok" if wall < TARGET_S else f"MISSED the {TARGET_S:.0f} s target"
    print(f"[{case}] {op} {algo} ({order} order) on {spec} ({n} ranks, {size}): "
          f"wall {wall:.2f} s [{verdict}] "
          f"(build {build_s:.2f} s, bound {bound_s:.3f} s), {run.events} events, "
          f"{run.flows} flows, {schedule.num_ops} ops; simulated {run.time_s * 1e3:.3f} ms, "
          f"busbw {run.busbw_GBps:.2f} GB/s, efficiency {run.efficiency:.3f} "
          f"({run.bound_name})")
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    parser.add_argument("--profile", action="store_true", help="print the top functions")
    args = parser.parse_args()
    for case in args.case or list(CASES):
        bench(case, args.profile)


if __name__ == "__main__":
    main()
