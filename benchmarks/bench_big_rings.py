"""Where time and memory go in a big ring all-reduce.

Ring all-reduce of ``--size`` on every endpoint of each torus, one case per child process
(so peak RSS is the case's own). Prints ranks, sends, flows (sub-flows), path incidences,
events, the seconds of each phase -- schedule build, routing, the engine's symmetry search
(timed on its own, outside the run), the whole engine run (which includes that search) --
peak RSS, and the bytes the case kept per send (peak RSS above the interpreter's baseline,
divided by sends): the figure behind ``netsim.budget.BYTES_PER_SEND``.

    python benchmarks/bench_big_rings.py [--tori 32x32,32x64] [--size 1GiB] [--no-engine]
        [--order auto] [--family torus]

benchmarks/RESULTS.md keeps measured figures.

``--no-engine`` stops after routing (schedule + routes only: what the build path costs).
``--family mesh --order natural`` makes the row ends cross a whole row (about 2 links per
send on 32 columns): with the torus runs, what an extra path incidence costs.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def _rss_bytes() -> int:
    """Current resident set size of this process (bytes)."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        import os

        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def one_case(spec: str, size: float, engine: bool, order: str = "auto") -> dict:
    """Run one case in this process; return its figures."""
    import numpy as np

    from netsim.algorithms import AlgoOptions, build_schedule
    from netsim.engine import route_schedule
    from netsim.topology import parse_topology
    from engine_stages import timed_engine

    topo = parse_topology(spec)
    nodes = topo.first_endpoints(topo.num_endpoints)
    options = AlgoOptions(topology=topo, placement=nodes, order=order)
    base = _rss_bytes()
    out: dict = {"topology": spec, "ranks": int(nodes.size)}
    t = time.perf_counter()
    schedule = build_schedule("allreduce", "ring", nodes.size, size, options)
    out["build_s"] = time.perf_counter() - t
    out["sends"] = schedule.num_sends
    out["ops"] = schedule.num_ops
    out["deps"] = int(schedule.dep_idx.size)
    t = time.perf_counter()
    routes = route_schedule(topo, schedule, np.asarray(nodes))
    out["route_s"] = time.perf_counter() - t
    out["flows"] = int(routes.num_subflows)
    out["incidences"] = int(routes.nnz)
    out["hops"] = routes.nnz / max(out["flows"], 1)
    out["rss_routed"] = _rss_bytes() - base
    if engine:
        out.update(timed_engine(topo, schedule, routes))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["peak_rss"] = peak
    out["bytes_per_send"] = (peak - base) / max(out["sends"], 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tori", default="32x32,32x64", help="comma-separated RxC tori")
    parser.add_argument("--size", default="1GiB")
    parser.add_argument("--no-engine", action="store_true", help="stop after routing")
    parser.add_argument("--order", default="auto", help="rank order of the ring")
    parser.add_argument("--family", default="torus", help="grid family: torus or mesh")
    parser.add_argument("--one", help=argparse.SUPPRESS)       # child: run one case
    args = parser.parse_args()
    from netsim.units import parse_size

    size = parse_size(args.size, "size")
    if args.one:
        print(json.dumps(one_case(args.one, size, not args.no_engine, args.order)))
        return
    head = (f"{'topology':>14} {'ranks':>6} {'sends':>10} {'flows':>10} {'incid':>10} "
            f"{'events':>7} {'build s':>8} {'route s':>8} {'sym s':>7} {'sim s':>8} "
            f"{'wall s':>7} {'peak MB':>8} {'B/send':>7} {'hops':>5}")
    print(head)
    for spec in args.tori.split(","):
        cmd = [sys.executable, __file__, "--one", f"{args.family}:{spec}", "--size", args.size,
               "--order", args.order]
        cmd += ["--no-engine"] if args.no_engine else []
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if done.returncode:
            print(f"{args.family}:{spec}: failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])

        def f(key, fmt):
            return format(r[key], fmt) if r.get(key) is not None else "-"
        print(f"{r['topology']:>14} {r['ranks']:>6} {r['sends']:>10} {r['flows']:>10} "
              f"{r['incidences']:>10} {f('events', '>7')} {r['build_s']:>8.2f} "
              f"{r['route_s']:>8.2f} {f('symmetry_s', '>7.2f')} {f('engine_s', '>8.2f')} "
              f"{wall:>7.1f} {r['peak_rss'] / 2**20:>8.0f} {r['bytes_per_send']:>7.0f} {r['hops']:>5.2f}")


if __name__ == "__main__":
    main()
