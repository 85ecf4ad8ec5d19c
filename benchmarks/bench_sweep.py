"""Sweeps: wall time of one sweep run in this process, on local processes and on a Dask
LocalCluster, and the overhead per point.

The sweep: 5 machines x 4 all-reduce algorithms x 26 sizes (1 KiB .. 32 MiB, steps of
sqrt 2) = 520 points, each a small simulation. For each executor prints the wall time, the
points per second, the compute time summed over points (as measured inside the workers) and
the overhead per point = (wall x workers - compute) / points, and checks that the tables
are byte-identical. Run: ``python benchmarks/bench_sweep.py [--workers 2] [--no-dask]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from netsim.run import load_sweep, rows_to_parquet, run_sweep_points, sweep_executor

SCENARIO = """\
name: bench-sweep
seed: 0
jobs:
  - {kind: collective, op: allreduce, topology: "ring:8,bw=50GB/s", algorithm: ring,
     size: 1KiB}
sweep:
  grid:
    jobs[0].topology: ["ring:8,bw=50GB/s,lat=1us", "torus:4x4,bw=50GB/s,lat=1us",
                       "mesh:4x4,bw=50GB/s,lat=1us", "fattree:k=4,bw=50GB/s", dgx-h100]
    jobs[0].algorithm: [ring, dbtree, halving_doubling, direct]
    jobs[0].size: [%s]
"""


def sizes() -> list[str]:
    return [f"{round(1024 * 2 ** (k / 2))}B" for k in range(26)]     # 1 KiB .. 32 MiB


def run(sweep, executor, workers: int, label: str, out: Path) -> bytes:
    start = time.perf_counter()
    result = run_sweep_points(sweep, out, executor)
    wall = time.perf_counter() - start
    compute = sum(json.loads(p.read_text()).get("wall_s", 0.0)
                  for p in (out / "points").glob("*.json"))
    points = len(sweep.points)
    print(f"{label:<28} {points:>6} {result.failed:>6} {wall:>8.2f} s {points / wall:>8.1f}"
          f" {compute:>9.2f} s {(wall * workers - compute) / points * 1e3:>10.2f} ms")
    return rows_to_parquet(result.rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = tmp / "bench-sweep.yaml"
        path.write_text(SCENARIO % ", ".join(sizes()))
        sweep = load_sweep(path)
        print(f"{'executor':<28} {'points':>6} {'failed':>6} {'wall':>10} {'pts/s':>8} "
              f"{'compute':>11} {'overhead/pt':>13}")
        tables = {}
        with sweep_executor(1) as executor:
            tables["serial"] = run(sweep, executor, 1, "serial (this process)",
                                   tmp / "serial")
        with sweep_executor(args.workers) as executor:
            tables["processes"] = run(sweep, executor, args.workers,
                                      f"--workers {args.workers}", tmp / "processes")
        if not args.no_dask:
            import distributed

            with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                          host="127.0.0.1", dashboard_address=None) as cluster, \
                    sweep_executor(scheduler=cluster.scheduler_address) as executor:
                tables["dask"] = run(sweep, executor, args.workers,
                                     f"Dask LocalCluster {args.workers} workers", tmp / "dask")
        start = time.perf_counter()
        run_sweep_points(sweep, tmp / "serial")
        print(f"resume with every point done: {time.perf_counter() - start:.2f} s")
        same = len(set(tables.values())) == 1
        print(f"tables byte-identical (Parquet) across {', '.join(tables)}: {same}")


if __name__ == "__main__":
    main()
