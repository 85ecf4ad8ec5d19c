"""Issue 12's event-heavy cases: runs where nearly every flow ends at its own time.

Cases (select by name; default: all but the slowest):

* ``lognormal8`` / ``lognormal12`` / ``lognormal16``: k x k mesh (50 GB/s, zero latency, XY
  routing), all-to-all with per-pair sizes log-normal around 1 MiB (sigma 1, numpy seed 0,
  whole bytes), so every flow finishes at its own time.
* ``staggered16``: 16x16 mesh all-to-all, 1 MiB per pair, 1 us per hop, so flows join the
  sharing at staggered times.
* ``flows16`` / ``flows32``: the same with zero latency (65,280 and 1,047,552 flows; few
  events); the whole ``netsim flows`` path of the 16x16 one is bench_flowfile_io.py's.
* ``nvl72``: ``netsim coll allreduce --topo gb200-nvl72 --algo auto --size 4GB``.
* ``dgx``: ``netsim coll allreduce --topo dgx-h100 --algo auto --sizes 1KiB:16GiB``.
* ``fattree_ring``: ``netsim coll allreduce --topo fattree:k=16 --algo ring --size 256MiB``:
  1,024 ranks, 2,095,104 sends over 2,047 steps; ECMP by hash spreads the sends that
  leave an edge switch, so no two steps are alike and no symmetry class forms.
* ``faults12``: ``lognormal12`` with the link 0_0->1_0 failed at 100 us (the flows on it
  rerouted, the compiled loop stopped before the fault and taken over again after it).
* ``faults_dgx``: ``netsim coll allreduce --topo dgx-h100-cluster:nodes=4 --size 64MiB
  --fail-link 'n0.gpu0->n0.sw0@100us'``: 172,032 flows, every op run (a fault breaks the
  symmetry).

Each case runs in a fresh process, so its peak memory (max RSS) is its own, and prints
flows, events, solver passes (calls of the max-min solver), wall time, peak memory (and
per flow: the process's peak over the flows simulated) and the makespan. ``--reference`` also runs each case with the reference engine (a cold
``max_min_rates_csr`` over every draining flow at every event, no fast paths) and prints
its wall time and the largest relative difference of the per-op finish times;
``--kernel`` also runs it with engine.kernel's loop where the incremental one
(engine.classes) would take over (``EngineConfig(incremental_min_subflows=None)``);
``--no-symmetry`` also runs each case with symmetry classes off (engine.symmetry), every
flow simulated (warm start kept); ``--numpy`` also runs it with the numpy event loop only
(no hand-over to the compiled loop of engine.kernel). ``kernel`` says whether the
compiled loop ran; its wall time then includes importing numba and loading the cached
compiled loop, about 0.3 s once per process (the first run after an install also compiles
it, about 15-25 s). ``loop`` names the loop of the last run (``Result.meta["engine"]``:
``classes``: engine.classes; ``kernel``; ``numpy``). ``classes``
is the flow classes simulated where the symmetry search found some (summed over runs).

    python benchmarks/bench_engine_events.py [--reference] [--kernel] [--no-symmetry]
        [--numpy] [CASE ...]
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

#: The engine configuration of each mode (fields of netsim.engine.EngineConfig).
MODES = {"fast": {}, "kernel": {"incremental_min_subflows": None}, "nosym": {"symmetry": False},
         "numpy": {"loop": "numpy"}, "reference": {"loop": "reference"}}
CONFIG = None           # the EngineConfig of this process's mode (set in one())

CASES = ["lognormal8", "lognormal12", "lognormal16", "staggered16", "flows16", "flows32",
         "nvl72", "dgx", "fattree_ring", "faults12", "faults_dgx"]
DEFAULT = ["lognormal8", "lognormal12", "staggered16", "flows16", "flows32", "nvl72", "dgx",
           "fattree_ring", "faults12", "faults_dgx"]


def _mesh_alltoall(k: int, *, lognormal: bool, latency: float, fail_at: float | None = None):
    from netsim.engine import execute, fail_links, route_schedule
    from netsim.schedule import sends_from_arrays
    from netsim.topology import mesh

    n = k * k
    topology = mesh((k, k), bandwidth=50e9, latency=latency)
    src, dst = np.divmod(np.arange(n * n), n)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    if lognormal:
        rng = np.random.default_rng(0)
        nbytes = np.maximum(np.rint(rng.lognormal(np.log(1 << 20), 1.0, src.size)), 1.0)
    else:
        nbytes = float(1 << 20)
    schedule = sends_from_arrays(n, src, dst, nbytes, tag="alltoall")
    routes = route_schedule(topology, schedule, topology.endpoints)
    faults = [] if fail_at is None else [fail_links(topology, ["0_0->1_0"],
                                                    time=fail_at)]
    return [execute(topology, schedule, routes, config=CONFIG, faults=faults)]


def _coll(topo: str, algo: str = "auto", **kwargs):
    from netsim.run import run_collective, run_sweep

    results = []
    from netsim.engine import executor
    original = executor._make_result

    def keep(*args):                # every engine run of the sweep, candidates included
        result = original(*args)
        results.append(result)
        return result

    executor._make_result = keep
    if "sizes" in kwargs:
        run_sweep("allreduce", topo, algo, kwargs["sizes"])
    else:
        run_collective("allreduce", topo, algo, kwargs["size"], **kwargs.get("options", {}))
    executor._make_result = original
    return results


def run_case(name: str):
    if name.startswith("lognormal"):
        return _mesh_alltoall(int(name[len("lognormal"):]), lognormal=True, latency=0.0)
    if name == "staggered16":
        return _mesh_alltoall(16, lognormal=False, latency=1e-6)
    if name.startswith("flows"):
        return _mesh_alltoall(int(name[len("flows"):]), lognormal=False, latency=0.0)
    if name == "nvl72":
        return _coll("gb200-nvl72", size="4GB")
    if name == "dgx":
        return _coll("dgx-h100", sizes="1KiB:16GiB")
    if name == "fattree_ring":
        return _coll("fattree:k=16", "ring", size="256MiB")
    if name == "faults12":
        return _mesh_alltoall(12, lognormal=True, latency=0.0, fail_at=1e-4)
    if name == "faults_dgx":
        from netsim.engine import fail_links
        from netsim.topology import parse_topology

        topo = parse_topology("dgx-h100-cluster:nodes=4")
        return _coll(topo, "default", size="64MiB", options={
            "faults": [fail_links(topo, ["n0.gpu0->n0.sw0"], time=1e-4)]})
    raise SystemExit(f"unknown case {name!r}; one of {', '.join(CASES)}")


def one(name: str, mode: str, out: str) -> dict:
    from netsim.engine import executor, maxmin

    passes = [0]
    solver = maxmin.max_min_rates_csr

    def counted(*args, **kwargs):
        passes[0] += 1
        return solver(*args, **kwargs)

    executor.max_min_rates_csr = maxmin.max_min_rates_csr = counted
    global CONFIG
    import functools

    from netsim.engine import blocks, config

    CONFIG = config.EngineConfig(**MODES[mode])
    # the collective runner passes no configuration: make this mode's the default
    executor.EngineConfig = blocks.EngineConfig = functools.partial(config.EngineConfig,
                                                                    **MODES[mode])
    loaded = "numba" in sys.modules
    start = time.perf_counter()
    results = run_case(name)
    wall = time.perf_counter() - start
    np.savez(out, *[r.op_finish for r in results])
    return {"case": name, "engine": mode,
            "runs": len(results), "flows": sum(r.num_flows for r in results),
            "classes": sum(r.meta.get("symmetry_classes", {}).get("flows", 0) for r in results),
            "events": sum(r.events for r in results), "solver_calls": passes[0],
            "wall_s": round(wall, 3),
            "kernel": "numba" in sys.modules and not loaded,   # the compiled loop ran
            "loop": results[-1].meta["engine"]["loop"],
            "peak_MiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            # the whole process's peak (interpreter and libraries included) per flow
            "bytes_per_flow": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
                                    / max(sum(r.num_flows for r in results), 1)),
            "makespan_s": max(r.makespan for r in results)}


def _spawn(name: str, mode: str, out: str) -> dict:
    args = [sys.executable, __file__, "--one", name, out, mode]
    return json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)


def max_rel_diff(a: str, b: str) -> float:
    fa, fb = np.load(a), np.load(b)
    worst = 0.0
    for key in fa.files:
        x, y = fa[key], fb[key]
        scale = np.maximum(np.abs(y), 1e-300)
        worst = max(worst, float((np.abs(x - y) / scale).max()) if x.size else 0.0)
    return worst


def main(argv: list[str]) -> None:
    modes = ["fast"] + (["kernel"] if "--kernel" in argv else []) + \
        (["numpy"] if "--numpy" in argv else []) + \
        (["nosym"] if "--no-symmetry" in argv else []) + \
        (["reference"] if "--reference" in argv else [])
    names = [a for a in argv if not a.startswith("--")] or DEFAULT
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            fast = os.path.join(tmp, f"{name}-fast.npz")
            for mode in modes:
                out = os.path.join(tmp, f"{name}-{mode}.npz")
                row = _spawn(name, mode, out)
                if mode != "fast":
                    row["max_rel_diff"] = max_rel_diff(fast, out)
                print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--one":
        print(json.dumps(one(sys.argv[2], sys.argv[4], sys.argv[3])))
    else:
        main(sys.argv[1:])
