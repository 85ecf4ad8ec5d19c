"""Fit the Wormhole calibration (alpha, launch, gamma, ring_packet_cost) to raw measurements.

Data: tt-metal's CCL benchmark on 8 Wormhole chips, 1 Ethernet link per direction at
12.5 GB/s, bf16, 6144 B packets, DRAM: raw kernel times per call of the ring all_gather,
reduce_scatter and all_reduce and of the line all_gather and all_reduce
(``benchmarks/data/wormhole_t3000_*_tt_metal_{ring,line}_measured.csv``, from
tech_reports/CCLs/results/FULL_wormhole_b0_bfloat16_6144.md, tt-metal commit a8982e4a).
The machine is the t3000 preset with 1 link (``mesh:2x4,bw=12.5GB/s,lat=711ns,links=1``,
``fabric: auto``: rings on the ring fabric). Rings run ``tt_metal``, what the default command
runs (the ring, its reduce-scatter direct up to 512 KiB), lines ``tt_line``. The direct
reduce-scatter is one step where the ring all-gather takes n/2 and the line n-1, which is
what separates the per-step cost (alpha) from the per-call cost (launch): with 8 chips
alone and ring reduce-scatters they cannot be told apart.

One value of each parameter for the five curves and every size from 16 KiB to 8 GiB,
fitted as tt_fit.py says. Left out of the objective (and printed): sizes whose measured
time exceeds that of the next larger size (reduce_scatter and all_reduce at 512 KiB, where
the op changes its program, not its bytes). Fixed by sources: 711 ns per hop and the
framing of 6144 B payload + 48 B header in Ethernet frames (t3000.yaml). Run ``python
benchmarks/fit_wormhole.py`` (about seven minutes) to print the fit and the error per size
(benchmarks/RESULTS.md keeps a run's figures).

Not applied to the Wormhole presets, whose calibration is fitted to tt-metal's published
fit formulas (benchmarks/fit_calibration.py; tests and docs hold its figures). One
``launch`` cannot fit 2 chips as well as 8: tt-metal's fixed cost per call grows with the
device count.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from tt_fit import Machine, fit_and_report

from netsim.run import read_measured

DATA = Path(__file__).resolve().parent / "data"
CURVES = (("allgather", "ring"), ("reducescatter", "ring"), ("allreduce", "ring"),
          ("allgather", "line"), ("allreduce", "line"))
ALGORITHM = {"ring": "tt_metal", "line": "tt_line"}
MACHINE = Machine("mesh:2x4,bw=12.5GB/s,lat=711ns,links=1",
                  {"packet": "6144B", "header": "48B", "fabric": "auto"})


def rows() -> list[tuple[str, str, dict]]:
    return [(op, ALGORITHM[shape], row) for op, shape in CURVES for row in
            read_measured(DATA / f"wormhole_t3000_{op}_tt_metal_{shape}_measured.csv")]


def monotone(data) -> np.ndarray:
    """False where the measured time exceeds the next larger size's (a program change)."""
    keep = np.ones(len(data), dtype=bool)
    for i in range(len(data) - 1):
        same = data[i][:2] == data[i + 1][:2]
        keep[i] = not (same and data[i][2]["time_s"] > data[i + 1][2]["time_s"])
    return keep


def main() -> None:
    data = rows()
    # alpha us, launch us, gamma GB/s, ring packet cost ns (start: the preset's values)
    fit_and_report(data, MACHINE, start=[1.62, 5.48, 60.8, 74.2], keep=monotone(data))


if __name__ == "__main__":
    sys.exit(main())
