"""Sensitivity of NVIDIA presets to their unverified numbers: busbw at 1 GiB and 16 GiB.

The DGX H100 NVLink split over its 4 NVSwitch chips (5/4/4/5, not retrieved from a public
source) and the in-switch (NVLS) reduction rates (17.15 GB/s per NVLS channel: H100
derived from the published ~480 GB/s, B200 and NVL72 from Blackwell's 24 channels; NVL72
checked against a published 72-GPU curve) are varied by +-25%; every run uses default flags
with ``--algo nccl`` (NCCL's choice, run by the engine; NVLS pipelined as NCCL cuts it). Run: ``python benchmarks/bench_nvidia_sensitivity.py``
(about 2 minutes; ``--quick`` skips NVL72). Results are quoted in docs/calibration.md.
"""

from __future__ import annotations

import sys
import time

from netsim.run import run_collective

GiB = 1 << 30


def row(label: str, spec: str, op: str) -> None:
    start = time.perf_counter()
    cells = []
    for size in (GiB, 16 * GiB):
        run = run_collective(op, spec, "nccl", size)
        cells.append(f"{run.busbw_GBps:7.1f} ({run.record()['nccl']})")
    print(f"| {label:<34} | {op:<9} | {' | '.join(cells)} | {time.perf_counter() - start:5.1f} s |",
          flush=True)


def main(quick: bool) -> None:
    print("| case | op | busbw 1 GiB (GB/s, choice) | busbw 16 GiB | wall |")
    print("|---|---|---|---|---|")
    for split in ("5/4/4/5", "6/3/3/6", "4/5/5/4"):
        for op in ("allreduce", "allgather"):
            row(f"dgx-h100 split {split}", f"dgx-h100,links_per_switch={split}", op)
    for label, rate in (("-25%", 51.45), ("as preset", 68.6), ("+25%", 85.75)):
        row(f"dgx-h100 reduce_bw {rate} GB/s ({label})", f"dgx-h100,reduce_bw={rate}GB/s",
            "allreduce")
    for label, rate in (("-25%", 163.7), ("as preset", 218.3), ("+25%", 272.9)):
        row(f"dgx-b200 reduce_bw {rate} GB/s ({label})", f"dgx-b200,reduce_bw={rate}GB/s",
            "allreduce")
    if not quick:
        for label, rate in (("-25%", 18.19), ("as preset", 24.25), ("+25%", 30.31)):
            row(f"gb200-nvl72 reduce_bw {rate} GB/s ({label})",
                f"gb200-nvl72,reduce_bw={rate}GB/s", "allreduce")

if __name__ == "__main__":
    main("--quick" in sys.argv)
