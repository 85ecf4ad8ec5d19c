"""Approximate mode (``tolerance``): speed-up against the error it costs.

For each case and relative tolerance, prints events, wall time, the speed-up over the exact
run (tolerance 0), the makespan's relative error and the worst per-op finish-time error
relative to the exact makespan. Cases: ``lognormal8`` (8x8 mesh all-to-all, log-normal
per-pair sizes around 1 MiB, sigma 1, seed 0, zero latency: one completion per event),
``staggered16`` (16x16 mesh all-to-all, 1 MiB, 1 us per hop) and ``nvls`` (dgx-h100
in-network all-reduce of 1 GiB, pipelined).

    python benchmarks/bench_engine_tolerance.py [CASE ...] [--tol 1e-6,1e-4,1e-3,1e-2]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from bench_engine_events import _mesh_alltoall


def _case(name: str, tolerance: float):
    from netsim.engine import executor

    if name == "lognormal8":
        return _with_tolerance(lambda: _mesh_alltoall(8, lognormal=True, latency=0.0)[0],
                               tolerance)
    if name == "staggered16":
        return _with_tolerance(lambda: _mesh_alltoall(16, lognormal=False, latency=1e-6)[0],
                               tolerance)
    if name == "nvls":
        from netsim.run import run_collective
        return _with_tolerance(lambda: run_collective("allreduce", "dgx-h100", "innetwork",
                                                      2**30).result, tolerance)
    raise SystemExit(f"unknown case {name!r}")


def _with_tolerance(run, tolerance: float):
    """Run with every engine call at ``tolerance`` (the runners do not take it yet)."""
    from netsim.engine import executor

    original = executor.execute

    def execute(*args, **kwargs):
        kwargs.setdefault("tolerance", tolerance)
        return original(*args, **kwargs)

    import netsim.engine as engine
    saved = engine.execute
    engine.execute = execute
    try:
        start = time.perf_counter()
        result = run()
        return result, time.perf_counter() - start
    finally:
        engine.execute = saved


def main(argv: list[str]) -> None:
    tols = [1e-6, 1e-4, 1e-3, 1e-2]
    if "--tol" in argv:
        tols = [float(x) for x in argv[argv.index("--tol") + 1].split(",")]
    names = [a for a in argv if not a.startswith("--") and not a[0].isdigit()] or \
        ["lognormal8", "staggered16", "nvls"]
    for name in names:
        exact, wall0 = _case(name, 0.0)
        print(f"{name}: exact events={exact.events} wall_s={wall0:.2f} "
              f"makespan_s={exact.makespan:.6g}", flush=True)
        for tol in tols:
            approx, wall = _case(name, tol)
            err = abs(approx.makespan - exact.makespan) / exact.makespan
            worst = float(np.nanmax(np.abs(approx.op_finish - exact.op_finish))) / exact.makespan
            print(f"  tolerance={tol:g} events={approx.events} wall_s={wall:.2f} "
                  f"speedup={wall0 / wall:.2f}x makespan_err={err:.2e} "
                  f"worst_op_err={worst:.2e}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
