"""Fit galaxy-bh's calibration (alpha, launch, gamma, ring_packet_cost) to Blackhole data.

Data: tt-metal's CCL benchmark on 8 Blackhole chips in a ring, 2 Ethernet links per
neighbour per direction at 25 GB/s ("line rate 25.0 GB/s per link per direction"), bf16,
8192 B packets: raw kernel times per call, ``benchmarks/data/blackhole_8ring_*_tt_metal_
measured.csv`` (tech_reports/CCLs/results/SUMMARY_blackhole_bfloat16_8192.md, tt-metal
commit 1080d1c4). One value of each parameter for all three ops (all_gather,
reduce_scatter, all_reduce with ``tt_metal``, what the default command runs: the ring,
its reduce-scatter direct up to 512 KiB) and every size from 16 KiB to 8-16 GiB, fitted as
tt_fit.py says. Fixed by sources, not fitted: 515 ns per hop
and the framing of 8192 B payload + 48 B header in Ethernet frames (galaxy-bh.yaml).

The machine simulated is one 8-chip ring axis of galaxy-bh (``ring:8,bw=25GB/s,lat=515ns,
links=2`` with galaxy-bh's calibration): the benchmark's ring. Run ``python
benchmarks/fit_blackhole.py`` (about five minutes) to print the fit and the error per size.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tt_fit import Machine, fit_and_report

from netsim.run import read_measured

DATA = Path(__file__).resolve().parent / "data"
OPS = ("allgather", "reducescatter", "allreduce")
MACHINE = Machine("ring:8,bw=25GB/s,lat=515ns,links=2",
                  {"packet": "8192B", "header": "48B", "fabric": "ring"})


def main() -> None:
    data = [(op, "tt_metal", row) for op in OPS
            for row in read_measured(DATA / f"blackhole_8ring_{op}_tt_metal_measured.csv")]
    # alpha us, launch us, gamma GB/s, ring packet cost ns
    fit_and_report(data, MACHINE, start=[1.5, 5.0, 60.0, 20.0])


if __name__ == "__main__":
    sys.exit(main())
