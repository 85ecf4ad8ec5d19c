"""Synthesised collectives: correct on any graph, optimal where the optimum is known, and
never slower than the best fixed algorithm once the run layer may fall back."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_helpers import run_main
from netsim.algorithms import AlgoOptions, build_schedule, problems, verify
from netsim.algorithms.synth import greedy_gather, link_model
from netsim.engine import simulate
from netsim.errors import InputError
from netsim.run import run_collective, run_synth
from netsim.topology import fat_tree, mesh, nvswitch, ring, torus
from netsim.topology.model import TopologyBuilder

OPS = ("allgather", "reducescatter", "allreduce")


def random_graph(n: int, seed: int, extra: int, bandwidth=1e9) -> "Topology":  # noqa: F821
    """A connected random graph: a random spanning tree plus ``extra`` random cables
    (bandwidths 1-3 x ``bandwidth``, so links differ)."""
    rng = random.Random(seed)
    b = TopologyBuilder(f"random-{n}-{seed}")
    for i in range(n):
        b.add_node(f"n{i}")
    cables = set()
    for i in range(1, n):
        cables.add((rng.randrange(i), i))
    for _ in range(extra):
        a, c = rng.sample(range(n), 2)
        cables.add((min(a, c), max(a, c)))
    for a, c in sorted(cables):
        b.add_cable(a, c, bandwidth * rng.choice((1, 2, 3)), latency=rng.choice((0.0, 1e-6)))
    return b.build()


MACHINES = {
    "torus3x3": lambda: torus((3, 3), bandwidth=1e9),
    "mesh2x3": lambda: mesh((2, 3), bandwidth=1e9, links=2),
    "ring5": lambda: ring(5, bandwidth=1e9),
    "fattree4": lambda: fat_tree(4, bandwidth=1e9),
    "nvswitch6": lambda: nvswitch(6, switches=2),
    "random9": lambda: random_graph(9, 3, 5),
}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("machine", sorted(MACHINES))
def test_synthesised_schedules_verify(machine, op):
    topo = MACHINES[machine]()
    n = min(topo.num_endpoints, 9)
    for chunks, gamma in ((1, None), (2, 5e9)):
        s = build_schedule(op, "synth", n, 1e6 * n,
                           AlgoOptions(topology=topo, chunks=chunks, gamma=gamma))
        assert problems(s, op, n) == []
        # every send moves a chunk: (n-1) receptions of each of n*chunks chunks per phase
        phases = 2 if op == "allreduce" else 1
        assert s.num_sends == phases * n * chunks * (n - 1)


def test_a_scattered_placement_verifies_and_uses_the_machine_router():
    topo = mesh((4, 4), bandwidth=1e9)
    placement = np.array([0, 5, 10, 15, 3, 12])          # no two ranks adjacent
    options = AlgoOptions(topology=topo, placement=placement, chunks=2)
    s = build_schedule("allreduce", "synth", 6, 6e6, options)
    verify(s, "allreduce", 6)
    assert s.meta["synth"]["ring_added"]
    assert simulate(topo, s, placement).makespan > 0


def test_the_engine_replays_the_greedy_no_slower_than_its_estimate():
    # Each send waits for the previous user of its links, so no link is shared and the
    # engine's time is the greedy's list-schedule time (alpha and latency included).
    topo = random_graph(10, 7, 8)
    for op in OPS:
        s = build_schedule(op, "synth", 10, 1e7,
                           AlgoOptions(topology=topo, chunks=2, extra={"alpha": 1e-6}))
        t = simulate(topo, s, overhead=1e-6).makespan
        assert t <= s.meta["synth"]["estimate_s"] * (1 + 1e-9)


@pytest.mark.parametrize("n", [5, 6, 8])
@pytest.mark.parametrize("chunks", [2, 4])
def test_bidirectional_ring_all_gather_reaches_the_two_port_optimum(n, chunks):
    # Each rank must receive (n-1)/n S over its two incoming links of B: T >= (n-1)S/(2nB),
    # and two opposite pipelines of half-blocks meet it. With an even number of chunks per
    # block the greedy finds that schedule exactly.
    size, bw = 1e6 * n, 1e9
    topo = ring(n, bandwidth=bw)
    s = build_schedule("allgather", "synth", n, size, AlgoOptions(topology=topo, chunks=chunks))
    assert simulate(topo, s).makespan == pytest.approx((n - 1) / n * size / (2 * bw), rel=1e-9)


def test_torus_all_reduce_reaches_the_four_port_bound():
    # 4x4 torus, 4 ports of B per chip: all-reduce needs 2(n-1)/n S in and out of every
    # rank, T >= 2 (15/16) S / (4B). Fixed algorithms use two ports (a bidirectional ring).
    size, bw = 2**26, 50e9
    topo = torus((4, 4), bandwidth=bw)
    bound = 2 * 15 / 16 * size / (4 * bw)
    s = build_schedule("allreduce", "synth", 16, size, AlgoOptions(topology=topo, chunks=4))
    verify(s, "allreduce", 16)
    assert simulate(topo, s).makespan == pytest.approx(bound, rel=1e-9)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.integers(2, 8), seed=st.integers(0, 10**6), extra=st.integers(0, 8),
       op=st.sampled_from(OPS), chunks=st.integers(1, 3))
def test_random_graphs_always_verify_and_never_lose_after_fallback(n, seed, extra, op, chunks):
    topo = random_graph(n, seed, extra)
    s = build_schedule(op, "synth", n, 1e6 * n, AlgoOptions(topology=topo, chunks=chunks))
    assert problems(s, op, n) == []
    run = run_synth(op, topo, 1e6 * n, options=AlgoOptions(chunks=chunks), alpha=1e-6)
    fixed = {k: v for k, v in run.candidates.items() if k != "synth"}
    assert run.time_s <= min(fixed.values())
    assert run.time_s == min(run.synth_s, run.best_fixed_s)
    assert run.fallback == (run.best_fixed_s < run.synth_s)
    assert run.algorithm == (run.best_fixed if run.fallback else "synth")


def test_fallback_is_said_and_timed_as_the_fixed_algorithm():
    # Two ranks on one cable: every algorithm sends one block each way; with a huge alpha
    # the synthesised one (8 chunks) loses to any one-message algorithm.
    topo = ring(2, bandwidth=1e9)
    run = run_synth("allgather", topo, 2e6, options=AlgoOptions(chunks=8), alpha=1e-3)
    assert run.fallback and run.algorithm == run.best_fixed
    assert run.time_s == pytest.approx(1e-3 + 1e6 / 1e9, rel=1e-9)
    assert run.synth_s > run.time_s
    record = run.record()
    assert record["fallback"] is True and record["best_fixed"] == run.best_fixed


def test_coll_algo_synth_goes_through_the_run_layer():
    run = run_collective("allgather", "torus:3x3,bw=1GB/s", "synth", "9MB", alpha=0.0)
    assert run.algorithm in ("synth", run.best_fixed)
    assert run.time_s <= run.best_fixed_s and "synth" in run.candidates


def test_greedy_needs_no_more_sends_than_receptions():
    m = link_model(torus((3, 3), bandwidth=1.0), np.arange(9))
    sends = greedy_gather(m, 2, 1.0)
    got = {(d, k) for d, k in zip(sends.dst, sends.chunk)}
    assert len(got) == len(sends.dst) == 9 * 2 * 8      # nobody gets a chunk twice


def test_synth_needs_a_topology():
    with pytest.raises(InputError, match="needs a topology"):
        build_schedule("allgather", "synth", 4, 4e6)
    with pytest.raises(InputError, match="synthesis builds"):
        run_synth("alltoall", "ring:4", 4e6)


def test_cli_writes_a_schedule_that_runs_later(tmp_path, capsys):
    out = tmp_path / "ar.json"
    code, stdout, err = run_main(["synth", "allreduce", "--topo", "torus:3x3,bw=1GB/s",
                                  "--size", "9MB", "--chunks", "2", "--format", "json",
                                  "-o", str(out)], capsys)
    assert code == 0, err
    record = json.loads(stdout)["records"][0]
    meta = json.loads(out.read_text())["meta"]
    assert meta["bound"]["seconds"] == pytest.approx(record["machine_bound_s"])
    assert meta["simulated_s"] == pytest.approx(record["synth_s"])
    code, stdout, err = run_main(["synth", "allreduce", "--topo", "torus:3x3,bw=1GB/s",
                                  "--schedule", str(out), "--format", "json"], capsys)
    assert code == 0, err
    again = json.loads(stdout)["records"][0]
    assert again["time_s"] == pytest.approx(record["synth_s"], rel=1e-9)
    # at twice the size every send doubles: the bandwidth-bound time doubles too
    code, stdout, err = run_main(["synth", "allreduce", "--topo", "torus:3x3,bw=1GB/s",
                                  "--schedule", str(out), "--size", "18MB", "--format",
                                  "json"], capsys)
    assert json.loads(stdout)["records"][0]["time_s"] == pytest.approx(2 * again["time_s"])
    code, _, err = run_main(["synth", "allreduce", "--topo", "torus:3x3", "-o", str(out)],
                            capsys)
    assert code != 0 and "exists" in err and "Traceback" not in err
    code, _, err = run_main(["synth", "alltoall", "--topo", "torus:3x3"], capsys)
    assert code == 2 and err.count("\n") == 1 and "allgather" in err


@pytest.mark.parametrize("op", ["allreduce", "reducescatter"])
def test_waves_verify_and_overlap_slow_reductions(op):
    # Reductions at a rank cost b / gamma each and run one at a time: with gamma at half a
    # link's rate they dominate, and reducing in waves lets the next wave's reductions
    # overlap the previous wave's all-gather (all-reduce) or sends (reduce-scatter).
    topo = torus((3, 3), bandwidth=1e9)
    times = {}
    for waves in (1, 3):
        s = build_schedule(op, "synth", 9, 9e6, AlgoOptions(topology=topo, chunks=1,
                                                            gamma=5e8,
                                                            extra={"waves": waves}))
        assert problems(s, op, 9) == []
        assert s.num_sends == (2 if op == "allreduce" else 1) * 9 * waves * 8
        times[waves] = simulate(topo, s).makespan
    if op == "allreduce":
        assert times[3] < times[1]


def test_synthesis_refuses_more_ranks_than_it_can_build_quickly():
    from netsim.algorithms.synth import MAX_RANKS

    topo = ring(MAX_RANKS + 1, bandwidth=1e9)
    with pytest.raises(InputError, match=f"at most {MAX_RANKS} ranks"):
        build_schedule("allgather", "synth", MAX_RANKS + 1, 1e6, AlgoOptions(topology=topo))


def test_sender_busy_paces_each_sender_and_bounds_the_time():
    # Each send holds its sender 2 s (links take 1 s): a sender starts at most one send
    # per 2 s. 4 ranks x 3 missing blocks = 12 sends, so some rank makes >= 3 sends and the
    # last of them starts at >= 4 s and ends at >= 5 s.
    s = greedy_gather(link_model(ring(4, bandwidth=1.0), range(4)), 1, 1.0, sender_busy=2.0)
    assert len(s.src) == 12
    for r in range(4):
        starts = sorted(t for u, t in zip(s.src, s.start) if u == r)
        assert all(b - a >= 2.0 - 1e-12 for a, b in zip(starts, starts[1:]))
    assert s.makespan >= 5.0 - 1e-12


def test_balance_spreads_reductions_and_verifies():
    # On a mesh the inner chips have twice the corners' links, so the unpaced greedy makes
    # them send (in the reduce-scatter: reduce) more; pacing each sender narrows the spread.
    from collections import Counter

    m = link_model(mesh((4, 4), bandwidth=1e9), range(16)).transposed()
    spread = {}
    for busy in (0.0, 1e-3):
        counts = Counter(greedy_gather(m, 1, 1e6, sender_busy=busy).src)
        assert sum(counts.values()) == 16 * 15          # still a complete all-gather
        spread[busy] = max(counts.values())
    assert spread[1e-3] < spread[0.0]
    for op in ("allreduce", "reducescatter"):
        s = build_schedule(op, "synth", 16, 16e6, AlgoOptions(
            topology=mesh((4, 4), bandwidth=1e9), chunks=2, gamma=5e8,
            extra={"waves": 2, "balance": 0.4}))
        assert problems(s, op, 16) == []
        assert s.meta["synth"]["balance"] == 0.4


def test_search_tries_balance_with_costly_reductions():
    from netsim.run.synthesis import GAMMA_SHAPES

    run = run_synth("allreduce", mesh((3, 3), bandwidth=1e9), 9e6,
                    options=AlgoOptions(gamma=5e8), alpha=0.0, budget_s=1.0)
    assert run.synth_balance in {b for _, _, b in GAMMA_SHAPES}
    assert run.record()["synth_balance"] == run.synth_balance
    assert any(b > 0 for _, _, b in GAMMA_SHAPES) and any(b == 0 for _, _, b in GAMMA_SHAPES)
    assert run.time_s <= run.best_fixed_s


@pytest.mark.parametrize("spec", ["gb200-nvl72", "fattree:k=4", "mesh:3x3"])
def test_the_greedys_link_groups_stand_for_exactly_the_links_they_merge(spec):
    """The greedy tracks one busy time and last send per group of links used by the same
    edges: two edges share a group exactly when they share a link, and every link's
    edges are its group's."""
    from netsim.algorithms.synth import _link_groups
    from netsim.topology import parse_topology

    topo = parse_topology(spec)
    model = link_model(topo, np.asarray(topo.endpoints))
    edge_groups, group_edges = _link_groups(model)
    link_edges: dict[int, list[int]] = {}
    for e, links in enumerate(model.links):
        for link in links:
            link_edges.setdefault(link, []).append(e)
    for e, links in enumerate(model.links):
        assert {tuple(link_edges[link]) for link in links} \
            == {tuple(group_edges[g]) for g in edge_groups[e]}
        assert len(edge_groups[e]) == len({tuple(link_edges[link]) for link in links})
    if spec == "gb200-nvl72":   # a one-way ring over 18 planes: 36 links, each its own
        assert {len(links) for links in model.links} == {36}
        assert {len(groups) for groups in edge_groups} == {1}
