"""Where time and memory go in NVLS all-reduce on a GB200 NVL72.

In-network all-reduce (``--algo innetwork``) on the 72 GPUs and 18 NVSwitch planes of
``gb200-nvl72`` at each ``--sizes`` entry, one case per child process (so peak RSS is the
case's own), built two ways: ``all18``, every plane, and ``2of18``, two of the 18 alike
planes, as ``netsim coll`` does (netsim.algorithms.innetwork_planes: the runner checks that
the planes map link by link, simulates two and expands the result to all 18).
Then ``netsim coll allreduce --algo auto`` end to end at ``--auto`` size. Prints ops, sub-flows,
symmetry classes, events, the seconds of each phase -- schedule build, the planes check,
routing, the engine's symmetry search (timed on its own, outside the run), the whole engine
run (which includes that search again), the expansion to 18 planes -- wall, peak RSS and the
makespan.

    python benchmarks/bench_nvl72.py [--sizes 16MiB,256MiB,4GB] [--auto 4GB] [--no-auto]
        [--no-engine] [--no-full]

benchmarks/RESULTS.md keeps measured figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace


def one_case(size: float, engine: bool = True, planes: bool = True) -> dict:
    """Run innetwork all-reduce of ``size`` bytes in this process; return its figures
    (without ``engine``, only the build and routing ones). ``planes``: build two of the
    18 alike planes, check them (``check_s``: netsim.algorithms.innetwork_planes.plane_map)
    and expand the result to all 18 (``expand_s``), as ``netsim coll`` does; else all 18."""
    import numpy as np

    from netsim.algorithms import AlgoOptions, build_schedule
    from netsim.algorithms.innetwork_planes import expand_result, plane_map
    from netsim.engine import execute, route_schedule
    from netsim.engine.symmetry import find_classes
    from netsim.topology import parse_topology
    from netsim.topology.calibration import calibrated_alpha, calibrated_gamma

    topo = parse_topology("gb200-nvl72")
    nodes = topo.first_endpoints(topo.num_endpoints)
    options = AlgoOptions(topology=topo, placement=nodes, gamma=calibrated_gamma(topo),
                          extra={"annotate": False, "planes": planes})
    out: dict = {"size": size, "planes": planes}
    t = time.perf_counter()
    schedule = build_schedule("allreduce", "innetwork", nodes.size, size, options)
    out["build_s"] = time.perf_counter() - t
    out["ops"], out["sends"] = schedule.num_ops, schedule.num_sends
    out["built"] = len(schedule.extra_nodes)
    pm = None
    if planes:
        t = time.perf_counter()
        pm = plane_map(topo, schedule, nodes)
        out["check_s"] = time.perf_counter() - t
        if pm is None:
            raise SystemExit("the planes were not found alike")
    placement = np.concatenate([nodes, np.asarray(schedule.extra_nodes, np.int64)])
    t = time.perf_counter()
    routes = route_schedule(topo, schedule, placement)
    out["route_s"] = time.perf_counter() - t
    out["flows"], out["incidences"] = int(routes.num_subflows), int(routes.nnz)
    out["peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if not engine:
        return out
    t = time.perf_counter()
    classes = find_classes(schedule, routes, topo.bandwidth)
    out["symmetry_s"] = time.perf_counter() - t
    out["classes"] = None if classes is None else int(classes.sub.max()) + 1
    del classes
    t = time.perf_counter()
    result = execute(topo, schedule, routes, overhead=calibrated_alpha(topo))
    out["engine_s"] = time.perf_counter() - t
    if pm is not None:
        t = time.perf_counter()
        result = expand_result(result, pm, nodes)
        out["expand_s"] = time.perf_counter() - t
    out.update(events=int(result.events), makespan_s=float(result.makespan),
               all_flows=int(result.num_flows))
    out["peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return out


def _child(args: list[str]) -> tuple[dict | None, float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        return None, wall, (done.stderr.strip().splitlines() or ["?"])[-1]
    return done, wall, ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16MiB,256MiB,4GB")
    parser.add_argument("--auto", default="4GB", help="size of the --algo auto run")
    parser.add_argument("--no-auto", action="store_true")
    parser.add_argument("--no-engine", action="store_true", help="stop after routing")
    parser.add_argument("--no-full", action="store_true",
                        help="only the planes path (not all 18 planes built: 'before')")
    parser.add_argument("--one", help=argparse.SUPPRESS)       # child: run one case
    parser.add_argument("--full", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from netsim.units import parse_size

    if args.one:
        print(json.dumps(one_case(parse_size(args.one, "size"), not args.no_engine,
                                  planes=not args.full)))
        return
    print(f"{'size':>8} {'path':>6} {'ops':>10} {'flows':>10} {'classes':>8} {'events':>7} "
          f"{'build s':>8} {'check s':>7} {'route s':>8} {'sym s':>7} {'engine s':>8} "
          f"{'expand s':>8} {'wall s':>7} {'peak MB':>8} {'makespan s':>14}")
    for size in args.sizes.split(","):
        for full in ([] if args.no_full else [True]) + [False]:
            done, wall, err = _child([__file__, "--one", size]
                                     + (["--no-engine"] if args.no_engine else [])
                                     + (["--full"] if full else []))
            if done is None:
                print(f"{size:>8}: failed: {err}")
                continue
            r = {"classes": None, "events": "-", "symmetry_s": float("nan"),
                 "engine_s": float("nan"), "makespan_s": float("nan"),
                 "check_s": float("nan"), "expand_s": float("nan"),
                 **json.loads(done.stdout.strip().splitlines()[-1])}
            path = "all18" if full else f"{r['built']}of18"
            print(f"{size:>8} {path:>6} {r['ops']:>10,} {r['flows']:>10,} "
                  f"{r['classes'] or '-':>8} {r['events']:>7} "
                  f"{r['build_s']:>8.2f} {r['check_s']:>7.2f} {r['route_s']:>8.2f} "
                  f"{r['symmetry_s']:>7.2f} {r['engine_s']:>8.2f} {r['expand_s']:>8.2f} "
                  f"{wall:>7.1f} {r['peak_rss'] / 2**20:>8.0f} {r['makespan_s']:>14.9g}",
                  flush=True)
    if not args.no_auto:
        cmd = ["-m", "netsim", "coll", "allreduce", "--topo", "gb200-nvl72", "--algo", "auto",
               "--size", args.auto, "--format", "json"]
        start = time.perf_counter()
        with tempfile.TemporaryFile("w+") as out_f, tempfile.TemporaryFile("w+") as err_f:
            child = subprocess.Popen([sys.executable, *cmd], stdout=out_f, stderr=err_f)
            _, status_word, usage = os.wait4(child.pid, 0)   # this child's own rusage
            out_f.seek(0), err_f.seek(0)
            out, err = out_f.read(), err_f.read()
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status_word)
        cpu = f"{usage.ru_utime:.1f} s user, {usage.ru_stime:.1f} s sys"
        peak = f"{usage.ru_maxrss / 1024:.0f} MB peak RSS"
        status = "ok" if code == 0 else f"failed: {err.strip()[-200:]}"
        print(f"netsim coll allreduce --topo gb200-nvl72 --algo auto --size {args.auto}: "
              f"{wall:.1f} s wall, {cpu}, {peak}, {status}")
        if code == 0:
            try:
                rec = json.loads(out)["records"][0]
                print(f"  picked {rec.get('algorithm')}, time {rec.get('time_s')} s, "
                      f"candidates {rec.get('candidates')}")
            except (ValueError, KeyError, IndexError):
                pass


if __name__ == "__main__":
    main()
