"""The first run after an install against a warm run, in whole processes.

numba keeps compiled kernels in a cache; ``pip install`` fills it (setup.py runs
``python -m netsim._precompile``). This script replays that on an empty cache of its own
(``NUMBA_CACHE_DIR`` set to a temporary directory, so the installed cache is neither used
nor touched): it times the install step once, then for each case copies the cache as the
install left it, times the first process that runs the case on it, then ``--warm`` more
processes (default 3) on the cache the first one left, and prints the first run, the
median warm run and their ratio. ``--no-precompile`` skips the install step: the first run
then compiles what it needs, as it does without the step.

Cases: those of benchmarks/bench_engine_events.py (by name, run with its default engine),
``alltoall8`` / ``alltoall16`` / ``alltoall32`` (benchmarks/bench_engine_alltoall.py: the
whole path of a k x k mesh all-to-all) and ``fattree8``: a k=8 fat-tree (128 hosts, the
default 100 Gb/s links), 4,000 random pairs (numpy seed 0), hash ECMP, log-normal sizes
around 1 MiB (sigma 1), starts 1 us apart on average (exponential gaps); ``randgraph64``:
a random connected graph of 64 nodes and 128 cables of 10-100 GB/s (bench_irregular.py's
generator, seed 1), 3,000 flows between random pairs, fewest-hop routes, Pareto sizes (shape
1.5, mean 1 MB) and Poisson arrivals loading the busiest link to 90 %. These and
``staggered16``, ``lognormal8`` and ``lognormal12`` are the five cases of the engine's
speed table (benchmarks/RESULTS.md).

    python benchmarks/bench_first_run.py [--warm N] [--no-precompile] [CASE ...]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = ["staggered16", "lognormal8", "lognormal12", "fattree8", "randgraph64",
           "alltoall16", "nvl72", "dgx"]


def fattree8() -> float:
    import numpy as np

    from netsim.engine import execute, route_schedule
    from netsim.schedule import sends_from_arrays
    from netsim.topology import fat_tree

    topology = fat_tree(8)
    hosts = np.asarray(topology.endpoints)
    rng = np.random.default_rng(0)
    n = 4000
    src = rng.integers(0, hosts.size, n)
    dst = (src + rng.integers(1, hosts.size, n)) % hosts.size
    nbytes = np.maximum(np.rint(rng.lognormal(np.log(1 << 20), 1.0, n)), 1.0)
    schedule = sends_from_arrays(hosts.size, src, dst, nbytes, tag="pairs")
    routes = route_schedule(topology, schedule, hosts)
    starts = np.cumsum(rng.exponential(1e-6, n))
    return execute(topology, schedule, routes, not_before=starts).makespan


def randgraph64() -> float:
    import numpy as np
    from bench_irregular import _random_graph

    from netsim.engine import execute, route_schedule
    from netsim.schedule import sends_from_arrays

    topology = _random_graph(64, 128, 1)
    rng = np.random.default_rng(1)
    n, flows, shape, mean = topology.num_endpoints, 3000, 1.5, 1e6
    sizes = np.rint((rng.pareto(shape, flows) + 1.0) * mean * (shape - 1) / shape)
    src = rng.integers(n, size=flows)
    dst = (src + rng.integers(1, n, size=flows)) % n
    schedule = sends_from_arrays(n, src, dst, sizes, tag="pairs")
    routes = route_schedule(topology, schedule, topology.endpoints)
    per_flow = routes.link_bytes(sizes) / flows              # bytes per arrival
    rate = 0.9 / float((per_flow / topology.bandwidth).max())
    gaps = rng.exponential(1.0 / rate, flows)
    return execute(topology, schedule, routes, not_before=np.cumsum(gaps) - gaps[0]).makespan


def _command(case: str, out: str) -> list[str]:
    if case in ("fattree8", "randgraph64"):
        return [sys.executable, __file__, "--one", case]
    if case.startswith("alltoall"):
        return [sys.executable, os.path.join(HERE, "bench_engine_alltoall.py"), "--one",
                case[len("alltoall"):]]
    return [sys.executable, os.path.join(HERE, "bench_engine_events.py"), "--one", case, out,
            "fast"]


def _timed(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv: list[str]) -> None:
    warm = int(argv[argv.index("--warm") + 1]) if "--warm" in argv else 3
    skip = {argv.index("--warm") + 1} if "--warm" in argv else set()
    names = [a for i, a in enumerate(argv) if not a.startswith("--") and i not in skip]
    with tempfile.TemporaryDirectory() as tmp:
        installed = os.path.join(tmp, "installed")
        os.makedirs(installed)
        env = dict(os.environ, NUMBA_CACHE_DIR=installed)
        if "--no-precompile" not in argv:
            seconds = _timed([sys.executable, "-m", "netsim._precompile"], env)
            print(f"install step (python -m netsim._precompile, empty cache): {seconds:.1f} s",
                  flush=True)
        for name in names or DEFAULT:
            cache = os.path.join(tmp, name)
            shutil.copytree(installed, cache)
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            command = _command(name, os.path.join(tmp, f"{name}.npz"))
            first = _timed(command, env)
            runs = [_timed(command, env) for _ in range(warm)]
            median = statistics.median(runs)
            print(f"case={name}  first_s={first:.2f}  warm_s={median:.2f}  "
                  f"warm_runs={','.join(f'{r:.2f}' for r in runs)}  "
                  f"first/warm={first / median:.2f}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        print(globals()[sys.argv[2]]())
    else:
        main(sys.argv[1:])
