"""Fit nccl-tests' host time per GPU (netsim.algorithms.nccl.harness.LAUNCH_PER_GPU_S).

Model (harness.py): with ``-g N`` one host thread enqueues every iteration for N GPUs, and
nccl-tests' time per iteration is max(device time, N x launch_per_gpu). The device time is
netsim's ``--algo nccl`` with the host bound off (``gpus_per_thread`` 0), on the curve's own
preset with the algorithm its run forced; it is computed once per (curve, size), then the one
parameter is fitted over every single-process (``-g N``, N > 1) curve of the benchmark, on
every NVIDIA host it holds (H100 8- and 4-GPU all-reduce and all-gather, H200, A100, a GB200
tray): least squares on log(model / published), one value for all hosts, ops, sizes and GPU
counts. Sizes above 16 MiB are left out: their device time (> 100 us at 8 GPUs, > 50 us at
4) is above N x 8 us, the top of the search range, so they do not depend on the parameter.

Run: ``python benchmarks/fit_nccl_host.py`` (about 20 s). It prints the fit, the minimax
value for comparison, the independent A100 estimate (NVIDIA/nccl-tests#123) and the error
per point at the fitted value; docs/calibration.md quotes them.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy.optimize import minimize_scalar

import bench_nccl_curves
from bench_nccl_curves import launch, published, tolerance
from netsim.algorithms import AlgoOptions
from netsim.run import run_collective

MiB = 1 << 20
#: the single-process (-g N, N > 1) curves of the benchmark: (file, op, preset, GPUs, forced
#: NCCL algorithm)
CURVES = [curve for curve in bench_nccl_curves.CURVES
          if launch(curve[0], curve[4]).extra["gpus_per_thread"] > 1]
#: NVIDIA/nccl-tests#123 (DGX A100, NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=1, -g N, 8 .. 128 B)
A100_SWEEP_US = {2: 10.0, 3: 13.76, 4: 16.88, 5: 20.8, 6: 25.2, 7: 29.5, 8: 33.7}


def points() -> list[dict]:
    rows = []
    for name, op, preset, n, forced in CURVES:
        extra = {"gpus_per_thread": 0, **({"nccl_algorithm": forced} if forced else {})}
        for row in published(name):
            if row["size"] > 16 * MiB:
                continue
            run = run_collective(op, preset, "nccl", row["size"], ranks=n,
                                 options=AlgoOptions(extra=extra))
            # the published time, or the time its busbw gives (busbw / algbw: the op's factor)
            t_pub = row.get("time_s") or (row["size"] * run.busbw_GBps / run.algbw_GBps
                                           / (row["busbw"] * 1e9))
            rows.append({"curve": name, "preset": preset, "op": op, "n": n,
                         "size": row["size"], "published": t_pub, "device": run.time_s})
    return rows


def log_errors(per_gpu_s: float, rows) -> np.ndarray:
    return np.array([np.log(max(r["device"], r["n"] * per_gpu_s) / r["published"])
                     for r in rows])


def main() -> None:
    start = time.perf_counter()
    rows = points()
    fit = minimize_scalar(lambda h: float(np.sum(log_errors(h * 1e-6, rows) ** 2)),
                          bounds=(0.0, 8.0), method="bounded", options={"xatol": 1e-4})
    minimax = minimize_scalar(lambda h: float(np.max(np.abs(log_errors(h * 1e-6, rows)))),
                              bounds=(0.0, 8.0), method="bounded", options={"xatol": 1e-4})
    ns = np.array(list(A100_SWEEP_US), dtype=float)
    ts = np.array(list(A100_SWEEP_US.values()))
    a100 = float(ns @ ts / (ns @ ns))          # least squares through the origin: t = N h
    print(f"{len(rows)} points (sizes <= 16 MiB of {len(CURVES)} curves), "
          f"{time.perf_counter() - start:.0f} s")
    print(f"least squares on log error: launch per GPU {fit.x:.2f} us")
    print(f"minimax |log error|:        launch per GPU {minimax.x:.2f} us")
    print(f"A100 -g 2..8 sweep (nccl-tests#123), t = N x h through the origin: {a100:.2f} us "
          f"(residuals {', '.join(f'{t - n * a100:+.1f}' for n, t in zip(ns, ts))} us)")
    h = round(fit.x, 1) * 1e-6
    err = np.expm1(log_errors(h, rows)) * 100
    print(f"\nat {h * 1e6:.1f} us per GPU:")
    print("| curve | size | published (us) | device (us) | model (us) | error | ok |")
    print("|---|---|---|---|---|---|---|")
    bad = 0
    for r, e in zip(rows, err):
        ok = abs(e) <= 100 * tolerance(r["size"])
        bad += not ok
        model = max(r["device"], r["n"] * h)
        print(f"| {r['preset']} {r['op']} {r['n']} GPUs | {r['size']} | {r['published'] * 1e6:.2f} | "
              f"{r['device'] * 1e6:.2f} | {model * 1e6:.2f} | {e:+.1f}% | "
              f"{'yes' if ok else 'NO'} |")
    print(f"\n{len(rows) - bad} of {len(rows)} points within the tolerance")


if __name__ == "__main__":
    sys.exit(main())
