"""How fast the collective algorithms build their schedules (no simulation).

Target: ring all-reduce on 1024 ranks, 2 x 1023 x 1024 = 2,095,104 sends,
built in a couple of seconds. Prints, per case, ops, sends, dependency edges, the best
of ``--repeat`` build times and sends per second. Annotation (symbolic ``data``) is off
above 64 ranks, as by default.

    python benchmarks/bench_algorithms_build.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

CASES = [
    ("allreduce", "ring", 1024, {}),
    ("allreduce", "ring", 1024, {"chunks": 4}),
    ("allreduce", "bidir_ring", 1024, {}),
    ("allreduce", "halving_doubling", 1000, {}),
    ("allreduce", "dbtree", 1024, {"chunks": 8}),
    ("allreduce", "direct", 1024, {}),
    ("allreduce", "dimensionwise", 1024, {"grid": (32, 32)}),
    ("allreduce", "hierarchical", 1024, {"groups": 128}),
    ("allgather", "bruck", 1024, {}),
    ("alltoall", "pairwise", 1024, {}),
    ("alltoall", "bruck", 1024, {}),
    ("alltoall", "dimensionwise", 1024, {"grid": (32, 32)}),
    ("broadcast", "chain", 1024, {"chunks": 16}),
]


def options_for(ranks: int, knobs: dict):
    from netsim.algorithms import AlgoOptions
    from netsim.topology import torus

    knobs = dict(knobs)
    if "grid" in knobs:
        knobs["topology"] = torus(knobs.pop("grid"))
    if "groups" in knobs:
        count = knobs.pop("groups")
        size = ranks // count
        knobs["groups"] = tuple(tuple(range(g * size, (g + 1) * size)) for g in range(count))
    return AlgoOptions(**knobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from netsim.algorithms import build_schedule

    print(f"{'case':44} {'ops':>10} {'sends':>10} {'deps':>10} {'build s':>8} {'Msend/s':>8}")
    for op, name, ranks, knobs in CASES:
        options = options_for(ranks, knobs)
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            schedule = build_schedule(op, name, ranks, 1e9, options)
            best = min(best, time.perf_counter() - start)
        shown = ",".join(f"{k}={v}" for k, v in knobs.items())
        label = f"{op} {name} p={ranks} {shown}".strip()
        print(f"{label:44} {schedule.num_ops:>10,} {schedule.num_sends:>10,} "
              f"{schedule.dep_idx.size:>10,} {best:>8.3f} {schedule.num_sends / best / 1e6:>8.2f}")


if __name__ == "__main__":
    main()
