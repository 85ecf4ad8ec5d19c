"""Ring all-reduce on thousands of ranks as block schedules: one send per step.

A ring's 2(n-1) steps are the same n sends; when one step's sends are one symmetry class
(every hop one link of the same capacity: the default embedding on a torus), the engine
runs one send per step (netsim.engine.blocks) and never builds the full schedule. Each case
runs in its own process (peak RSS is its own), once as blocks (the default) and, where it
fits, once on the full build (the algorithm without its block form), and prints both:

    python benchmarks/bench_ring_blocks.py [--tori 32x32,64x64,128x128] [--size 1GiB]
        [--full-up-to 4096]

Columns: ranks, sends, events, wall s and peak RSS of each way, and whether the records
(time, busbw, events, flows, max link utilisation) are identical.

benchmarks/RESULTS.md keeps measured figures.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def one_case(spec: str, size: str, full: bool) -> dict:
    from dataclasses import replace

    from netsim.algorithms.registry import get_algorithm
    from netsim.run import run_collective

    algo = get_algorithm("allreduce", "ring")
    if full:
        algo = replace(algo, blocks=None)
    start = time.perf_counter()
    run = run_collective("allreduce", spec, algo, size)
    wall = time.perf_counter() - start
    record = run.record()
    return {"wall": wall, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "record": {k: record[k] for k in ("time_s", "busbw_GBps", "events", "flows",
                                              "max_link_util", "ranks")}}


def _child(spec: str, size: str, full: bool) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", spec, size, str(int(full))],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tori", default="32x32,64x64,128x128")
    parser.add_argument("--size", default="1GiB")
    parser.add_argument("--full-up-to", type=int, default=4096,
                        help="run the full build too up to this many ranks")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        spec, size, full = args.child
        print(json.dumps(one_case(spec, size, bool(int(full)))))
        return
    print(f"{'topology':14} {'ranks':>6} {'sends':>12} {'events':>7} {'blocks s':>9} "
          f"{'blocks MB':>10} {'full s':>7} {'full MB':>8} same")
    for dims in args.tori.split(","):
        spec = f"torus:{dims}"
        fast = _child(spec, args.size, False)
        rec = fast["record"]
        line = (f"{spec:14} {rec['ranks']:6d} {rec['flows']:12,d} {rec['events']:7d} "
                f"{fast['wall']:9.1f} {fast['rss_mb']:10.0f}")
        if rec["ranks"] <= args.full_up_to:
            full = _child(spec, args.size, True)
            same = "yes" if full["record"] == rec else f"NO: {full['record']}"
            line += f" {full['wall']:7.1f} {full['rss_mb']:8.0f} {same}"
        else:
            line += f" {'-':>7} {'-':>8} -"
        print(line, flush=True)


if __name__ == "__main__":
    main()
