"""Irregular traffic: every compiled event loop equals the reference within 1e-12.

The cases have nothing for symmetry to shrink: random connected graphs with links of
different capacities (10-100 GB/s, some one way), flows between random pairs, Poisson
arrivals (each op's ``not_before``), heavy-tailed sizes (Pareto or log-normal), with and
without dependencies (each op after a random earlier one, some computes between), and a
small fat-tree with ECMP by hash. Each runs with the compiled loop from the first event
(engine.kernel's, engine.classes' on rate classes) and
with the reference engine (numpy, a cold max-min over every draining flow at every
event): per-op finish times within 1e-12 relative, the same number of events and the
same bytes per link. ``benchmarks/bench_irregular.py`` runs the large versions.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsim.engine import simulate
from netsim.engine.config import EngineConfig
from netsim.schedule import ScheduleBuilder
from netsim.topology import parse_topology
from netsim.topology.model import TopologyBuilder

pytest.importorskip("numba")

REL = 1e-12
SETTINGS = dict(deadline=None, max_examples=25,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
LOOPS = ("kernel", "classes")


#: Each compiled loop forced from the first event of every run, and the reference.
CONFIGS = {"kernel": EngineConfig(loop="kernel"), "classes": EngineConfig(loop="classes")}
REFERENCE = EngineConfig(loop="reference")


def _random_graph(rng, nodes: int, chords: int, latency: bool):
    """Connected: node i joins a random earlier node, then random chords; a cable's two
    directions may differ in capacity, and a chord may be one way."""
    b = TopologyBuilder("irregular", family="custom")
    for i in range(nodes):
        b.add_node(f"n{i}")
    tree = {(int(rng.integers(i)), i) for i in range(1, nodes)}
    edges = set(tree)
    for _ in range(chords):
        a, c = sorted(int(x) for x in rng.choice(nodes, 2, replace=False))
        edges.add((a, c))
    for a, c in sorted(edges):
        lat = float(rng.uniform(0, 1e-6)) if latency else 0.0
        b.add_link(a, c, float(rng.uniform(10e9, 100e9)), lat)
        if (a, c) in tree or rng.random() < 0.7:     # the tree keeps every pair connected
            b.add_link(c, a, float(rng.uniform(10e9, 100e9)), lat)
    return b.build()


def _traffic(rng, ranks: int, flows: int, *, pareto: bool, deps: bool, load: float):
    """A schedule of ``flows`` sends between random pairs with heavy-tailed sizes (about
    1 MB), each after a random earlier op when ``deps`` (with a compute now and then),
    and Poisson release floors at ``load`` flows per microsecond."""
    if pareto:
        sizes = np.rint((rng.pareto(1.5, flows) + 1.0) * 1e6 / 3)
    else:
        sizes = np.maximum(np.rint(rng.lognormal(np.log(1e6), 1.5, flows)), 1.0)
    b = ScheduleBuilder(ranks)
    for k in range(flows):
        after = [int(rng.integers(len(b)))] if deps and len(b) and rng.random() < 0.6 else []
        if deps and rng.random() < 0.15:
            after = [b.compute(int(rng.integers(ranks)), float(rng.uniform(0, 2e-5)), after)]
        src = int(rng.integers(ranks))
        dst = (src + int(rng.integers(1, ranks))) % ranks
        b.send(src, dst, float(sizes[k]), after)
    schedule = b.build()
    gaps = rng.exponential(1e-6 / load, schedule.num_ops)
    return schedule, np.cumsum(gaps) - gaps[0]


def assert_matches_reference(monkeypatch, loop, topo, schedule, not_before, placement=None):
    fast = simulate(topo, schedule, placement, not_before=not_before, config=CONFIGS[loop])
    ref = simulate(topo, schedule, placement, not_before=not_before, config=REFERENCE)
    for name in ("op_release", "op_start", "op_finish"):
        np.testing.assert_allclose(getattr(fast, name), getattr(ref, name), rtol=REL, atol=0,
                                   err_msg=name)
    np.testing.assert_allclose(fast.link_bytes, ref.link_bytes, rtol=REL, atol=1e-6)
    assert fast.events == ref.events
    return fast


@pytest.mark.parametrize("loop", LOOPS)
@settings(**SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), nodes=st.integers(3, 12), chords=st.integers(0, 10),
       flows=st.integers(1, 60), pareto=st.booleans(), deps=st.booleans(),
       latency=st.booleans(), load=st.sampled_from([0.05, 0.5, 5.0]))
def test_random_graphs_with_poisson_arrivals_match_the_reference(
        monkeypatch, loop, seed, nodes, chords, flows, pareto, deps, latency, load):
    rng = np.random.default_rng(seed)
    topo = _random_graph(rng, nodes, chords, latency)
    schedule, not_before = _traffic(rng, nodes, flows, pareto=pareto, deps=deps, load=load)
    assert_matches_reference(monkeypatch, loop, topo, schedule, not_before)


@pytest.mark.parametrize("loop", LOOPS)
@settings(**{**SETTINGS, "max_examples": 12})
@given(seed=st.integers(0, 2**32 - 1), flows=st.integers(20, 80), deps=st.booleans())
def test_a_loaded_fat_tree_with_hash_ecmp_matches_the_reference(monkeypatch, loop, seed,
                                                                flows, deps):
    """fattree:k=4 (16 hosts, 50 GB/s), arrivals faster than the hosts drain them, so
    most flows share links with many others."""
    rng = np.random.default_rng(seed)
    topo = parse_topology("fattree:k=4")
    schedule, not_before = _traffic(rng, 16, flows, pareto=False, deps=deps, load=2.0)
    assert_matches_reference(monkeypatch, loop, topo, schedule, not_before)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pinned_classes_capped_by_their_bottlenecks_match_the_reference(monkeypatch, seed):
    """engine.classes on 150 flows over fattree:k=4, arriving faster than the hosts drain
    them: a class brought down by a saturating link waits capped at its old rate by its
    bottleneck; it stops there when nothing else touched that link (about 370 times per
    seed) and rises on it otherwise (about 280 times, most of them lifted there only
    then). Every finish equals the reference's."""
    rng = np.random.default_rng(seed)
    topo = parse_topology("fattree:k=4")
    schedule, not_before = _traffic(rng, 16, 150, pareto=False, deps=False, load=2.0)
    result = assert_matches_reference(monkeypatch, "classes", topo, schedule, not_before)
    assert result.meta["engine"]["loop"] == "classes"


def test_the_reference_is_max_min_fair_on_a_heterogeneous_line(monkeypatch):
    """A closed form: flows a (link 0 only, 10 GB/s) and b (links 0 and 1, 10 then
    4 GB/s). b (8 MB, from 0) is held to 4 GB/s by link 1 and finishes at 2 ms; a (12 MB,
    released at 1 ms) takes the other 6 GB/s of link 0 until then, 6 MB, and drains the
    other 6 MB at 10 GB/s: 2 ms + 0.6 ms = 2.6 ms."""
    b = TopologyBuilder("line", family="custom")
    n0, n1, n2 = b.add_node("n0"), b.add_node("n1"), b.add_node("n2")
    b.add_link(n0, n1, 10e9)
    b.add_link(n1, n2, 4e9)
    topo = b.build()
    s = ScheduleBuilder(3)
    s.send(0, 1, 12e6)
    s.send(0, 2, 8e6)
    schedule = s.build()
    for loop in LOOPS:
        result = assert_matches_reference(monkeypatch, loop, topo, schedule,
                                          np.array([1e-3, 0.0]))
        np.testing.assert_allclose(result.op_finish, [2.6e-3, 2e-3], rtol=1e-12)
