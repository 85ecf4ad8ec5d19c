"""A100 under NCCL's model: NCCL's own NVLink figure and the per-step latency A100 runs at.

The step latency (3 x NCCL's hwLat) is fitted on the Azure 8 x A100 curve; here it is checked
against an independent published A100 sweep, NVIDIA/nccl-tests#123
(https://github.com/NVIDIA/nccl-tests/issues/123, DGX A100, ``NCCL_ALGO=Ring
NCCL_MAX_NCHANNELS=1 all_reduce_perf -b 8 -e 128 -g N``): 10.0, 13.76, 16.88, 20.8, 25.2,
29.5, 33.7 us for N = 2 .. 8.
"""

from __future__ import annotations

import pytest

from netsim.algorithms import AlgoOptions
from netsim.algorithms.nccl import nccl_view
from netsim.algorithms.nccl.model import STEP_LATENCY_SCALE
from netsim.run import run_collective
from netsim.topology import parse_topology

SWEEP_US = {2: 10.0, 3: 13.76, 4: 16.88, 5: 20.8, 6: 25.2, 7: 29.5, 8: 33.7}


def test_nccl_sees_twelve_links_at_sm80_nvlink_bw():
    """NCCL's topology counts an A100 as 12 NVLinks x SM80_NVLINK_BW (20 GB/s), not the
    payload rate the engine's links carry (12 x 25 GB/s x 0.7719)."""
    topo = parse_topology("dgx-a100")
    view = nccl_view(8, AlgoOptions(topology=topo))
    assert view.gpu_bw == pytest.approx(12 * 20.0)
    assert float(topo.out_degree_bandwidth[0]) == pytest.approx(12 * 25e9 * 0.7719)


@pytest.mark.parametrize("gpus", sorted(SWEEP_US))
def test_small_all_reduce_device_time_follows_the_a100_sweep(gpus):
    """Device time of an 8 B ring/LL all-reduce on one channel: baseLat 6.6 us + 2 (N-1)
    steps of 3 x 0.6 us, within 10% of the -g N sweep at every N (the host's N x 5 us
    launch is left out: gpus_per_thread 0)."""
    assert STEP_LATENCY_SCALE[("ampere", "LL")] == 3.0
    run = run_collective("allreduce", parse_topology("dgx-a100"), "nccl", 8, ranks=gpus,
                         options=AlgoOptions(extra={"gpus_per_thread": 0}))
    assert run.time_s * 1e6 == pytest.approx(6.6 + 2 * (gpus - 1) * 1.8, rel=0.02)
    assert run.time_s * 1e6 == pytest.approx(SWEEP_US[gpus], rel=0.10)


def test_ll128_keeps_nccl_latency_and_runs_at_its_rate_scale():
    """A100 ring LL128 (NCCL's pick at 4-16 MiB on 8 GPUs): NCCL's own latency (14 + 14 x
    1.9 us, not three times the steps as LL and Simple take) and PROTOCOL_RATE_SCALE of
    NCCL's LL128 rate on the links: two sizes' times give both."""
    from netsim.algorithms.nccl.model import PROTOCOL_RATE_SCALE
    from netsim.algorithms.nccl.tuning import protocol_efficiency

    topo = parse_topology("dgx-a100")
    assert ("ampere", "LL128") not in STEP_LATENCY_SCALE
    options = AlgoOptions(extra={"gpus_per_thread": 0})
    small, large = (run_collective("allreduce", topo, "nccl", size, ranks=8, options=options)
                    for size in (4 << 20, 16 << 20))
    assert small.record()["nccl"] == large.record()["nccl"] == "ring/LL128/12ch"
    rate = (protocol_efficiency("ring", "LL128", nccl_view(8, AlgoOptions(topology=topo)))
            * PROTOCOL_RATE_SCALE[("ampere", "LL128")] * float(topo.out_degree_bandwidth[0]))
    per_byte = 2 * 7 / 8 / rate
    assert (large.time_s - small.time_s) == pytest.approx((12 << 20) * per_byte, rel=0.02)
    assert (small.time_s - (4 << 20) * per_byte) * 1e6 == pytest.approx(14 + 14 * 1.9, rel=0.1)
