"""Regenerate the README figures: ``python docs/figures/make_figures.py`` (from the repo root).

Each figure is the output of a public netsim function; the commands in the comments give
the same pictures from the command line.
"""

from __future__ import annotations

from pathlib import Path

from netsim.run.collective import run_collective, run_sweep
from netsim.engine import simulate
from netsim.report.curves import draw_curves
from netsim.report.heatmap import draw_heatmap
from netsim.topology import parse_topology
from netsim.schedule.traffic import all_to_all

HERE = Path(__file__).parent


def mesh_alltoall() -> None:
    """All-to-all of 1 MiB per pair on a 4x4 mesh with XY routing: the middle is hot."""
    topo = parse_topology("mesh:4x4,bw=50GB/s,lat=1us")
    result = simulate(topo, all_to_all(16, 2 ** 20))
    draw_heatmap(topo, result, path=HERE / "heatmap-mesh-alltoall.png",
                 title="all-to-all, 1 MiB per pair, 4x4 mesh (XY routing): link utilisation")


def torus_ring() -> None:
    """A ring all-reduce of 64 MiB on a 4x4 torus: the ring's links and its wrap-arounds."""
    run = run_collective("allreduce", "torus:4x4,bw=50GB/s", "ring", "64MiB")
    draw_heatmap(parse_topology("torus:4x4,bw=50GB/s"), run.result,
                 path=HERE / "heatmap-torus-ring-allreduce.png",
                 title="ring all-reduce, 64 MiB, 4x4 torus: link utilisation")


def busbw_curves() -> None:
    """All-reduce busbw over message size on four 16-endpoint machines (fastest algorithm).

    Same as ``netsim compare allreduce --topo ... --sizes 1KiB:1GiB --plot FILE``.
    """
    specs = {"torus 4x4, 4 x 50 GB/s links": "torus:4x4,bw=50GB/s,lat=1us",
             "mesh 4x4, 2-4 x 50 GB/s links": "mesh:4x4,bw=50GB/s,lat=1us",
             "NVSwitch, 16 GPUs x 200 GB/s": "nvswitch:16,bw=200GB/s,lat=1us",
             "fat tree k=4, 50 GB/s per host": "fattree:k=4,bw=50GB/s,lat=1us"}
    from netsim.run import ran_text

    series = {}
    for label, spec in specs.items():
        rows = [r.record() for r in run_sweep("allreduce", spec, "auto", "1KiB:1GiB")]
        series[f"{label}: {ran_text(rows)}"] = rows    # the legend says what ran
    draw_curves(series, HERE / "busbw-allreduce.png",
                title="all-reduce on 16 endpoints: fastest algorithm per size, 1 us per link")


if __name__ == "__main__":
    import sys

    wanted = sys.argv[1:] or ["mesh_alltoall", "torus_ring", "busbw_curves"]
    for name in wanted:
        globals()[name]()
