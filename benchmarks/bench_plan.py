"""netsim plan against published training runs, and the planner's search times.

    python benchmarks/bench_plan.py            # Megatron-LM Table 1 rows (<= 512 GPUs), targets
    python benchmarks/bench_plan.py --all      # also the Llama 3 405B rows (8K-16K GPUs: slow)
    python benchmarks/bench_plan.py --scale    # the 1,024-GPU search only: serial, 2 processes,
                                               # a 2-worker Dask LocalCluster

For each row of ``benchmarks/training/*.csv`` the published layout is simulated with
the planner (``netsim plan --layout``: best placement of netsim place's strategies, then the
step) and the simulated throughput is printed against the published one, with the step's
split (compute, exposed communication, bubble) so that one sees whether the compute model or
the network carries the error. Megatron's runs were on A100 clusters (Selene: 8 A100 on
NVSwitch per node, 8 x 200 Gb/s InfiniBand per node): the machine is the dgxcluster generator
with DGX A100 links and the dgx-a100 preset's chip figures. Then the targets: a full search
for Llama 3 70B on dgx-h100-cluster:nodes=32 (256 GPUs) and Llama 3 8B on a 32-chip Galaxy
(70B does not fit in a Galaxy's memory for training: the planner says so), and Llama 3
70B on four Galaxies (galaxy-wh-quad). ``--scale`` runs the 1,024-GPU search (Llama 3 70B on
dgx-h100-cluster:nodes=128, batch 1,024), once serially, once on 2 local processes and once
on a Dask LocalCluster of 2 workers, and prints wall and CPU seconds (this process and its
children), the winner, and how the collectives' times were obtained.
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

from netsim.planning import ModelSpec, TrainLayout, load_model, plan
from netsim.topology import parse_topology

DATA = Path(__file__).resolve().parent / "training"


def _rows(name: str):
    lines = [l for l in (DATA / name).read_text().splitlines() if not l.startswith("#")]
    return list(csv.DictReader(lines))


def a100_cluster(nodes: int):
    """Selene-like: DGX A100 nodes (12 NVLink3 x 25 GB/s per GPU on 6 NVSwitch), one
    200 Gb/s HDR NIC per GPU, with the dgx-a100 preset's chip figures and calibration."""
    node = parse_topology("dgx-a100")
    topo = parse_topology(f"dgxcluster:nodes={nodes},switches=6,bw=300GB/s,"
                          f"links_per_switch=2/2/2/2/2/2,nic_bw=200Gbps,nic_lat=3.1us")
    topo.meta["chip"] = node.meta["chip"]
    return topo


def megatron():
    print("Megatron-LM (arXiv:2104.04473 Table 1): achieved TFLOP/s per GPU incl. recompute")
    print(f"{'run':>16} {'layout':>26} {'published':>9} {'netsim':>7} {'error':>7} "
          f"{'compute':>8} {'comm':>7} {'bubble':>7} {'wall':>6}")
    errors = []
    for row in _rows("megatron.csv"):
        h, l, heads = int(row["hidden"]), int(row["layers"]), int(row["heads"])
        model = ModelSpec(name=row["name"], layers=l, hidden=h, heads=heads, ffn=4 * h,
                          vocab=51200, seq_len=2048, gated_mlp=False, tied_embeddings=True,
                          sources=["arXiv:2104.04473 Table 1"])
        gpus, tp, pp = int(row["gpus"]), int(row["tp"]), int(row["pp"])
        batch = int(row["batch"])
        lay = TrainLayout(tp=tp, pp=pp, dp=gpus // (tp * pp), batch=batch, zero=0,
                          recompute=True)
        t0 = time.perf_counter()
        out = plan(model, a100_cluster(gpus // 8), batch=batch, layout=lay)
        wall = time.perf_counter() - t0
        r = out.rows[0]
        s = 2048
        flops = 96 * batch * s * l * h * h * (1 + s / (6 * h) + 51200 / (16 * l * h))
        tflops = flops / (r["step_s"] * gpus) / 1e12
        published = float(row["achieved_tflops_per_gpu"])
        err = 100 * (tflops / published - 1)
        errors.append(abs(err))
        comm = sum(r.get(f"{k}_s", 0.0) for k in ("tp", "cp", "ep", "pp", "dp"))
        print(f"{row['name']:>16} {r['layout']:>26} {published:9.0f} {tflops:7.0f} "
              f"{err:+6.1f}% {r['compute_s'] / r['step_s']:8.0%} "
              f"{comm / r['step_s']:7.0%} {r['bubble_s'] / r['step_s']:7.0%} {wall:5.1f}s")
    print(f"mean |error| {sum(errors) / len(errors):.1f}%, max {max(errors):.1f}%")


def llama3():
    """The published layouts simulated as they ran (``evaluate_layout``: no memory check;
    the planner's even stage split puts the 8K-GPU layout above its memory limit, the run
    fits with fewer layers on its first and last stages). About 16 minutes per row here."""
    from netsim.planning import chip_of, evaluate_layout

    print("Llama 3 405B (arXiv:2407.21783 Table 4): BF16 MFU")
    for row in _rows("llama3.csv"):
        model = load_model(row["model"]).model_copy(update={"seq_len": int(row["seq_len"])})
        gpus = int(row["gpus"])
        lay = TrainLayout(tp=int(row["tp"]), cp=int(row["cp"]), pp=int(row["pp"]),
                          dp=int(row["dp"]), batch=int(row["batch"]), zero=1)
        t0 = time.perf_counter()
        topo = parse_topology(f"dgx-h100-cluster:nodes={gpus // 8}")
        r, _ = evaluate_layout(model, lay, topo, chip=chip_of(topo), strategies=["row_major"])
        print(f"{row['name']:>22} published {row['mfu_pct']}%  netsim {100 * r['mfu']:.1f}% "
              f"(bubble {r['bubble_s'] / r['step_s']:.0%}) {time.perf_counter() - t0:.0f}s")


def targets():
    for name, spec, batch in (("llama3-70b", "dgx-h100-cluster:nodes=32", 256),
                              ("llama3-8b", "galaxy-wh", 32),
                              ("llama3-70b", "galaxy-wh-quad", 128)):
        t0 = time.perf_counter()
        out = plan(load_model(name), parse_topology(spec), batch=batch, top=10)
        best = out.rows[0]
        print(f"target {name} on {spec}: {out.fitting}/{out.considered} layouts fit, "
              f"{len(out.rows)} simulated in {time.perf_counter() - t0:.1f} s; best "
              f"{best['layout']} ({best['placement']}) {best['step_s']:.2f} s/step, "
              f"MFU {100 * best['mfu']:.1f}%")


def _cpu() -> float:
    """CPU seconds of this process and its finished children."""
    import resource

    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                 resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def scale():
    """The 1,024-GPU target: serial, 2 local processes, a Dask LocalCluster of 2 workers.
    CPU seconds are printed for the serial run only (the workers of the others are not
    this process's children, whose CPU it could read)."""
    from netsim.planning import describe_stats
    from netsim.run import sweep_executor

    model, spec = load_model("llama3-70b"), "dgx-h100-cluster:nodes=128"
    topo = parse_topology(spec)
    runs = [("serial", None, None), ("2 processes", 2, None)]
    try:
        from distributed import LocalCluster

        runs.append(("Dask LocalCluster, 2 workers", None, "local"))
    except ImportError:
        print("(dask.distributed is not installed: no Dask run)")
    for label, workers, scheduler in runs:
        cluster = None
        if scheduler == "local":
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            scheduler = cluster.scheduler_address
        t0, c0 = time.perf_counter(), _cpu()
        if workers is None and scheduler is None:
            out = plan(model, topo, batch=1024, top=10)
        else:
            with sweep_executor(workers or 1, scheduler) as pool:
                out = plan(model, topo, batch=1024, top=10, executor=pool, workers=workers)
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
        if cluster is not None:
            cluster.close()
        best = out.rows[0]
        print(f"1,024 GPUs, {label}: {out.fitting}/{out.considered} layouts fit, "
              f"{len(out.rows)} simulated in {wall:.0f} s wall"
              + (f", {cpu:.0f} s CPU" if workers is None and scheduler is None else "")
              + f"; best "
              f"{best['layout']} ({best['placement']}) {best['step_s']:.2f} s/step, "
              f"MFU {100 * best['mfu']:.1f}%; runner-up {out.rows[1]['layout']} "
              f"{out.rows[1]['step_s']:.2f} s")
        print(f"  collectives: {describe_stats(out.stats)}")


if __name__ == "__main__":
    if "--scale" in sys.argv:
        scale()
        sys.exit(0)
    megatron()
    if "--all" in sys.argv:
        llama3()
    targets()
