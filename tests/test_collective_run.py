"""run_collective / run_sweep with small test-double algorithms whose times are known."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pytest

from netsim.algorithms.options import AlgoOptions
from netsim.run.collective import run_collective, run_sweep, sweep_sizes
from netsim.errors import InputError
from netsim.schedule import ScheduleBuilder
from netsim.topology import mesh, nvswitch, ring
from netsim.schedule.traffic import all_to_all

B, S = 10e9, 80e6   # bytes/s per link, bytes


@dataclass(frozen=True)
class Double:
    """The Algorithm interface: op, name, summary, build, power_of_two, requires, applies."""

    op: str
    name: str
    make: Callable
    summary: str = "test double"
    power_of_two: bool = False
    requires: str | None = None

    def build(self, num_ranks, size, options):
        return self.make(num_ranks, size, options)

    def applies(self, num_ranks, options) -> bool:
        return not self.power_of_two or num_ranks & (num_ranks - 1) == 0


def _ring_allreduce(n, size, options):
    """One-way ring: 2(n-1) steps of S/n, each step waiting for the previous receive."""
    b, delivered = ScheduleBuilder(n), [None] * n
    for _ in range(2 * (n - 1)):
        arrived = [None] * n
        for r in range(n):
            deps = [] if delivered[r] is None else [delivered[r]]
            arrived[(r + 1) % n] = b.send(r, (r + 1) % n, size / n, deps)
        delivered = arrived
    return b.build()


def _naive_allreduce(n, size, options):
    """Everyone sends its whole buffer to everyone: (n-1) S out of each rank."""
    return all_to_all(n, size)


def _switch_allreduce(n, size, options):
    """Ranks send S to rank n (a reducing switch), which sends S back once all arrived."""
    b = ScheduleBuilder(n + 1, extra_nodes=[int(options.topology.num_nodes - 1)])
    up = [b.send(r, n, size) for r in range(n)]
    for r in range(n):
        b.send(n, r, size, up)
    return b.build()


RING = Double("allreduce", "ring", _ring_allreduce)
NAIVE = Double("allreduce", "naive", _naive_allreduce)
POW2 = Double("allreduce", "halving", _ring_allreduce, power_of_two=True)
DIRECT = Double("alltoall", "direct", lambda n, size, o: all_to_all(n, size / n))


def test_ring_allreduce_on_a_two_way_ring_reaches_half_the_bound():
    run = run_collective("allreduce", ring(8, bandwidth=B), RING, S)
    # 2(n-1) steps of S/(nB); the machine's bound lets each rank use both directions:
    # (n-1)/n S/B. The ring's own bound, on the one direction it uses, is its time.
    assert run.time_s == pytest.approx(2 * 7 / 8 * S / B, rel=1e-12)
    assert run.machine_bound_s == pytest.approx(7 / 8 * S / B, rel=1e-12)
    assert run.machine_efficiency == pytest.approx(0.5, rel=1e-12)
    assert run.bound_s == pytest.approx(2 * 7 / 8 * S / B, rel=1e-12)
    assert run.efficiency == pytest.approx(1.0, rel=1e-12)
    assert run.algbw_GBps == pytest.approx(S / run.time_s / 1e9, rel=1e-12)
    # busbw of the optimal ring equals the link bandwidth: 10 GB/s.
    assert run.busbw_GBps == pytest.approx(B / 1e9, rel=1e-12)
    # The + links are full all the time, the - links idle: that is the missing half.
    assert run.flows == 8 * 14 and run.max_link_util == pytest.approx(1.0, rel=1e-12)
    assert np.count_nonzero(run.result.link_bytes) == 8


def test_ring_allreduce_on_a_one_way_ring_is_optimal():
    run = run_collective("allreduce", ring(8, bandwidth=B, bidirectional=False), RING, S)
    assert run.efficiency == pytest.approx(1.0, rel=1e-12)
    assert run.record()["bound"] == "injection"


def test_direct_alltoall_on_a_mesh_meets_the_bisection_bound():
    run = run_collective("alltoall", "mesh:4x4,bw=10GB/s", DIRECT, S)
    assert run.bound_name == "bisection"
    assert run.time_s == pytest.approx(4 * S / (4 * B), rel=1e-9)
    assert run.efficiency == pytest.approx(1.0, rel=1e-9)
    assert run.busbw_GBps == pytest.approx(S / run.time_s * 15 / 16 / 1e9)


def test_record_has_the_nccl_tests_fields():
    record = run_collective("allreduce", ring(4, bandwidth=B), RING, "1MiB",
                            alpha=1e-6).record()
    for key in ("op", "algorithm", "topology", "ranks", "size_bytes", "time_s", "algbw_GBps",
                "busbw_GBps", "bound_s", "bound", "efficiency", "max_link_util"):
        assert key in record
    assert record["size_bytes"] == 2**20 and record["ranks"] == 4
    # alpha is paid once per step: 6 steps of (1us + S/4 / B).
    assert record["time_s"] == pytest.approx(6 * (1e-6 + 2**18 / B), rel=1e-12)
    assert "candidates" not in record


def test_auto_picks_the_fastest_that_applies_and_lists_the_others():
    run = run_collective("allreduce", ring(6, bandwidth=B), [NAIVE, POW2, RING], S)
    assert run.algorithm == "ring"
    assert set(run.candidates) == {"ring"}      # halving refuses 6 ranks
    assert run.pruned["naive"] > run.candidates["ring"] == run.time_s   # naive's lower bound
    listed = run.record()["candidates"]
    assert listed[0] == {"algorithm": "ring", "time_s": run.time_s}
    assert {"algorithm": "naive", "bound_s": run.pruned["naive"]} in listed
    text = run.candidates_text()
    assert text.startswith("ring=") and ",naive>=" in text
    full = run_collective("allreduce", ring(6, bandwidth=B), [NAIVE, POW2, RING], S,
                          prune=False)            # every candidate simulated
    assert set(full.candidates) == {"ring", "naive"} and full.pruned is None
    assert full.candidates["naive"] >= run.pruned["naive"]
    assert (full.algorithm, full.time_s) == (run.algorithm, run.time_s)


def test_a_named_algorithm_that_does_not_apply_says_why():
    with pytest.raises(InputError, match="'halving' does not apply to 6 ranks.*power-of-two"):
        run_collective("allreduce", ring(6), POW2, S)


def test_switch_ranks_are_appended_to_the_placement():
    topo = nvswitch(4, bandwidth=B, reduce=True)
    run = run_collective("allreduce", topo, Double("allreduce", "nvls", _switch_allreduce), S)
    assert run.result.placement.tolist() == [*topo.endpoints.tolist(), topo.num_nodes - 1]
    # Up S/B then down S/B; the in-network bound is S/B.
    assert run.time_s == pytest.approx(2 * S / B, rel=1e-12)
    assert run.bound_name == "injection (in-network reduction)"
    assert run.efficiency == pytest.approx(0.5, rel=1e-12)


def test_ranks_and_placement_choose_the_nodes():
    topo = mesh((4, 4), bandwidth=B)
    run = run_collective("allreduce", topo, RING, S, ranks=4)
    assert run.ranks == 4 and run.result.placement.tolist() == [0, 1, 2, 3]
    run = run_collective("allreduce", topo, RING, S, placement=["0_0", "0_1", "1_1", "1_0"])
    assert run.result.placement.tolist() == [0, 1, 5, 4]
    # A ring around a 2x2 square of the mesh: every hop one link, so (n-1) S/(n B) per step pair.
    assert run.time_s == pytest.approx(2 * 3 / 4 * S / B, rel=1e-12)
    with pytest.raises(InputError, match="ranks must be in 1..16"):
        run_collective("allreduce", topo, RING, S, ranks=17)


def test_options_reach_the_algorithm_with_topology_and_placement():
    seen = {}

    def spy(n, size, options):
        seen.update(chunks=options.chunks, topology=options.topology.name,
                    placement=np.asarray(options.placement).tolist())
        return _ring_allreduce(n, size, options)

    run_collective("allreduce", ring(4), Double("allreduce", "spy", spy), S,
                   options=AlgoOptions(chunks=3))
    assert seen == {"chunks": 3, "topology": ring(4).name, "placement": [0, 1, 2, 3]}


def test_sweep_sizes_double_from_start_to_stop():
    assert sweep_sizes("1KiB:8KiB") == [1024.0, 2048.0, 4096.0, 8192.0]
    assert sweep_sizes("1KiB:10KiB") == [1024.0, 2048.0, 4096.0, 8192.0]
    assert sweep_sizes("1KiB:16KiB:4") == [1024.0, 4096.0, 16384.0]
    assert sweep_sizes("1MiB") == [2.0**20]
    assert sweep_sizes(["1KiB", 10]) == [1024.0, 10.0]
    assert len(sweep_sizes("1:4GiB")) == 33
    for bad in ("8KiB:1KiB", "1KiB:8KiB:1", "0:1KiB", "1KiB:8KiB:x", "1:2:3:4"):
        with pytest.raises(InputError):
            sweep_sizes(bad)


def test_run_sweep_gives_one_run_per_size_with_constant_busbw_at_zero_latency():
    runs = run_sweep("allreduce", ring(4, bandwidth=B), RING, "1MiB:8MiB")
    assert [r.size_bytes for r in runs] == [2.0**20, 2.0**21, 2.0**22, 2.0**23]
    assert [r.busbw_GBps for r in runs] == pytest.approx([B / 1e9] * 4, rel=1e-12)


def test_bad_inputs_are_one_line_errors():
    with pytest.raises(InputError, match="unknown collective 'allreduc': did you mean "
                                         "'allreduce'"):
        run_collective("allreduc", ring(4), RING, S)
    with pytest.raises(InputError, match="root must be a rank"):
        run_collective("allreduce", ring(4), RING, S, options=AlgoOptions(root=9))
    with pytest.raises(InputError, match="size"):
        run_collective("allreduce", ring(4), RING, "-1MiB")


def test_scenario_job_kind_collective_runs_a_sweep(tmp_path, monkeypatch):
    from netsim.algorithms import registry
    from netsim.run.scenarios.scenario import load_scenario, run_scenario

    registry.algorithms_for("allreduce")
    monkeypatch.setitem(registry._REGISTRY["allreduce"], "double-ring", registry.Algorithm(
        "allreduce", "double-ring", "test double", _ring_allreduce))
    path = tmp_path / "coll.yaml"
    path.write_text("name: coll\ntopology: ring:4,bw=10GB/s\njobs:\n"
                    "  - kind: collective\n    name: ar\n    op: allreduce\n"
                    "    algorithm: double-ring\n    sizes: 1MiB:4MiB\n    alpha: 1us\n")
    outcome = run_scenario(load_scenario(path))
    rows = outcome.records
    assert [r["size_bytes"] for r in rows] == [2.0**20, 2.0**21, 2.0**22]
    assert rows[0]["job"] == "ar" and rows[0]["algorithm"] == "double-ring"
    assert rows[0]["time_s"] == pytest.approx(6 * (1e-6 + 2**18 / B), rel=1e-12)
    assert sorted(outcome.jobs[0].results) == ["ar 1MiB", "ar 2MiB", "ar 4MiB"]


@pytest.mark.parametrize("job, message", [
    ("op: allreduc\n    size: 1MiB", "jobs[0].op: unknown collective 'allreduc': did you mean"),
    ("op: allreduce\n    algorithm: double-rng\n    size: 1MiB",
     "jobs[0].algorithm: unknown allreduce algorithm 'double-rng': did you mean"),
    ("op: allreduce", "give exactly one of 'size' and 'sizes'"),
    ("op: allreduce\n    sizes: 8KiB:1KiB", "jobs[0].sizes: size sweep '8KiB:1KiB'"),
    ("op: allreduce\n    size: 1MiB\n    chunk: 2", "jobs[0].chunk: unknown field"),
])
def test_scenario_collective_job_errors_name_the_field(tmp_path, monkeypatch, job, message):
    from netsim.algorithms import registry
    from netsim.run.scenarios.scenario import load_scenario

    registry.algorithms_for("allreduce")
    monkeypatch.setitem(registry._REGISTRY["allreduce"], "double-ring", registry.Algorithm(
        "allreduce", "double-ring", "test double", _ring_allreduce))
    path = tmp_path / "bad.yaml"
    path.write_text(f"name: bad\ntopology: ring:4\njobs:\n  - kind: collective\n    {job}\n")
    with pytest.raises(InputError, match=re.escape(message)):
        load_scenario(path)


# -- the registered algorithms against the bounds ------------------------------------------

@pytest.mark.parametrize("op, name, spec", [
    ("allreduce", "ring", "ring:8,bw=10GB/s,bidirectional=false"),
    ("alltoall", "direct", "mesh:4x4,bw=10GB/s"),
    ("reducescatter", "ring", "fattree:4,bw=10GB/s"),
])
def test_registered_algorithms_meet_their_bound(op, name, spec):
    run = run_collective(op, spec, name, S)
    assert run.efficiency == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("spec", ["torus:3x4,bw=10GB/s,lat=1us",
                                  "nvswitch:4,bw=10GB/s,lat=1us,reduce=true"])
def test_no_registered_algorithm_beats_the_lower_bound(spec):
    from netsim.algorithms import OPS, algorithms_for
    from netsim.topology import parse_topology

    topo, checked = parse_topology(spec), 0
    options = AlgoOptions(chunks=2, gamma=20e9)
    for op in OPS:
        for algo in algorithms_for(op):
            if algo.applies(topo.num_endpoints, replace(options, topology=topo)):
                run = run_collective(op, topo, algo, 2**20, options=options, alpha=5e-7)
                assert run.efficiency <= 1 + 1e-9, (op, algo.name, run.bound_detail)
                checked += 1
    assert checked >= 20
