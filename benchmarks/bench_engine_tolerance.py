"""Approximate mode (``tolerance``): speed-up against the error it costs, on issue 12's cases.

For each case and relative tolerance, prints events, wall time, the speed-up over the exact
run (tolerance 0), the makespan's relative error and the worst per-op finish-time error
relative to the exact makespan (for a size sweep: the worst relative error of a size's
time, and of its ops where the same algorithm won). Cases:

* ``lognormal8`` / ``lognormal12`` / ``lognormal16``: k x k mesh all-to-all, log-normal
  per-pair sizes around 1 MiB (sigma 1, seed 0), zero latency: one completion per event
  (``lognormal16`` takes about 3 min exact, so it is not in the default list);
* ``staggered16``: 16x16 mesh all-to-all, 1 MiB, 1 us per hop;
* ``flows16``: the same with zero latency (few events: nothing to merge);
* ``nvls``: dgx-h100 in-network all-reduce of 1 GiB, pipelined;
* ``nvl72``: gb200-nvl72 in-network all-reduce of 4 GB (what ``--algo auto`` picks);
* ``dgx``: dgx-h100 all-reduce ``--algo auto --sizes 1KiB:16GiB`` (with a tolerance,
  ``auto`` simulates every candidate: its lower-bound pruning is exact-only).

Everything runs in one process, after a warm-up run (numba's loading, about 0.3 s).

    python benchmarks/bench_engine_tolerance.py [CASE ...] [--tol 1e-6,1e-4,1e-3,1e-2]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from bench_engine_events import _mesh_alltoall

DEFAULT = ["lognormal8", "lognormal12", "staggered16", "flows16", "nvls", "nvl72", "dgx"]


def _case(name: str, tolerance: float) -> list:
    """The engine results of ``name`` run at ``tolerance``."""
    from netsim.run import run_collective, run_sweep

    if name.startswith("lognormal"):
        k = int(name[len("lognormal"):])
        return _mesh(lambda: _mesh_alltoall(k, lognormal=True, latency=0.0), tolerance)
    if name == "staggered16":
        return _mesh(lambda: _mesh_alltoall(16, lognormal=False, latency=1e-6), tolerance)
    if name == "flows16":
        return _mesh(lambda: _mesh_alltoall(16, lognormal=False, latency=0.0), tolerance)
    if name == "nvls":
        return [run_collective("allreduce", "dgx-h100", "innetwork", 2**30,
                               tolerance=tolerance).result]
    if name == "nvl72":
        return [run_collective("allreduce", "gb200-nvl72", "innetwork", 4e9,
                               tolerance=tolerance).result]
    if name == "dgx":
        return [run.result for run in run_sweep("allreduce", "dgx-h100", "auto",
                                                 "1KiB:16GiB", tolerance=tolerance)]
    raise SystemExit(f"unknown case {name!r}; one of {', '.join(DEFAULT)}, lognormal16")


def _mesh(run, tolerance: float) -> list:
    """Run with every engine call at ``tolerance`` (the mesh cases call execute directly)."""
    import netsim.engine as engine

    original = engine.execute

    def execute(*args, **kwargs):
        kwargs.setdefault("tolerance", tolerance)
        return original(*args, **kwargs)

    engine.execute = execute
    try:
        return run()
    finally:
        engine.execute = original


def _timed(name: str, tolerance: float):
    start = time.perf_counter()
    results = _case(name, tolerance)
    return results, time.perf_counter() - start


def _errors(exact: list, approx: list) -> tuple[float, float]:
    """(worst relative error of a run's makespan, worst op finish error relative to its
    run's exact makespan, over the runs where the schedules are the same)."""
    span, ops = 0.0, 0.0
    for e, a in zip(exact, approx):
        span = max(span, abs(a.makespan - e.makespan) / e.makespan)
        if a.op_finish.shape == e.op_finish.shape:
            ops = max(ops, float(np.nanmax(np.abs(a.op_finish - e.op_finish))) / e.makespan)
    return span, ops


def main(argv: list[str]) -> None:
    tols = [1e-6, 1e-4, 1e-3, 1e-2]
    if "--tol" in argv:
        tols = [float(x) for x in argv[argv.index("--tol") + 1].split(",")]
        argv = [a for a in argv if a != argv[argv.index("--tol") + 1]]
    names = [a for a in argv if not a.startswith("--")] or DEFAULT
    _case("lognormal8", 0.0)            # warm-up: numba's loading is not any case's
    for name in names:
        exact, wall0 = _timed(name, 0.0)
        wall0 = min(wall0, _timed(name, 0.0)[1])    # the first run may fill caches
        print(f"{name}: exact runs={len(exact)} events={sum(r.events for r in exact)} "
              f"wall_s={wall0:.2f} makespan_s={max(r.makespan for r in exact):.6g}",
              flush=True)
        for tol in tols:
            approx, wall = _timed(name, tol)
            span, ops = _errors(exact, approx)
            print(f"  tolerance={tol:g} events={sum(r.events for r in approx)} "
                  f"wall_s={wall:.2f} speedup={wall0 / wall:.2f}x makespan_err={span:.2e} "
                  f"worst_op_err={ops:.2e}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
