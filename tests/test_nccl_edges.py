"""NCCL's model at its edges: one rank (a local copy) and links failed from the start (NCCL
plans on the links it finds at init)."""

import numpy as np
import pytest

from netsim.algorithms import AlgoOptions, build_schedule
from netsim.algorithms.nccl import nccl_view
from netsim.algorithms.nccl.harness import LAUNCH_PER_GPU_S
from netsim.routing.reroute import surviving_topology
from netsim.run import parse_fault_option, run_collective
from netsim.topology import parse_topology
from cli_helpers import run_main

H100_MEMORY_BW = 3.35e12          # dgx-h100.yaml chip.memory_bandwidth (H100 SXM datasheet)


@pytest.mark.parametrize("op", ["allreduce", "allgather", "reducescatter", "broadcast",
                                "reduce"])
def test_one_rank_is_a_copy_in_the_gpus_memory_beside_the_launch(op):
    """onerank.cu: nRanks == 1 copies send to receive buffer (read + write of the size in
    HBM); the host's launch runs beside it, so small sizes cost one launch."""
    for size in (1024, 64 << 20, 1 << 30):
        run = run_collective(op, "dgx-h100", "default", size, ranks=1)
        copy = 2 * size / H100_MEMORY_BW
        assert run.time_s == pytest.approx(max(copy, LAUNCH_PER_GPU_S), rel=1e-9)
        assert run.record()["nccl"] == "one-rank copy"
    # nccl-tests -g 1 on one GPU: the same; the device time alone is the copy
    device = run_collective("allreduce", "dgx-h100", "nccl", 1024, ranks=1,
                            options=AlgoOptions(extra={"gpus_per_thread": 0}))
    assert device.time_s == pytest.approx(2 * 1024 / H100_MEMORY_BW)


def test_one_rank_without_a_memory_figure_is_refused_in_one_line(capsys):
    code, out, err = run_main(["coll", "allreduce", "--topo", "mesh:2x2", "--algo", "nccl",
                               "--ranks", "1"], capsys)
    assert code != 0 and "Traceback" not in err
    assert "memory_bandwidth" in err and len(err.strip().splitlines()) == 1


def test_a_switch_failed_from_the_start_is_left_out_of_nvls():
    """--fail-link node:sw0 on DGX H100: NCCL finds 13 of 18 NVLinks and three NVSwitches
    at init; NVLS reduces in those three, so nothing is sent to the failed one."""
    size = 1 << 30
    fault = parse_fault_option("node:sw0", "fail")
    healthy = run_collective("allreduce", "dgx-h100", "default", size)
    failed = run_collective("allreduce", "dgx-h100", "default", size, faults=[fault])
    assert failed.record()["nccl_algorithm"] == "nvls"
    assert failed.time_s > healthy.time_s
    # the switches' reduction (3 of 4 chips) bounds it: at least 4/3 of the healthy time
    # less the pipeline's fill, which is the same in both
    assert failed.time_s > 1.25 * healthy.time_s
    topo = parse_topology("dgx-h100")
    sw0 = topo.node("sw0")
    failed_links = np.isin(topo.link_src, [sw0]) | np.isin(topo.link_dst, [sw0])
    survivors = surviving_topology(topo, failed_links)[0]
    schedule = build_schedule("allreduce", "nccl", 8, size, AlgoOptions(topology=survivors))
    assert sw0 not in schedule.extra_nodes and len(schedule.extra_nodes) == 3


def test_a_link_failed_from_the_start_lowers_the_bandwidth_nccl_sees():
    topo = parse_topology("dgx-h100")
    failed = np.zeros(topo.num_links, dtype=bool)
    failed[topo.link("gpu0->sw1")] = True
    view = nccl_view(8, AlgoOptions(topology=surviving_topology(topo, failed)[0]))
    whole = nccl_view(8, AlgoOptions(topology=topo))
    assert view.gpu_bw < whole.gpu_bw


def test_fail_link_runs_with_the_default_algorithm_on_the_cli(capsys):
    code, out, err = run_main(["coll", "allreduce", "--topo", "dgx-h100", "--size", "64MiB",
                               "--fail-link", "node:sw0", "--format", "csv"], capsys)
    assert code == 0, err
    assert "nvls/Simple" in out


def test_a_run_with_no_bound_has_no_efficiency_rather_than_zero():
    # One rank moves nothing over links: no bound applies, and 0% would read as a run
    # that wasted all its time.
    run = run_collective("allreduce", parse_topology("dgx-h100"), "nccl", 2**20, ranks=1)
    assert run.bound_s == 0 and run.efficiency is None and run.machine_efficiency is None


@pytest.mark.parametrize("spec", ["dgx-h100", "gb200-nvl72", "galaxy-wh"])
def test_an_empty_collective_costs_its_latency_and_has_a_latency_bound(spec, capsys):
    # nccl-tests starts its sweeps at 0 bytes; the default algorithm still launches and
    # synchronises, so the time is positive and at least the latency bound.
    import json

    code, out, err = run_main(["coll", "allreduce", "--topo", spec, "--size", "0",
                               "--format", "json"], capsys)
    assert code == 0, err
    record = json.loads(out)["records"][0]
    assert record["time_s"] > 0 and record["time_s"] >= record["bound_s"] > 0
    assert record["bound"] == "latency"
