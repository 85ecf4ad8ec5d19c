"""Fit galaxy-bh's calibration (alpha, launch, gamma, ring_packet_cost) to Blackhole data.

Data: tt-metal's CCL benchmark on 8 Blackhole chips in a ring, 2 Ethernet links per
neighbour per direction at 25 GB/s ("line rate 25.0 GB/s per link per direction"), bf16,
8192 B packets: raw kernel times per call, ``benchmarks/data/blackhole_8ring_*_tt_metal_
measured.csv`` (tech_reports/CCLs/results/SUMMARY_blackhole_bfloat16_8192.md, tt-metal
commit 1080d1c4). One value of each parameter for all three ops (all_gather,
reduce_scatter, all_reduce with ``tt_metal``, what the default command runs: the ring,
its reduce-scatter direct up to 512 KiB) and every size from 16 KiB to 8-16 GiB. The
fit minimises the worst error relative to the goal the presets are held to (15% from 1 MiB,
30% below; |log(simulated / measured)| / log(1 + goal), plus 5% of its root mean square to
settle ties), from the least-squares fit on log(simulated / measured); a pure least-squares
fit leaves some sizes outside it. Fixed by sources, not fitted: 515 ns per hop
and the framing of 8192 B payload + 48 B header in Ethernet frames (galaxy-bh.yaml).

The machine simulated is one 8-chip ring axis of galaxy-bh (``ring:8,bw=25GB/s,lat=515ns,
links=2`` with galaxy-bh's calibration): the benchmark's ring. Run ``python
benchmarks/fit_blackhole.py`` (about five minutes) to print the fit and the error per size.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares, minimize

from netsim.run import read_measured, run_collective
from netsim.topology import parse_topology
from netsim.topology.calibration import Calibration, apply_calibration

DATA = Path(__file__).resolve().parent / "data"
OPS = ("allgather", "reducescatter", "allreduce")
FIXED = {"packet": "8192B", "header": "48B", "fabric": "ring"}
MIB = 1 << 20
GOAL_FROM_1MIB, GOAL_BELOW = 0.15, 0.30     # the error the presets are held to


def machine(alpha: float, launch: float, gamma: float, ring_cost: float):
    cal = Calibration.from_mapping({**FIXED, "alpha": alpha, "launch": launch,
                                    "gamma": gamma, "ring_packet_cost": ring_cost})
    return apply_calibration(parse_topology("ring:8,bw=25GB/s,lat=515ns,links=2"), cal)


def measured(op: str) -> list[dict]:
    return read_measured(DATA / f"blackhole_8ring_{op}_tt_metal_measured.csv")


def errors(params, rows) -> np.ndarray:
    alpha, launch, gamma, ring_cost = params
    topo = machine(alpha * 1e-6, launch * 1e-6, gamma * 1e9, ring_cost * 1e-9)
    out = []
    for op, row in rows:
        sim = run_collective(op, topo, "tt_metal", row["size_bytes"]).time_s
        out.append(np.log(sim / row["time_s"]))
    return np.asarray(out)


def worst(params, rows, tolerance) -> float:
    """Worst |log error| relative to the goal, plus 5% of its RMS (ties)."""
    if np.any(np.asarray(params) <= 0):
        return 1e9
    scaled = np.abs(errors(params, rows)) / tolerance
    return float(scaled.max() + 0.05 * np.sqrt(np.mean(scaled ** 2)))


def main() -> None:
    rows = [(op, r) for op in OPS for r in measured(op)]
    sizes = np.array([r["size_bytes"] for _, r in rows])
    tolerance = np.log1p(np.where(sizes >= MIB, GOAL_FROM_1MIB, GOAL_BELOW))
    start = time.perf_counter()
    # alpha us, launch us, gamma GB/s, ring packet cost ns
    fit = least_squares(errors, x0=[1.5, 5.0, 60.0, 20.0], args=(rows,),
                        bounds=([0, 0, 5, 0], [20, 50, 1000, 500]), diff_step=1e-3)
    fit = minimize(worst, fit.x, args=(rows, tolerance), method="Nelder-Mead",
                   options={"maxfev": 260, "xatol": 1e-3, "fatol": 1e-4})
    alpha, launch, gamma, ring_cost = fit.x
    print(f"fit in {time.perf_counter() - start:.0f} s: alpha {alpha:.2f} us, launch "
          f"{launch:.2f} us, gamma {gamma:.1f} GB/s, ring_packet_cost {ring_cost:.1f} ns")
    err = np.expm1(errors(fit.x, rows)) * 100
    print("| op | size | measured (us) | netsim (us) | error |")
    print("|---|---|---|---|---|")
    for (op, row), e in zip(rows, err):
        print(f"| {op} | {int(row['size_bytes'])} | {row['time_s'] * 1e6:.2f} | "
              f"{row['time_s'] * 1e6 * (1 + e / 100):.2f} | {e:+.1f}% |")
    big = np.abs(err[sizes >= MIB])
    print(f"worst |error| from 1 MiB: {big.max():.1f}%; below: "
          f"{np.abs(err[sizes < MIB]).max():.1f}%")


if __name__ == "__main__":
    sys.exit(main())
