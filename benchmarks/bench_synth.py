"""Synthesised collectives against their targets (1 GiB unless said).

Each case runs ``netsim.run.run_synth`` as ``netsim coll --algo synth`` does: synthesised
schedules for 1, 2, 4, 8 chunks per rank (and, with a reduction rate gamma, reductions in
waves) within the time budget, every fixed algorithm, the faster kept. Printed per case:
the synthesised time, busbw, the bound it is measured against and the achieved fraction
(bound / synthesised time), the best fixed algorithm and its time, the chunks (c),
waves (w) and reduction balance (b) chosen, the wall time of one synthesis of that
shape (build only, no simulation) and of the whole search (a search runs at least one
simulation, even past the budget), and whether the target is met. Machine presets run
with their calibration (alpha, gamma), as every command does.

    python benchmarks/bench_synth.py [--only torus] [--budget 10] [--seeds 1]
"""

from __future__ import annotations

import argparse
import random
import time

from netsim.algorithms import AlgoOptions, build_schedule
from netsim.algorithms.bounds import all_bounds
from netsim.run import run_synth
from netsim.topology import parse_topology
from netsim.topology.calibration import calibrated_alpha, calibrated_gamma
from netsim.topology.model import TopologyBuilder

SIZE = 2**30


def random_graph(n: int, seed: int, bandwidth: float = 50e9):
    """A connected random graph of n chips, every degree 3 to 5: a random 3-regular graph
    plus random cables between chips of degree < 5."""
    import networkx as nx

    rng = random.Random(seed)
    while True:
        g = nx.random_regular_graph(3, n, seed=rng.randrange(1 << 30))
        for _ in range(n):
            a, b = rng.sample(range(n), 2)
            if not g.has_edge(a, b) and g.degree(a) < 5 and g.degree(b) < 5:
                g.add_edge(a, b)
        if nx.is_connected(g):
            break
    builder = TopologyBuilder(f"random{n}-seed{seed}")
    for i in range(n):
        builder.add_node(f"c{i}")
    for a, b in g.edges():
        builder.add_cable(a, b, bandwidth)
    return builder.build()


# (label, machine, op, ranks, target kind, target value)
#   busbw: busbw >= value GB/s; injection: >= value of the injection bound;
#   tighter: >= value of max(injection, bisection); bound: >= value of the best bound.
CASES = [
    ("torus:4x4,bw=50GB/s", "torus:4x4,bw=50GB/s", "allreduce", None, "busbw", 190.0),
    ("torus:4x4x4", "torus:4x4x4", "allgather", None, "injection", 0.95),
    ("mesh:8x8", "mesh:8x8", "allreduce", None, "tighter", 0.90),
    ("mesh:8x8", "mesh:8x8", "allgather", None, "tighter", 0.90),
    ("galaxy-wh", "galaxy-wh", "allgather", 32, "bound", 0.90),
    ("galaxy-wh", "galaxy-wh", "allreduce", 32, "bound", 0.90),
    ("fattree:k=8", "fattree:k=8", "allgather", None, "bound", 0.95),
    ("random24 seed 0", ("random", 0), "allgather", None, "bound", 0.80),
    ("random24 seed 0", ("random", 0), "allreduce", None, "bound", 0.80),
    ("random24 seed 1", ("random", 1), "allgather", None, "bound", 0.80),
    ("random24 seed 1", ("random", 1), "allreduce", None, "bound", 0.80),
]


def _machine(spec):
    if isinstance(spec, tuple):
        return random_graph(24, spec[1])
    return parse_topology(spec)


def _reference(kind: str, op: str, topo, n: int, run) -> tuple[str, float]:
    """(name, seconds) of the bound the target is stated against."""
    bounds = {b.name: b.seconds for b in all_bounds(op, topo, SIZE, n, alpha=0.0)}
    if kind == "injection":
        return "injection", bounds["injection"]
    if kind == "tighter":
        name = max(("injection", "bisection"), key=lambda k: bounds.get(k, 0.0))
        return name, bounds[name]
    return run.machine_bound_name, run.machine_bound_s


def _synthesis_time(op: str, topo, n: int, chunks: int, waves: int = 1,
                    balance: float = 0.0) -> float:
    """Wall time of one synthesis at ``chunks``, as runs do it: without the symbolic data
    the verifier reads (the tests verify), no simulation."""
    options = AlgoOptions(topology=topo, chunks=chunks, gamma=calibrated_gamma(topo),
                          extra={"alpha": calibrated_alpha(topo), "annotate": False,
                                 "waves": waves, "balance": balance})
    start = time.perf_counter()
    build_schedule(op, "synth", n, SIZE, options)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="Run the cases whose label contains this.")
    parser.add_argument("--budget", type=float, default=10.0, help="Search budget per case, s.")
    parser.add_argument("--seeds", type=int, default=1, help="Seeds per depth.")
    args = parser.parse_args()
    header = (f"{'case':<22} {'op':<10} {'n':>4} {'synth':>9} {'busbw':>7} {'bound':>16} "
              f"{'achieved':>8} {'best fixed':>22} {'c':>2} {'w':>2} {'b':>3} {'build':>7} "
              f"{'search':>7}  target")
    print(header)
    print("-" * len(header))
    for label, spec, op, ranks, kind, value in CASES:
        if args.only and args.only not in label:
            continue
        topo = _machine(spec)
        run = run_synth(op, topo, SIZE, ranks=ranks, seeds=args.seeds, budget_s=args.budget)
        n = run.ranks
        ref_name, ref_s = _reference(kind, op, topo, n, run)
        achieved = ref_s / run.synth_s
        build_s = _synthesis_time(op, topo, n, run.synth_chunks, run.synth_waves,
                                  run.synth_balance)
        busbw = run.busbw_GBps * run.time_s / run.synth_s      # the synthesised run's busbw
        if kind == "busbw":
            met, target = busbw >= value, f"busbw >= {value:g} GB/s"
        else:
            met, target = achieved >= value, f">= {value:.0%} of {ref_name}"
        extra = ""
        if label.startswith("galaxy"):
            others = {k: run.candidates[k] for k in ("tt_ring", "dimensionwise")
                      if k in run.candidates}
            faster = all(run.synth_s < t for t in others.values())
            met = met and faster
            extra = " and faster than " + ", ".join(f"{k} {t * 1e3:.2f}ms"
                                                    for k, t in others.items())
        fixed = f"{run.best_fixed} {run.best_fixed_s * 1e3:.2f}ms"
        print(f"{label:<22} {op:<10} {n:>4} {run.synth_s * 1e3:>7.2f}ms {busbw:>7.1f} "
              f"{ref_name:>9} {ref_s * 1e3:>4.2f}ms {achieved:>8.1%} {fixed:>22} "
              f"{run.synth_chunks:>2} {run.synth_waves:>2} {run.synth_balance:>3.1f} "
              f"{build_s:>6.2f}s {run.synthesis_s:>6.1f}s  "
              f"{'MET' if met else 'NOT MET'}: {target}{extra}"
              f"{' (fallback: fixed faster)' if run.fallback else ''}", flush=True)
    # Synthesis time target: 64 ranks, one synthesis at 4 chunks per rank (build only).
    for spec, op in (("torus:4x4x4", "allreduce"), ("mesh:8x8", "allreduce"),
                     ("torus:4x4x4", "allgather")):
        if args.only and args.only not in spec:
            continue
        topo = parse_topology(spec)
        for chunks in (4, 8):
            seconds = _synthesis_time(op, topo, 64, chunks)
            print(f"synthesis time {spec} {op} 64 ranks, {chunks} chunks/rank "
                  f"({64 * chunks * 63 * (2 if op == 'allreduce' else 1)} sends): "
                  f"{seconds:.2f}s  {'MET' if seconds <= 10 else 'NOT MET'}: <= 10 s")


if __name__ == "__main__":
    main()
