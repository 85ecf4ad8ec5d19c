"""NVIDIA presets by default (``netsim coll allreduce --topo PRESET``, NCCL's model): curves
without cliffs the measurements do not show, one NVLS reduction parameter for every NVSwitch
generation, and the published NVLink5 / H200 curves (benchmarks/data/nvidia_*, sources in
each file) within 15% from 1 MiB and 30% below.

The figures come from ``python benchmarks/bench_nccl_curves.py`` (quoted in
docs/calibration.md, "NVLink5 and the NVLS reduction"); the points outside the goal today
are listed in ``SHORT`` with why and left to the report (``netsim validate``), not asserted.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pytest

from netsim.algorithms import AlgoOptions
from netsim.algorithms.nccl import nccl_choice, nccl_view
from netsim.algorithms.nccl.model import GPU_ARCH_OF_PRESET
from netsim.algorithms.nccl.tuning import (NVLS_CHANNEL_BW, NVLS_CHANNELS, candidates,
                                           protocol_efficiency)
from netsim.run import measured_gpus_per_thread, run_collective, run_sweep
from netsim.topology import parse_topology

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
MiB, GiB = 1 << 20, 1 << 30
#: NVLS reduced data per NVLS channel at 128 KiB chunks, GB/s: DGX H100's published 480 GB/s
#: busbw plateau (nccl-tests#212) = 274.4 GB/s algbw over NCCL's 16 SM90 channels.
HOPPER_PER_CHANNEL_GBPS = 17.15
#: Single-NVLink-domain NVIDIA presets whose default is NCCL's model.
PRESETS = ("dgx-a100", "dgx-h100", "dgx-b200", "gb200-nvl72")


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_default_curves_have_no_busbw_cliff(preset):
    """From 1 MiB to 8 GiB, busbw never drops by more than 15% from one size to the next
    (no published curve shows such a drop: benchmarks/data/nvidia_*). GB200 NVL72 would
    drop from 1,268 to 681 GB/s at 2 GiB if the tuner left NVLS for the ring."""
    sizes = [MiB << k for k in range(14)]
    runs = run_sweep("allreduce", parse_topology(preset), "default", sizes)
    busbw = [run.busbw_GBps for run in runs]
    for size, before, after in zip(sizes[1:], busbw, busbw[1:]):
        assert after >= 0.85 * before, (preset, size, before, after)


def test_the_tuners_own_nvls_rate_is_one_option_away():
    """nvls_rate=tuner rates NVLS with NCCL's formula (nvlsEfficiency x the NVLS graph): on
    72 NVL72 ranks with the former NVLink5 efficiency (H100's 0.8222) it picks the ring
    from 2 GiB; the default (netsim's simulated NVLS rate) keeps NVLS, which the engine runs
    faster there (the 1,268 -> 681 GB/s cliff of the former preset)."""
    topo = parse_topology("gb200-nvl72,eff=0.8222")
    size = 2 * GiB
    default = nccl_choice("allreduce", 72, size, AlgoOptions(topology=topo))
    old = nccl_choice("allreduce", 72, size,
                      AlgoOptions(topology=topo, extra={"nvls_rate": "tuner"}))
    assert (default.algorithm, old.algorithm) == ("nvls", "ring")
    with pytest.raises(Exception, match="nvls_rate 'guess' is not one of simulated, tuner"):
        nccl_choice("allreduce", 72, size,
                    AlgoOptions(topology=topo, extra={"nvls_rate": "guess"}))


def test_nvls_all_gather_and_reduce_scatter_stop_at_32_ranks():
    """NCCL runs NVLS for ops other than all-reduce only up to NCCL_MAX_NVLS_ARITY (32)
    local ranks (enqueue.cc): on 72 NVL72 ranks all-gather and reduce-scatter are rings,
    all-reduce stays NVLS; on 32 ranks all three may use NVLS."""
    topo = parse_topology("gb200-nvl72")
    options = AlgoOptions(topology=topo)
    picks = {op: nccl_choice(op, 72, 64 * MiB, options).algorithm
             for op in ("allgather", "reducescatter", "allreduce")}
    assert picks == {"allgather": "ring", "reducescatter": "ring", "allreduce": "nvls"}
    offered = {n: {c.algorithm for c in candidates("allgather", nccl_view(n, options), 64 * MiB)}
               for n in (32, 72)}
    assert "nvls" in offered[32] and "nvls" not in offered[72]


@pytest.mark.parametrize("preset", ["dgx-h100", "dgx-h100-cluster", "dgx-b200", "gb200-nvl72"])
def test_nvls_reduction_is_one_rate_per_nvls_channel(preset):
    """Every reducing NVSwitch preset's chips together reduce NCCL's NVLS channels of its
    GPU generation (16 on Hopper, 24 on Blackwell) x the generation's rate per channel
    (Hopper 17.15 GB/s, Blackwell 18.19), whatever the chip count (4 NVSwitch gen3, 2 or 18
    NVLink5 switch chips), and NCCL's model reads that rate back from the preset."""
    topo = parse_topology(preset)
    chips = [a["reduce_bandwidth"] for a in topo.node_attrs if a.get("reduce_bandwidth")]
    per_node = {"dgx-h100-cluster": 4}.get(preset, len(chips))
    total = sum(chips[:per_node]) / 1e9
    channels = NVLS_CHANNELS[GPU_ARCH_OF_PRESET[preset]]
    arch = GPU_ARCH_OF_PRESET[preset]
    assert total == pytest.approx(channels * NVLS_CHANNEL_BW[arch], rel=0.005)
    assert NVLS_CHANNEL_BW["hopper"] == HOPPER_PER_CHANNEL_GBPS
    if preset != "dgx-h100-cluster":
        view = nccl_view(8, AlgoOptions(topology=topo))
        assert view.nvls_channel_bw == pytest.approx(NVLS_CHANNEL_BW[arch], rel=0.005)


def read_curve(name: str) -> tuple[str, list[dict[str, float]]]:
    lines = (DATA / name).read_text().splitlines()
    header = "\n".join(line for line in lines if line.startswith("#"))
    rows = csv.DictReader(line for line in lines if not line.startswith("#"))
    return header, [{k: float(v) for k, v in row.items()} for row in rows]


NVL72 = "nvidia_gb200_nvl72_72gpu_allreduce_nccltests_coreweave_512MiB_8GiB.csv"
GB200_4 = "nvidia_gb200_4gpu_allreduce_nccltests_azure_ring_inplace.csv"
H200 = "nvidia_h200_8gpu_allreduce_nccltests_azure_nvls_inplace.csv"
A100 = "nvidia_a100_8gpu_allreduce_nccltests_azure_inplace.csv"
#: file -> (preset, ranks, NCCL_ALGO the run forced, sizes to run from)
CURVES = {NVL72: ("gb200-nvl72", 72, None, 512 * MiB), GB200_4: ("gb200-nvl72", 4, "ring", 1),
          H200: ("dgx-h100", 8, "nvls", 1), A100: ("dgx-a100", 8, None, 1)}
#: Points outside the goal today (bench_nccl_curves.py), why:
#: * NVL72 512 MiB: netsim 1,399 us, published 1,807 (-22%): the published times carry
#:   about 500 us more than size / plateau rate at every size, a per-call cost netsim's NVLS
#:   (25 us + pipeline fill) does not have; -13% at 1 GiB, within 5% from 2 GiB.
#: * GB200 4-GPU 1 KiB and H200 1-8 KiB, 1 MiB: the -g 4 / -g 8 host floor (20 / 40 us)
#:   against 10-30 us measured; H200 1 MiB is +15.4% (forced NVLS at 1 MiB).
SHORT = {
    A100: lambda s: False,
    NVL72: lambda s: s == 512 * MiB,
    GB200_4: lambda s: s == 1024,
    H200: lambda s: s in (1024, 2048, 8192, MiB),
}


def cases():
    for name, (preset, ranks, forced, smallest) in CURVES.items():
        for row in read_curve(name)[1]:
            size = int(row["size_bytes"])
            if size < smallest:
                continue
            if SHORT[name](size):        # reported by `netsim validate`, not asserted
                continue
            yield pytest.param(name, preset, ranks, forced, row, id=f"{preset}-{ranks}-{size}")


@pytest.mark.parametrize("name,preset,ranks,forced,row", list(cases()))
def test_published_nvlink5_and_h200_curves(name, preset, ranks, forced, row):
    extra = {"gpus_per_thread": measured_gpus_per_thread(DATA / name)}
    if forced:
        extra["nccl_algorithm"] = forced
    algo = "nccl" if forced else "default"
    run = run_collective("allreduce", preset, algo, row["size_bytes"], ranks=ranks,
                         options=AlgoOptions(extra=extra))
    ratio = (run.time_s / (row["time_us"] * 1e-6) if "time_us" in row
             else row["busbw_GBps"] / run.busbw_GBps)      # netsim time / published time
    tolerance = 0.15 if row["size_bytes"] >= MiB else 0.30
    assert abs(ratio - 1) <= tolerance, (name, row, run.record()["nccl"], ratio)


@pytest.mark.parametrize("name", [NVL72, GB200_4, H200, A100])
def test_curve_files_say_where_they_come_from(name):
    """Each file names its source, system, NCCL version or its absence, and its launch
    (nGpus per thread); sizes are powers of two; the timed file's algbw = size / time and
    busbw = 2 (n-1)/n x algbw as nccl-tests prints them."""
    header, rows = read_curve(name)
    assert re.search(r"source: https://github\.com/\S+/(pull/\d+|blob/[0-9a-f]{40}/)", header)
    assert "system:" in header and "NCCL" in header and "date:" in header
    assert measured_gpus_per_thread(DATA / name) in (1, 4, 8)
    sizes = [int(r["size_bytes"]) for r in rows]
    assert all(math.log2(s).is_integer() for s in sizes) and sizes == sorted(sizes)
    n = int(re.search(r"_(\d+)gpu_", name).group(1))
    for r in rows:
        if "time_us" in r:
            algbw = r["size_bytes"] / (r["time_us"] * 1e3)
            assert r["algbw_GBps"] == pytest.approx(algbw, rel=2e-3, abs=0.006)
            assert r["busbw_GBps"] == pytest.approx(r["algbw_GBps"] * 2 * (n - 1) / n,
                                                    rel=2e-3, abs=0.011)


def test_blackwell_ll_runs_at_its_rate_scale_and_nccl_still_chooses_ll():
    """On Blackwell the simulated ring LL moves its bytes at PROTOCOL_RATE_SCALE of NCCL's LL
    figure (the wire carries 1 / scale times more), while the choice stays NCCL's: 4 GB200
    at 4 MiB are ring/LL either way, and the bandwidth part of the time grows by 1 / scale."""
    from netsim.algorithms.nccl.model import PROTOCOL_RATE_SCALE

    scale = PROTOCOL_RATE_SCALE[("blackwell", "LL")]
    assert 0 < scale < 1
    topo = parse_topology("gb200-nvl72")
    base = {"gpus_per_thread": 0, "nccl_algorithm": "ring", "nccl_protocol": "LL"}
    small, large = (run_collective("allreduce", topo, "nccl", size, ranks=4,
                                   options=AlgoOptions(extra=dict(base)))
                    for size in (2 * MiB, 4 * MiB))
    chosen = run_collective("allreduce", topo, "nccl", 4 * MiB, ranks=4,
                            options=AlgoOptions(extra={"gpus_per_thread": 0,
                                                       "nccl_algorithm": "ring"}))
    assert chosen.record()["nccl"] == "ring/LL/16ch"
    # 2 MiB more at the LL rate: 2 MiB x 2 (n-1)/n / (scale x NCCL's LL efficiency x links)
    view = nccl_view(4, AlgoOptions(topology=topo))
    eff = protocol_efficiency("ring", "LL", view) * scale
    links = float(topo.out_degree_bandwidth[0])
    assert large.time_s - small.time_s == pytest.approx(2 * MiB * 1.5 / (eff * links), rel=0.02)
