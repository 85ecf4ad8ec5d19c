"""What one size sweep shares across its sizes (run_sweep): the router, the schedules of
size-linear algorithms (scaled exactly: the same records), a tick per size."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from netsim.algorithms.options import AlgoOptions
from netsim.algorithms.registry import get_algorithm
from netsim.run.collective import run_collective, run_sweep, sweep_sizes
from netsim.run.scaled_builds import ScaledBuilds, power_of_two_factor
from netsim.topology import parse_topology, ring


def test_run_sweep_calls_each_once_per_size_after_its_run_in_order():
    seen = []
    runs = run_sweep("allreduce", ring(4, bandwidth=1e9), "ring", "1KiB:4KiB",
                     each=seen.append)
    assert seen == runs and [r.size_bytes for r in seen] == [1024.0, 2048.0, 4096.0]


# -- size_linear algorithms: the schedule of S * 2**k is that of S scaled, bit for bit ------

def _same_schedule(a, b) -> list[str]:
    """Fields of two schedules that differ (arrays bit for bit, meta entry by entry)."""
    differ = [name for name in ("kind", "src", "dst", "nbytes", "seconds", "dep_ptr",
                                "dep_idx", "tag")
              if not np.array_equal(getattr(a, name), getattr(b, name))]
    differ += [name for name in ("num_ranks", "tags", "extra_nodes")
               if getattr(a, name) != getattr(b, name)]
    if dict(a.paths) != dict(b.paths):
        differ.append("paths")
    if set(a.data) != set(b.data) or any(repr(a.data[k]) != repr(b.data[k]) for k in a.data):
        differ.append("data")
    if set(a.meta) != set(b.meta) or any(repr(a.meta[k]) != repr(b.meta[k]) for k in a.meta):
        differ.append("meta")
    return differ


def _linear_cases():
    from netsim.algorithms.registry import algorithms_for
    from netsim.algorithms.registry import OPS

    return [algo for op in OPS for algo in algorithms_for(op) if algo.size_linear]


# galaxy-wh: a launch cost per phase (tt_* do not scale there: checked that they say so)
TOPOLOGIES = ["dgx-h100", "ring:6,bw=10GB/s", "torus:4x4,bw=25GB/s", "dgx-h100-cluster",
              "galaxy-wh"]


@pytest.mark.parametrize("spec", TOPOLOGIES)
def test_every_size_linear_algorithm_scales_bit_for_bit(spec):
    topo = parse_topology(spec)
    n = min(topo.num_endpoints, 16)
    base = AlgoOptions(topology=topo, placement=topo.first_endpoints(n), gamma=7e10)
    checked = 0
    for algo in _linear_cases():
        for extra in ({}, {"annotate": False, "planes": True}):
            options = replace(base, extra=extra)
            if not algo.applies(n, options) or not algo.scales_with_size(n, options):
                continue
            # a depth the default picks at both sizes (64 from 1 GiB), a given odd depth,
            # and the smallest sizes (depth 1), across a scale of 2**-3 and 2**5
            for small, factor, chunks in ((2.0**30, 8.0, None), (3000.0, 2.0**5, 3),
                                          (1000.0, 4.0, None)):
                opts = replace(options, chunks=chunks)
                big = algo.build(n, small * factor, opts)
                scaled = algo.build(n, small, opts)
                scaled = replace(scaled, nbytes=scaled.nbytes * factor,
                                 seconds=scaled.seconds * factor)
                assert _same_schedule(big, scaled) == [], (algo.op, algo.name, extra, small)
                checked += 1
    assert checked >= 3
    if spec == "galaxy-wh":          # launch costs: the tt-metal schedules do not scale
        assert not get_algorithm("allreduce", "tt_ring").scales_with_size(n, base)


def test_a_sweep_with_kept_schedules_gives_the_records_of_separate_runs():
    topo = parse_topology("ring:8,bw=10GB/s")
    builds = ScaledBuilds()
    options = AlgoOptions(gamma=5e10)       # reductions: compute ops that scale too
    swept = run_sweep("allreduce", topo, "auto", "1KiB:1MiB", options=options,
                      builds=builds, alpha=1e-6)
    alone = [run_collective("allreduce", topo, "auto", size, options=options, alpha=1e-6)
             for size in sweep_sizes("1KiB:1MiB")]
    assert builds.scaled > builds.built > 0          # most schedules were scaled, not built
    assert [r.record() for r in swept] == [r.record() for r in alone]


def test_innetwork_kept_across_sizes_of_one_depth_gives_the_same_runs():
    topo = parse_topology("dgx-h100")
    builds = ScaledBuilds()
    sizes = [2.0**30, 2.0**31]                  # both 64 chunks by default
    swept = run_sweep("allreduce", topo, "innetwork", sizes, builds=builds)
    alone = [run_collective("allreduce", topo, "innetwork", size) for size in sizes]
    assert builds.scaled >= 1
    assert [r.record() for r in swept] == [r.record() for r in alone]


def test_kept_schedules_are_not_scaled_across_a_ratio_that_is_not_a_power_of_two():
    algo = get_algorithm("allreduce", "direct")
    options = AlgoOptions(topology=ring(4))
    builds = ScaledBuilds()
    for size in (1000.0, 3000.0, 6000.0, 0.0, 12000.0):
        got = builds.build(algo, 4, size, options)
        assert np.array_equal(got.nbytes, algo.build(4, size, options).nbytes)
    assert (builds.built, builds.scaled) == (4, 1)     # 6000 from 3000; 0 and 12000 built
    assert power_of_two_factor(1.0, 2.0**-3) == 2.0**-3
    assert power_of_two_factor(3.0, 1.0) is None and power_of_two_factor(0.0, 1.0) is None


def test_synth_keeps_its_link_model_for_the_same_ranks_and_links_only():
    from netsim.algorithms import synth

    topo = parse_topology("dgx-h100")
    options = AlgoOptions(topology=topo, placement=topo.first_endpoints(8))
    first = synth._model(8, options)
    assert synth._model(8, options) is first          # kept across sizes
    assert first == synth.link_model(topo, topo.first_endpoints(8))
    fewer = synth._model(4, options)                   # other ranks: its own
    assert fewer == synth.link_model(topo, topo.first_endpoints(4))
    topo.bandwidth[0] *= 0.5                           # the same object, other links
    try:
        again = synth._model(8, options)
        assert again is not first and again == synth.link_model(topo, topo.first_endpoints(8))
    finally:
        topo.bandwidth[0] *= 2.0


def test_kept_schedules_stay_within_their_total_and_the_records_do_not_change(monkeypatch):
    from netsim.run import scaled_builds

    topo = parse_topology("ring:8,bw=10GB/s")
    unlimited = run_sweep("allreduce", topo, "auto", "1KiB:64KiB", alpha=1e-6)
    monkeypatch.setattr(scaled_builds, "KEEP_TOTAL_OPS", 300)
    builds = ScaledBuilds()
    kept = run_sweep("allreduce", topo, "auto", "1KiB:64KiB", alpha=1e-6, builds=builds)
    assert sum(k.schedule.num_ops for k in builds._kept.values()) <= 300
    assert builds.built > 1 and [r.record() for r in kept] == [r.record() for r in unlimited]
