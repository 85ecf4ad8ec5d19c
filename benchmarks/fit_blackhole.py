"""Fit galaxy-bh's calibration (alpha, launch, launch_per_device, gamma, ring_packet_cost)
to Blackhole data.

Data: tt-metal's CCL benchmark on Blackhole chips, 2 Ethernet links per neighbour per
direction at 25 GB/s ("line rate 25.0 GB/s per link per direction"), bf16, 8192 B packets,
raw kernel times per call: 8 chips on a ring (``benchmarks/data/blackhole_8ring_*_tt_metal_
measured.csv``, tech_reports/CCLs/results/SUMMARY_blackhole_bfloat16_8192.md) and lines of
2, 4 and 8 chips (``blackhole_{2,4,8}line_*``, FULL_blackhole_bfloat16_8192.md, "line,
DRAM"; tt-metal commit 1080d1c4). One value of each parameter for all three ops
(all_gather, reduce_scatter, all_reduce), every size from 4-16 KiB to 8-16 GiB and every
chip count, fitted as tt_fit.py says. The rings run ``tt_metal``, what the default command
runs (the ring, its reduce-scatter direct up to 512 KiB), the lines ``tt_line`` on the
first 2, 4 or 8 chips of the preset's torus, as ``netsim validate`` runs them. The line
curves are what separate ``launch`` from ``launch_per_device``: the small-size time of a
line grows with its chips (all_gather 4.3, 7.4 and 13.5 us on 2, 4 and 8 chips). Fixed by
sources, not fitted: 515 ns per hop, the framing of 8192 B payload + 48 B header in
Ethernet frames, and each CCL on its own fabric (``fabric: auto``: the rings on the ring
fabric, the lines on the line fabric, as tt-metal configures them; galaxy-bh.yaml).

Run ``python benchmarks/fit_blackhole.py`` (about 20 minutes here: 253 points, about 3.5 s
for all of them per evaluation) to print the fit and the error per size.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tt_fit import Machine, fit_and_report

from netsim.run import read_measured

DATA = Path(__file__).resolve().parent / "data"
OPS = ("allgather", "reducescatter", "allreduce")
MACHINE = Machine("ring:8,bw=25GB/s,lat=515ns,links=2",
                  {"packet": "8192B", "header": "48B", "fabric": "auto"})
#: galaxy-bh's generator: the lines run on its first chips, as the validate rows do.
TORUS = "torus:8x4,bw=25GB/s,lat=515ns,links=2"
LINES = (2, 4, 8)


def rows() -> list[tuple]:
    data = []
    for op in OPS:
        data += [(op, "tt_metal", row) for row in
                 read_measured(DATA / f"blackhole_8ring_{op}_tt_metal_measured.csv")]
        for n in LINES:
            data += [(op, "tt_line", row, TORUS, n) for row in
                     read_measured(DATA / f"blackhole_{n}line_{op}_tt_metal_measured.csv")]
    return data


def main() -> None:
    # alpha us, launch us, gamma GB/s, ring packet cost ns, launch_per_device us
    fit_and_report(rows(), MACHINE, start=[1.0, 3.0, 327.9, 17.9, 1.5])


if __name__ == "__main__":
    sys.exit(main())
