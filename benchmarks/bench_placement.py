"""Placement: cost of scoring a map (one simulated step) and of the search, and the step
times per strategy on galaxy-wh.

For each case prints, per strategy: the step time, the flows and events of its simulation
and the wall time of that evaluation; then the search's simulations, cheap scores, wall
time and result against the best fixed strategy. Run:
``python benchmarks/bench_placement.py [--budget N] [--large]`` (``--large`` adds a TP 8 x
DP 16 step on a 16x8 mesh).
"""

from __future__ import annotations

import argparse
import time

from netsim.placement import (FIXED_STRATEGIES, ParallelLayout, Transformer,
                              applicable_strategies, bytes_workload, chain, place, tensix_grid)
from netsim.run.placements.evaluate import StepModel
from netsim.run.placements.noc import compare_chip_placements
from netsim.run.placements.search import search_placement
from netsim.topology import parse_topology
from netsim.units import format_time

MiB, GiB = 2 ** 20, 2 ** 30


def cases(large: bool):
    """(label, topology spec, layout, workload) of the benchmark."""
    lay = ParallelLayout(tp=8, dp=4)
    decode = Transformer(hidden=8192, kv_hidden=1024, layers=80, seq_len=1, micro_batch=32,
                         mode="decode").workload(lay)
    train = Transformer(hidden=8192, kv_hidden=1024, layers=80, seq_len=4096,
                        params=70e9).workload(lay, overlap=True)
    yield "decode 70B, galaxy-wh", "galaxy-wh", lay, decode, 8
    yield "bytes tp 32MiB + dp 1GiB, galaxy-wh", "galaxy-wh", lay, bytes_workload(
        tp_bytes=32 * MiB, dp_bytes=GiB), 8
    yield "train 70B overlapped, galaxy-wh", "galaxy-wh", lay, train, 2
    yield "train 70B overlapped, dgx-h100-cluster", "dgx-h100-cluster", lay, train, 2
    if large:
        big = ParallelLayout(tp=8, dp=16)
        yield "bytes tp 32MiB + dp 1GiB, mesh 16x8", \
            "mesh:16x8,bw=12.5GB/s,lat=711ns,links=4", big, bytes_workload(
                tp_bytes=32 * MiB, dp_bytes=GiB), 8


def bench_case(label, spec, layout, workload, max_copies, budget) -> None:
    topology = parse_topology(spec)
    model = StepModel(topology, layout, workload, max_copies=max_copies)
    print(f"\n{label}  ({layout.describe()}, {len(model.workload.phases)} phases)")
    print(f"  {'strategy':<14} {'step':>11} {'flows':>8} {'events':>8} {'wall s':>8}")
    seeds = {}
    for name in applicable_strategies(topology, layout, FIXED_STRATEGIES):
        t0 = time.perf_counter()
        score = model.evaluate(place(name, topology, layout), strategy=name)
        wall = time.perf_counter() - t0
        seeds[name] = score
        print(f"  {name:<14} {format_time(score.step_s):>11} {score.result.num_flows:>8,} "
              f"{score.result.events:>8,} {wall:>8.3f}")
    t0 = time.perf_counter()
    best, found = search_placement(model, seeds, budget=budget, seed=0)
    wall = time.perf_counter() - t0
    best_fixed = min(s.step_s for s in seeds.values())
    print(f"  search from {found.start}: {found.evaluations} simulations, "
          f"{found.cheap_scores} cheap scores, {wall:.2f} s; step {format_time(best.step_s)} "
          f"({100 * (best.step_s / best_fixed - 1):+.2f}% vs the best fixed map)")


def bench_noc(budget: int) -> None:
    ops = chain([("qkv", 2, 4, 2 * MiB), ("attn", 2, 4, 2 * MiB), ("proj", 2, 4, 2 * MiB),
                 ("ff1", 2, 8, 4 * MiB), ("ff2", 2, 8, 2 * MiB), ("out", 2, 4, 2 * MiB)])
    print("\nsix operators on the Wormhole Tensix grid (10x8), policy shortest")
    t0 = time.perf_counter()
    scores = compare_chip_placements(tensix_grid(), ops, budget=budget, seed=0)
    wall = time.perf_counter() - t0
    for s in scores:
        print(f"  {s.strategy:<14} {format_time(s.time_s):>11}  max link "
              f"{s.max_link_bytes / MiB:.2f} MiB  hop-bytes {s.hop_bytes / MiB:.0f} MiB")
    print(f"  (all strategies and a search of {budget} simulations: {wall:.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=50, help="simulations of each search")
    parser.add_argument("--large", action="store_true", help="add a 128-chip case")
    args = parser.parse_args()
    for case in cases(args.large):
        bench_case(*case, budget=args.budget)
    bench_noc(args.budget)


if __name__ == "__main__":
    main()
