"""Files of other tools at larger sizes: MSCCL ring all-reduce on 64 GPUs, a Chakra
all-reduce node on 64 NPUs (traces from mlc-chakra's generator), Chakra export and read-back.

Prints, per case, ops, flows, the simulated time, the native run's time (they should be
equal) and the wall time of reading + building + simulating.

    python benchmarks/bench_interop.py
"""

from __future__ import annotations

import os
import tempfile
import time

from netsim.algorithms import build_schedule
from netsim.engine import simulate
from netsim.interop import (have_chakra, ring_allreduce_xml, schedule_from_msccl,
                            write_workload)
from netsim.run import run_collective, run_workload
from netsim.topology import parse_topology

TOPO = "torus:8x8,bw=50GB/s,lat=500ns"
SIZE = 64 * 2**20


def msccl_ring(n: int = 64) -> None:
    topo = parse_topology(TOPO)
    nodes = topo.first_endpoints(n)
    start = time.perf_counter()
    schedule = schedule_from_msccl(ring_allreduce_xml(n), SIZE)
    result = simulate(topo, schedule, nodes, overhead=2e-6)
    wall = time.perf_counter() - start
    native = simulate(topo, build_schedule("allreduce", "ring", n, SIZE), nodes, overhead=2e-6)
    print(f"msccl ring allreduce {n} GPUs: ops {schedule.num_ops}, flows {result.num_flows}, "
          f"time {result.makespan * 1e3:.4f} ms (native {native.makespan * 1e3:.4f} ms), "
          f"wall {wall:.2f} s")


def chakra_allreduce(n: int = 64) -> None:
    from chakra.src.generator import generator

    with tempfile.TemporaryDirectory() as folder:
        here = os.getcwd()
        os.chdir(folder)
        try:
            generator.one_comm_coll_node_allreduce(n, SIZE)
            start = time.perf_counter()
            run = run_workload("ALL_REDUCE.%d.et", TOPO, algorithm="ring", alpha=2e-6)
            wall = time.perf_counter() - start
            native = run_collective("allreduce", TOPO, "ring", SIZE, alpha=2e-6)
            print(f"chakra allreduce node {n} NPUs: flows {run.result.num_flows}, time "
                  f"{run.time_s * 1e3:.4f} ms (native {native.time_s * 1e3:.4f} ms), "
                  f"wall {wall:.2f} s")
            schedule = build_schedule("allreduce", "halving_doubling", n, SIZE)
            start = time.perf_counter()
            write_workload(schedule, "hd.%d.et")
            back = run_workload("hd.%d.et", TOPO, alpha=2e-6)
            wall = time.perf_counter() - start
            topo = parse_topology(TOPO)
            direct = simulate(topo, schedule, topo.first_endpoints(n), overhead=2e-6)
            print(f"chakra export+import halving_doubling {n} NPUs: sends "
                  f"{schedule.num_sends}, time {back.time_s * 1e3:.4f} ms (native "
                  f"{direct.makespan * 1e3:.4f} ms), wall {wall:.2f} s")
        finally:
            os.chdir(here)


if __name__ == "__main__":
    msccl_ring()
    if have_chakra():
        chakra_allreduce()
    else:
        print("chakra cases skipped: pip install 'netsim[chakra]'")
