"""NCCL's tuner (netsim.algorithms.nccl) and the 'nccl' algorithm run through the engine."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from netsim.algorithms import AlgoOptions
from netsim.algorithms.nccl import (NcclView, candidates, channels_for, choose,
                                    protocol_efficiency)
from netsim.algorithms.nccl.tuning import (BASE_LATENCY_US, HW_LATENCY_US, nvls_graph,
                                           ring_graph)
from netsim.cli import cli as main
from netsim.errors import InputError
from cli_helpers import run_main
from netsim.run import read_measured, run_collective

H100 = NcclView(ranks=8, arch="hopper", gpu_bw=18 * 20.6, nvls=True)   # SM90_NVLINK_BW
DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data"


def test_ring_latency_is_base_plus_a_step_latency_per_ring_step():
    for op, steps in (("allreduce", 14), ("allgather", 7), ("reducescatter", 7)):
        for p, proto in enumerate(("LL", "LL128", "Simple")):
            ring = next(c for c in candidates(op, H100, 0) if (c.algorithm, c.protocol)
                        == ("ring", proto))
            assert ring.latency_us == pytest.approx(BASE_LATENCY_US["ring"][p]
                                                    + steps * HW_LATENCY_US["nvlink"]["ring"][p])


def test_graphs_fit_the_gpu_bandwidth():
    channels, speed = ring_graph(H100)
    assert channels * speed <= H100.gpu_bw and channels * speed > H100.gpu_bw / 2
    heads, nvls_speed = nvls_graph(H100)
    assert heads == 8 and heads * nvls_speed <= H100.gpu_bw * 8 / 7


def test_choice_is_the_fastest_candidate_and_moves_to_bandwidth_protocols_with_size():
    for op in ("allreduce", "allgather", "reducescatter", "broadcast"):
        protocols = []
        for size in (8, 1 << 12, 1 << 16, 1 << 20, 1 << 24, 1 << 30):
            best = choose(op, H100, size)
            assert best.time_us == min(c.time_us for c in candidates(op, H100, size))
            protocols.append(best.protocol)
        assert protocols[0] == "LL" and protocols[-1] == "Simple"
    assert choose("allreduce", H100, 1 << 30).algorithm == "nvls"
    assert choose("allreduce", NcclView(ranks=8, gpu_bw=370.8, nvls=False),
                  1 << 30).algorithm == "ring"


def test_protocol_efficiency_and_channels_follow_the_tuner_rules():
    channels, speed = ring_graph(H100)
    assert protocol_efficiency("ring", "LL", H100) == pytest.approx(
        min(141.0, channels * speed / 2) / (channels * speed))
    assert protocol_efficiency("ring", "LL128", H100) == pytest.approx(0.92)
    assert protocol_efficiency("ring", "Simple", H100) == 1.0
    # fewer channels while each of the 512 threads would get less than 64 B (Simple)
    assert channels_for("ring", "Simple", 1 << 30, H100) == channels
    assert channels_for("ring", "Simple", 3 * 512 * 64, H100) == 3


def test_engine_runs_the_pick_with_the_protocol_costs():
    # One switch, 100 GB/s per GPU: a ring step moves S/n per GPU in (S/n) / (eff B), after
    # the protocol's step latency; every rank first spends the base latency.
    n, size, bw = 4, 4e6, 100e9
    for proto in ("LL", "LL128", "Simple"):
        opts = AlgoOptions(extra={"nccl_algorithm": "ring", "nccl_protocol": proto})
        run = run_collective("allreduce", f"nvswitch:{n},bw=100GB/s", "nccl", size,
                             options=opts, alpha=1e-3)          # alpha replaced by hwLat
        view = NcclView(ranks=n, gpu_bw=100.0)
        p = ("LL", "LL128", "Simple").index(proto)
        eff = protocol_efficiency("ring", proto, view)
        expected = (BASE_LATENCY_US["ring"][p] * 1e-6 + 2 * (n - 1)
                    * (HW_LATENCY_US["nvlink"]["ring"][p] * 1e-6 + size / n / eff / bw))
        assert run.time_s == pytest.approx(expected, rel=1e-9)
        record = run.record()
        assert (record["nccl_algorithm"], record["protocol"]) == ("ring", proto)


def test_one_number_through_coll_compare_scenario_and_the_api(tmp_path):
    api = run_collective("allreduce", "dgx-h100", "nccl", "1MiB").time_s
    runner = CliRunner()
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\njobs:\n  - kind: collective\n    name: j\n"
                        "    topology: dgx-h100\n    op: allreduce\n    algorithm: nccl\n"
                        "    size: 1MiB\n")
    ran = runner.invoke(main, ["run", str(scenario), "--format", "json"])
    [job] = [r for r in json.loads(ran.output)["records"] if r.get("job") == "j"]
    assert job["time_s"] == api and job["nccl"].startswith("ring/")
    coll = json.loads(runner.invoke(main, ["coll", "allreduce", "--topo", "dgx-h100", "--algo",
                                           "nccl", "--size", "1MiB", "--format", "json"]).output)
    comp = json.loads(runner.invoke(main, ["compare", "allreduce", "--topo", "dgx-h100",
                                           "--algo", "nccl", "--size", "1MiB",
                                           "--format", "json"]).output)
    assert coll["records"][0]["time_s"] == api == comp["records"][0]["time_s"]
    assert coll["records"][0]["protocol"] in ("LL", "LL128", "Simple")


@pytest.mark.parametrize("op", ["allreduce", "allgather"])
def test_default_flags_reproduce_published_dgx_h100_busbw(op):
    """Published large-size busbw (benchmarks/data, with sources) within 20%; the
    smallest published size of each file only (the 16 GiB NVLS run takes ~10 s)."""
    rows = read_measured(DATA / f"nvidia_dgx_h100_{op}_published_points.csv")
    for row in rows[:1]:
        run = run_collective(op, "dgx-h100", "nccl", row["size_bytes"])
        assert run.busbw_GBps == pytest.approx(row["busbw_GBps"], rel=0.20)


@pytest.mark.parametrize("op", ["allgather", "reducescatter", "allreduce"])
def test_galaxy_bh_calibration_reproduces_blackhole_ring_measurements(op):
    """galaxy-bh's fitted alpha/launch/gamma/ring cost on one 8-chip ring at 25 GB/s
    against tt-metal's raw Blackhole kernel times: within 20% from 1 MiB, 35% below."""
    from netsim.topology import parse_topology
    from netsim.topology.calibration import Calibration, apply_calibration, calibration_of

    preset = calibration_of(parse_topology("galaxy-bh"))
    ring = apply_calibration(parse_topology("ring:8,bw=25GB/s,lat=515ns,links=2"), preset)
    rows = read_measured(DATA / f"blackhole_8ring_{op}_tt_metal_measured.csv")
    for row in rows[::3]:
        sim = run_collective(op, ring, "tt_ring", row["size_bytes"]).time_s
        tol = 0.20 if row["size_bytes"] >= 1 << 20 else 0.35
        assert sim == pytest.approx(row["time_s"], rel=tol), row
    assert isinstance(preset, Calibration) and preset.alpha > 0 and preset.gamma > 0


def test_auto_stays_the_fastest_netsim_algorithm():
    run = run_collective("allgather", "dgx-h100", "auto", "1MiB")
    assert "nccl" not in run.candidates and run.algorithm != "nccl"


DEVICE_ONLY = AlgoOptions(extra={"gpus_per_thread": 0})


@pytest.mark.parametrize("op,ranks,size", [("allreduce", 8, 8), ("allreduce", 8, 1 << 20),
                                           ("allgather", 4, 64 << 10),
                                           ("allreduce", 8, 64 << 20)])
def test_time_is_the_larger_of_device_and_host_enqueue(op, ranks, size):
    """nccl-tests -g N: one thread enqueues N GPUs per iteration; back-to-back iterations
    make the time per iteration max(device time, N x launch per GPU) (harness.py)."""
    from netsim.algorithms.nccl.harness import LAUNCH_PER_GPU_S

    run = run_collective(op, "dgx-h100", "nccl", size, ranks=ranks,
                         options=AlgoOptions(extra={"gpus_per_thread": ranks}))
    device = run_collective(op, "dgx-h100", "nccl", size, ranks=ranks,
                            options=DEVICE_ONLY).time_s
    assert run.time_s == pytest.approx(max(device, ranks * LAUNCH_PER_GPU_S), rel=1e-12)
    assert run.record()["host_s"] == pytest.approx(ranks * LAUNCH_PER_GPU_S)
    assert run.record()["gpus_per_thread"] == ranks
    one = run_collective(op, "dgx-h100", "nccl", size, ranks=ranks)   # default: -g 1
    assert one.record()["gpus_per_thread"] == 1
    assert one.time_s == pytest.approx(device)      # -g 1: one launch hides under the GPU


def test_gpus_per_thread_must_be_a_count_of_the_hosts_gpus():
    with pytest.raises(Exception, match="gpus_per_thread"):
        run_collective("allreduce", "dgx-h100", "nccl", 8,
                       options=AlgoOptions(extra={"gpus_per_thread": -1}))
    # an NVL72 compute tray drives 4 GPUs; a DGX 8; 4 ranks cannot be 8 GPUs of one thread
    with pytest.raises(InputError, match="gpus_per_thread 8: one host of gb200-nvl72 has 4"):
        run_collective("allreduce", "gb200-nvl72", "nccl", 8,
                       options=AlgoOptions(extra={"gpus_per_thread": 8}))
    with pytest.raises(InputError, match="more than the 4 ranks"):
        run_collective("allreduce", "dgx-h100", "nccl", 8, ranks=4,
                       options=AlgoOptions(extra={"gpus_per_thread": 8}))


def test_host_launch_constant_is_the_least_squares_fit_of_the_floors():
    """LAUNCH_PER_GPU_S is the least-squares fit (log error) of max(device, N h) over the
    published -g N curves up to 16 MiB (benchmarks/fit_nccl_host.py): the squared error
    grows 0.1 us either side of it."""
    import math

    from netsim.algorithms.nccl.harness import LAUNCH_PER_GPU_S

    rows = []
    for name, op, n in (("8gpu_allreduce_nccltests_voltagepark", "allreduce", 8),
                        ("8gpu_allreduce_nccltests_together_1MiB_8GiB", "allreduce", 8),
                        ("8gpu_allgather_nccltests_together", "allgather", 8),
                        ("4gpu_allreduce_nccltests_waynehacking8", "allreduce", 4),
                        ("4gpu_allgather_nccltests_waynehacking8", "allgather", 4)):
        for row in read_measured(DATA / f"nvidia_h100_{name}.csv"):
            if row["size_bytes"] <= 16 << 20:
                device = run_collective(op, "dgx-h100", "nccl", row["size_bytes"], ranks=n,
                                        options=DEVICE_ONLY).time_s
                rows.append((n, device, row["time_s"]))

    def cost(h):
        return sum(math.log(max(d, n * h) / t) ** 2 for n, d, t in rows)

    h = LAUNCH_PER_GPU_S
    assert len(rows) == 86
    assert cost(h) < cost(h - 0.1e-6) and cost(h) < cost(h + 0.1e-6)


def test_nvls_is_cut_in_nccl_chunks():
    """enqueue.cc: 128 KiB chunks, 64 / 32 / 16 KiB below 64 / 8 / 2 x channels x heads x
    chunk; the pipeline depth is the loop count size / (channels x heads x chunk)."""
    from netsim.algorithms.nccl.tuning import nvls_chunk_size, nvls_pipeline_depth

    concurrent = 16 * 8                                   # H100: 16 channels x 8 heads
    for size in (1 << 20, 2 << 20, 8 << 20, 64 << 20, 1 << 30, 4 << 30):
        chunk = nvls_chunk_size(size, H100)
        assert chunk in (16384, 32768, 65536, 131072)
        bigger = 2 * chunk
        limit = {32768: 2, 65536: 8, 131072: 64}.get(bigger)
        assert chunk == 131072 or size < limit * concurrent * bigger
        depth = nvls_pipeline_depth(size, H100)
        assert (depth - 1) * concurrent * chunk < size <= depth * concurrent * chunk
    size = 16 << 20
    default = run_collective("allreduce", "dgx-h100", "nccl", size)
    assert default.record()["nccl_algorithm"] == "nvls"


def test_nvls_loop_fill_is_added_to_a_deep_engine_pipeline():
    """NCCL's NVLS loop takes D + NVLS_FILL_STAGES iterations: the engine runs NCCL's D
    chunks, at least 16 (its own fill small), and the launch carries the fill,
    NVLS_FILL_STAGES iterations of the busiest switch's reductions at their bytes' share.
    A caller's --chunks runs the engine's pipeline alone."""
    from netsim.algorithms.nccl import nccl_view
    from netsim.algorithms.nccl.tuning import (NVLS_FILL_STAGES, nvls_copy_share,
                                               nvls_iteration_share, nvls_pipeline_depth,
                                               nvls_reduce_factor)
    from netsim.topology import parse_topology

    view = nccl_view(8, AlgoOptions(topology=parse_topology("dgx-h100")))
    for size in (2 << 20, 16 << 20, 256 << 20):
        default = run_collective("allreduce", "dgx-h100", "nccl", size)
        chunks = max(16, nvls_pipeline_depth(size, view))
        deep = run_collective("allreduce", "dgx-h100", "nccl", size,
                              options=AlgoOptions(chunks=chunks))
        # 4 switch chips share the reduction evenly: size / (4 x 68.6 GB/s) each
        busiest = size / 274.4e9 * nvls_reduce_factor(size, view)
        fill = (NVLS_FILL_STAGES * busiest * nvls_iteration_share(size, view)
                * nvls_copy_share(size, view))
        assert default.time_s - deep.time_s == pytest.approx(fill, rel=1e-4)
        assert 0 < fill < busiest * NVLS_FILL_STAGES


def test_gpus_per_thread_on_the_command_line(tmp_path, capsys):
    """The default is one process per GPU (as frameworks launch NCCL), the time the Python
    API gives; `--gpus-per-thread 8` (nccl-tests -g 8) is held at 8 x the per-GPU host time
    at 8 B, and so is a run compared with a measured -g 8 log (its 'nGpus 8'); more GPUs
    than a host has is refused in one line, and so is the option on any other algorithm."""
    def coll(*extra):
        out = CliRunner().invoke(main, ["coll", "allreduce", "--topo", "dgx-h100", "--algo",
                                        "nccl", "--size", "8", "--format", "json", *extra])
        assert out.exit_code == 0, out.output
        return json.loads(out.output)["records"][0]

    one = coll()
    api = run_collective("allreduce", "dgx-h100", "nccl", 8)
    assert one["time_s"] == api.time_s and one["gpus_per_thread"] == 1
    eight = coll("--gpus-per-thread", "8")
    assert eight["gpus_per_thread"] == 8 and eight["time_s"] == eight["host_s"]
    assert one["time_s"] < eight["time_s"]
    log = tmp_path / "ar.log"
    log.write_text("# nThread 1 nGpus 8 minBytes 8 maxBytes 8\n"
                   "#  size  count  type  redop  root  time  algbw  busbw #wrong\n"
                   "      8      2  float   sum    -1  40.10   0.00   0.00      0\n")
    measured = coll("--measured", str(log))
    assert measured["gpus_per_thread"] == 8 and measured["time_s"] == eight["time_s"]
    code, _, err = run_main(["coll", "allreduce", "--topo", "dgx-h100", "--size", "8",
                             "--gpus-per-thread", "9"], capsys)
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "gpus_per_thread 9: one host of dgx-h100 has 8 GPUs" in err
    refused = CliRunner().invoke(main, ["coll", "allreduce", "--topo", "dgx-h100", "--algo",
                                        "ring", "--gpus-per-thread", "1"])
    assert refused.exit_code == 2 and "applies to NCCL's model" in refused.output and "--algo ring" in refused.output


def test_nccl_environment_on_the_command_line_forces_the_model():
    """--nccl ALGO=...,PROTO=... gives the choice AlgoOptions.extra gives; what the model
    does not take is refused in one line."""
    def coll(*extra):
        out = CliRunner().invoke(main, ["coll", "allreduce", "--topo", "dgx-h100", "--size",
                                        "64MiB", "--format", "json", *extra])
        return out
    forced = coll("--nccl", "NCCL_ALGO=Ring,PROTO=simple")
    assert forced.exit_code == 0, forced.output
    record = json.loads(forced.output)["records"][0]
    api = run_collective("allreduce", "dgx-h100", "nccl", 64 * 2**20, options=AlgoOptions(
        extra={"nccl_algorithm": "ring", "nccl_protocol": "Simple"}))
    assert record["nccl"].startswith("ring/Simple") and record["time_s"] == api.time_s
    assert json.loads(coll().output)["records"][0]["nccl"].startswith("nvls")
    for bad, why in (("ALGO=PAT", "not one of"), ("MAX_NCHANNELS=4", "not modelled"),
                     ("ALGO", "KEY=VALUE")):
        out = coll("--nccl", bad)
        assert out.exit_code != 0 and why in out.output + str(out.exception)
    out = CliRunner().invoke(main, ["coll", "allreduce", "--topo", "mesh:4x4", "--nccl",
                                    "ALGO=ring"])
    assert out.exit_code == 2 and "applies to NCCL's model" in out.output
    # NCCL's own spelling of NVLS tree (NCCL_ALGO=NVLSTree): across nodes, not inside one
    out = CliRunner().invoke(main, ["coll", "allreduce", "--topo", "dgx-h100-cluster:nodes=2",
                                    "--size", "1MiB", "--format", "json", "--nccl",
                                    "NCCL_ALGO=NVLSTree"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["records"][0]["nccl"].startswith("nvls_tree/")
    out = coll("--nccl", "ALGO=nvlstree")
    assert out.exit_code != 0 and "no allreduce with algorithm=nvls_tree" in str(out.exception)


def test_nvls_loop_iteration_on_72_ranks_has_32_heads():
    """An NVLS loop iteration moves channels x heads x chunk bytes; NCCL's NVLS graph has
    at most NCCL_MAX_NVLS_ARITY (32) heads (search.cc), so on 72 NVL72 ranks an iteration
    is 24 x 32 chunks, and 512 MiB is cut into 64 KiB chunks (under 8 x 24 x 32 x 64 KiB
    it would be 32 KiB: it is not)."""
    from netsim.algorithms.nccl.tuning import nvls_chunk_size, nvls_iteration_share

    view = NcclView(ranks=72, arch="blackwell", gpu_bw=740.0, nvls=True)
    size = 512 << 20
    assert nvls_chunk_size(size, view) == 65536
    assert nvls_iteration_share(size, view) == pytest.approx(24 * 32 * 65536 / size)
    assert nvls_iteration_share(1 << 20, view) == 1.0


def test_nvls_reductions_run_at_the_rate_of_nccls_chunk():
    """A fixed time per NVLS chunk (NVLS_CHUNK_TIME_US): a chunk of s bytes costs s / R + t
    at the channel's streaming rate R; reduce_bandwidth is the rate at 128 KiB chunks, so
    sizes NCCL cuts into 128 KiB chunks are unchanged, smaller chunks are slower and
    NCCL_NVLS_CHUNKSIZE=512 KiB (kept from 6 GiB on 8 x B200) faster. The same time is
    more bytes on Blackwell, whose channels stream faster."""
    from netsim.algorithms.nccl.tuning import (NVLS_CHANNEL_BW, NVLS_CHUNK_TIME_US,
                                               nvls_chunk_size, nvls_reduce_factor)

    def cost(chunk, arch="hopper"):          # us per byte of a chunk
        per_byte = 1 / (NVLS_CHANNEL_BW[arch] * 1e3) - NVLS_CHUNK_TIME_US / (128 << 10)
        return per_byte + NVLS_CHUNK_TIME_US / chunk

    for size in (2 << 20, 32 << 20, 256 << 20, 1 << 30, 8 << 30):
        chunk = nvls_chunk_size(size, H100)
        assert nvls_reduce_factor(size, H100) == pytest.approx(cost(chunk) / cost(128 << 10))
    assert nvls_reduce_factor(1 << 30, H100) == 1.0
    assert nvls_reduce_factor(256 << 20, H100) > 1.0
    b200 = NcclView(ranks=8, arch="blackwell", gpu_bw=740.0, nvls=True)
    assert nvls_reduce_factor(256 << 20, b200) > nvls_reduce_factor(256 << 20, H100)
    size = 8 << 30
    default = run_collective("allreduce", "dgx-b200", "nccl", size)
    large = run_collective("allreduce", "dgx-b200", "nccl", size,
                           options=AlgoOptions(extra={"nvls_chunksize": 512 << 10}))
    assert default.record()["nccl_algorithm"] == large.record()["nccl_algorithm"] == "nvls"
    # switch-bound at 8 GiB: the time follows the reduction rate (the loop's fill, 1.2 of
    # 85 iterations at 512 KiB, aside)
    ratio = cost(512 << 10, "blackwell") / cost(128 << 10, "blackwell")
    assert large.time_s / default.time_s == pytest.approx(ratio, rel=0.02)
    assert large.time_s < default.time_s
    with pytest.raises(InputError, match="nvls_chunksize"):
        run_collective("allreduce", "dgx-b200", "nccl", size,
                       options=AlgoOptions(extra={"nvls_chunksize": 1000}))


def test_a_measured_files_nvls_chunk_size_reaches_nccls_model(tmp_path):
    from netsim.run import read_measured_run

    path = tmp_path / "b200.csv"
    path.write_text("# netsim-validate: topo=dgx-b200 op=allreduce ranks=8 "
                    "nvls_chunksize=524288\nsize_bytes,busbw_GBps\n8589934592,840\n")
    assert read_measured_run(path).extra["nccl_options"] == {"nvls_chunksize": 524288}
