"""The compiled event loops against each other on one log-normal all-to-all.

Runs a k x k mesh all-to-all (1 GB/s links, zero latency, XY routing; per-pair sizes
log-normal around 100 kB, sigma 1, whole bytes, numpy seed SEED) with engine.classes
(rate classes) and engine.kernel (a full re-solve at every event, whose arithmetic follows
the reference's), each forced on from the first event, and prints per loop its wall time,
its events and the largest difference of its per-op finish times from the first loop's,
relative to the makespan.

    python benchmarks/compare_loops.py K SEED

On 16x16, seed 1: classes 20.4 s, kernel 433 s, with 65,246 events each, agreeing to
4.6e-14 (14x14, seed 1: 6.0e-14). engine.incremental, the same refill flow by flow
(removed since), took 137-170 s there; before its checks judged saturation relative to
the level (``_SLACK``) it differed by 9.4e-6, with 65,245 events.
"""

from __future__ import annotations

import sys
import time

import numpy as np


def case(k: int, seed: int):
    from netsim.schedule import sends_from_arrays
    from netsim.topology import mesh

    n = k * k
    src, dst = np.divmod(np.arange(n * n), n)
    src, dst = src[src != dst], dst[src != dst]
    nbytes = np.rint(np.random.default_rng(seed).lognormal(np.log(1e5), 1.0, src.size))
    return mesh((k, k), bandwidth=1e9, latency=0.0), sends_from_arrays(n, src, dst, nbytes,
                                                                      tag="a2a")


def main(argv: list[str]) -> None:
    from netsim.engine import EngineConfig, simulate

    k, seed = int(argv[0]), int(argv[1])
    topo, schedule = case(k, seed)
    loops = ["classes", "kernel"]
    first = None
    for name in loops:
        start = time.perf_counter()
        result = simulate(topo, schedule, config=EngineConfig(loop=name, symmetry=False))
        wall = time.perf_counter() - start
        if first is None:
            first = result
        diff = float(np.max(np.abs(result.op_finish - first.op_finish)) / first.makespan)
        print(f"loop={name}  flows={result.num_flows}  events={result.events}  "
              f"wall_s={wall:.2f}  makespan_s={result.makespan:.9g}  max_rel_diff={diff:.3g}",
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
