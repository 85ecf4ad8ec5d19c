"""Fit the calibrated parameters of the machine presets to published measurements.

Run ``python benchmarks/fit_calibration.py`` to print the fits and the measured-vs-simulated
tables; ``--write`` also regenerates the CSVs of the published Tenstorrent fits in
``benchmarks/data/`` (the ``--measured`` files of ``netsim coll``).

Tenstorrent Wormhole (t3000 preset, 8 chips, 1 link per direction). The published data are
the kernel-time fits of tt-metal's CCL benchmark (tech_reports/CCLs/results/
SUMMARY_wormhole_b0_bfloat16_6144.md, bf16, 6144 B packets), with ``in`` the input bytes
of one chip (all_gather: S/N of the gathered size S; all_reduce: the buffer S)::

    ring all_gather: 4.47 us + 2.50 us * N/2   + (N-1) * in / 20.8 GB/s
    ring all_reduce: 9.07 us + 5.25 us * N/2   + 2(N-1)/N * in / 18.4 GB/s
    line all_gather: 4.47 us + 1.91 us * (N-1) + (N-1) * in / 11.8 GB/s
    line all_reduce: 9.07 us + 5.82 us * (N-1) + 2(N-1)/N * in / 10.9 GB/s

Fixed by sources, not fitted: line rate 12.5 GB/s, 711 ns per hop, payload efficiency
0.9537 (6144 B payload + 48 B header in 1500 B frames of 50 B overhead). Fitted, one value
each for all four curves and every size (least squares on log(simulated / published) over
inputs of 1 KiB to 1 GiB): ``launch`` (s per phase), ``alpha`` (s per message), ``gamma``
(bytes/s a chip reduces) and ``ring_packet_cost`` (s of extra link time per packet on a
ring fabric).

DGX H100 NVLS: ``reduce_bandwidth`` of each NVSwitch chip is derived (not fitted) from the
480 GB/s all_reduce busbw that NCCL's maintainer quotes for 8 H100s (NVIDIA/nccl-tests#212),
as the steady-state limit of a deep pipeline; the script shows ``innetwork`` approaching it
as ``--chunks`` grows.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

from netsim.algorithms import AlgoOptions
from netsim.run.collective import run_collective
from netsim.topology import parse_topology

DATA = Path(__file__).resolve().parent / "data"
N = 8
SOURCE = "tt-metal tech_reports/CCLs/results/SUMMARY_wormhole_b0_bfloat16_6144.md"


@dataclass(frozen=True)
class TTFit:
    """One published kernel-time fit: ``fixed + per_step * steps + factor * in / rate``."""

    op: str            # netsim op
    algorithm: str     # netsim algorithm (netsim/algorithms/tenstorrent.py)
    fabric: str        # 'line' or 'ring'
    fixed_us: float
    per_step_us: float
    steps: float
    factor: float      # bytes through the busiest link per input byte (tt-metal's table)
    rate_GBps: float
    text: str

    def time_s(self, input_bytes: float) -> float:
        return ((self.fixed_us + self.per_step_us * self.steps) * 1e-6
                + self.factor * input_bytes / (self.rate_GBps * 1e9))

    def size_bytes(self, input_bytes: float) -> float:
        """nccl-tests size of an input of ``input_bytes`` per chip."""
        return input_bytes * N if self.op == "allgather" else input_bytes

    @property
    def name(self) -> str:
        return f"{self.fabric} {self.op}"


WORMHOLE = [
    TTFit("allgather", "tt_ring", "ring", 4.47, 2.50, N / 2, N - 1, 20.8,
          "4.47 us + 2.50 us * N/2 + (N-1) * input_bytes / 20.8 GB/s"),
    TTFit("allreduce", "tt_ring", "ring", 9.07, 5.25, N / 2, 2 * (N - 1) / N, 18.4,
          "9.07 us + 5.25 us * N/2 + 2(N-1)/N * input_bytes / 18.4 GB/s"),
    TTFit("allgather", "tt_line", "line", 4.47, 1.91, N - 1, N - 1, 11.8,
          "4.47 us + 1.91 us * (N-1) + (N-1) * input_bytes / 11.8 GB/s"),
    TTFit("allreduce", "tt_line", "line", 9.07, 5.82, N - 1, 2 * (N - 1) / N, 10.9,
          "9.07 us + 5.82 us * (N-1) + 2(N-1)/N * input_bytes / 10.9 GB/s"),
]
#: Inputs per chip the fit uses (1 KiB .. 1 GiB, every fourth power of two).
FIT_INPUTS = [2.0 ** k for k in range(10, 31, 4)]
#: Inputs of the printed table and the CSVs (1 KiB .. 1 GiB).
TABLE_INPUTS = [2.0 ** k for k in range(10, 31)]
PARAMS = ("launch", "alpha", "gamma", "ring_packet_cost")
_SCALE = np.array([1e-6, 1e-6, 1e9, 1e-9])        # fit in us, us, GB/s, ns


def wormhole_spec(fabric: str, params: dict[str, float] | None = None) -> str:
    """The t3000 spec of the benchmark: 1 link, the fabric, optional parameter overrides."""
    spec = f"t3000,links=1,fabric={fabric}"
    for key, value in (params or {}).items():
        spec += f",{key}={value!r}"
    return spec


def simulate(fit: TTFit, input_bytes: float, params: dict[str, float] | None = None,
             topology=None) -> float:
    """Simulated time (s) of ``fit``'s collective on the t3000 preset, snake order."""
    topo = topology or parse_topology(wormhole_spec(fit.fabric, params))
    run = run_collective(fit.op, topo, fit.algorithm, fit.size_bytes(input_bytes),
                         options=AlgoOptions(order="snake", extra={"annotate": False}))
    return run.time_s


def _residuals(x: np.ndarray) -> np.ndarray:
    params = dict(zip(PARAMS, (x * _SCALE).tolist()))
    out = []
    for fit in WORMHOLE:
        topo = parse_topology(wormhole_spec(fit.fabric, params))
        out += [math.log(simulate(fit, b, topology=topo) / fit.time_s(b)) for b in FIT_INPUTS]
    return np.array(out)


def fit_wormhole(start=(4.5, 1.8, 50.0, 75.0)) -> dict[str, float]:
    """Least-squares values of PARAMS (SI units) against the four published fits."""
    result = least_squares(_residuals, np.array(start, dtype=float), bounds=(0, np.inf),
                           x_scale=np.array(start), diff_step=1e-3)
    return dict(zip(PARAMS, (result.x * _SCALE).tolist()))


def wormhole_table(params: dict[str, float] | None = None) -> list[dict]:
    """Published vs simulated rows for every fit and input size (preset values if None)."""
    rows = []
    for fit in WORMHOLE:
        topo = parse_topology(wormhole_spec(fit.fabric, params))
        for b in TABLE_INPUTS:
            sim, pub = simulate(fit, b, topology=topo), fit.time_s(b)
            rows.append({"case": fit.name, "input_bytes": b, "published_us": pub * 1e6,
                         "simulated_us": sim * 1e6, "error_pct": 100 * (sim / pub - 1)})
    return rows


def busbw_GBps(op: str, size: float, seconds: float) -> float:
    factor = 2 * (N - 1) / N if op == "allreduce" else (N - 1) / N
    return size / seconds * factor / 1e9


def write_csvs() -> list[Path]:
    """One CSV per published fit, rows from the formula (labelled as a fit, not raw data)."""
    DATA.mkdir(exist_ok=True)
    paths = []
    for fit in WORMHOLE:
        path = DATA / f"wormhole_t3000_{fit.op}_{fit.algorithm}_published_fit.csv"
        lines = [
            "# Tenstorrent Wormhole, 8 chips, 1 link per direction, bf16, 6144 B packets.",
            "# GENERATED FROM A PUBLISHED FIT FORMULA, NOT RAW MEASUREMENTS:",
            f"# {fit.name}: kernel_time = {fit.text}, N = 8",
            f"# source: {SOURCE}",
            "# size_bytes is nccl-tests' size (all_gather: N x input_bytes; all_reduce: "
            "input_bytes).",
            f"# netsim coll {fit.op} --topo t3000,links=1,fabric={fit.fabric} --algo "
            f"{fit.algorithm} --order snake --sizes {_human(fit.size_bytes(TABLE_INPUTS[0]))}:"
            f"{_human(fit.size_bytes(TABLE_INPUTS[-1]))} --measured {path.name}",
            "size_bytes,input_bytes,time_s,busbw_GBps"]
        for b in TABLE_INPUTS:
            size, t = fit.size_bytes(b), fit.time_s(b)
            lines.append(f"{size:.0f},{b:.0f},{t:.6e},{busbw_GBps(fit.op, size, t):.4f}")
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def _human(nbytes: float) -> str:
    for unit, factor in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if nbytes >= factor and nbytes % factor == 0:
            return f"{nbytes / factor:.0f}{unit}"
    return f"{nbytes:.0f}"


# -- DGX H100 NVLS --------------------------------------------------------------------------

NVLS_BUSBW_GBPS = 480.0     # NVIDIA/nccl-tests#212 (sjeaugey), 8 x H100, NVLS all_reduce
NVLS_SWITCHES = 4           # NVSwitch gen3 chips of a DGX H100
NVLS_SIZE = 2 ** 34         # 16 GiB: large enough that alpha does not matter
NVLS_CHUNKS = (8, 16, 32, 64)


def nvls_rate() -> float:
    """Reduce rate (bytes/s per chip) that limits NVLS all_reduce to NVLS_BUSBW_GBPS.

    Deeply pipelined, the chips reduce the whole buffer in parallel: algbw = P x rate, and
    busbw = 2(N-1)/N x algbw (nccl-tests prints that factor for NVLS too).
    """
    algbw = NVLS_BUSBW_GBPS * 1e9 * N / (2 * (N - 1))
    return algbw / NVLS_SWITCHES


def nvls_busbw(chunks: int, reduce_bandwidth: float | None = None) -> float:
    """busbw (GB/s) of innetwork all_reduce on dgx-h100 (preset rate if None)."""
    spec = "dgx-h100" if reduce_bandwidth is None else f"dgx-h100,reduce_bw={reduce_bandwidth!r}"
    run = run_collective("allreduce", spec, "innetwork", NVLS_SIZE,
                         options=AlgoOptions(chunks=chunks, extra={"annotate": False}))
    return run.busbw_GBps


# -- main -----------------------------------------------------------------------------------

def _print_table(rows: list[dict]) -> None:
    print(f"{'case':<16} {'input':>10} {'published (us)':>15} {'netsim (us)':>12} {'error':>8}")
    for r in rows:
        print(f"{r['case']:<16} {_human(r['input_bytes']):>10} {r['published_us']:>15.2f} "
              f"{r['simulated_us']:>12.2f} {r['error_pct']:>+7.1f}%")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite benchmarks/data CSVs")
    parser.add_argument("--no-fit", action="store_true",
                        help="only tabulate the presets' current values")
    args = parser.parse_args(argv)
    if args.write:
        for path in write_csvs():
            print(f"wrote {path}")
    if not args.no_fit:
        t0 = time.perf_counter()
        params = fit_wormhole()
        print(f"Wormhole fit ({time.perf_counter() - t0:.1f} s): "
              f"launch = {params['launch'] * 1e6:.2f} us, alpha = {params['alpha'] * 1e6:.3f} us, "
              f"gamma = {params['gamma'] / 1e9:.1f} GB/s, "
              f"ring_packet_cost = {params['ring_packet_cost'] * 1e9:.1f} ns")
        print(f"DGX H100 NVLS: reduce_bandwidth = {nvls_rate() / 1e9:.1f} GB/s per NVSwitch "
              f"chip (steady state of {NVLS_BUSBW_GBPS:.0f} GB/s busbw)")
    print("\nPresets as they are (topologies/t3000.yaml), published fit vs netsim:")
    _print_table(wormhole_table())
    ring = run_collective("allreduce", "dgx-h100", "ring", NVLS_SIZE).busbw_GBps
    print(f"\ndgx-h100 all_reduce {NVLS_SIZE / 2**30:.0f} GiB busbw: ring {ring:.1f} GB/s "
          f"(published 365-370); innetwork (published ~{NVLS_BUSBW_GBPS:.0f}):")
    for chunks in NVLS_CHUNKS:
        print(f"  --chunks {chunks:<3} {nvls_busbw(chunks):6.1f} GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
