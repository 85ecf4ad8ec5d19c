"""The engine against hand-computed times and the max-min optimality conditions."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from engine_helpers import chain_topology, explicit_routes
from netsim.engine import execute, max_min_rates
from netsim.schedule import ScheduleBuilder


def run(topology, sends, paths, **kw):
    """sends: list of (nbytes, deps); every send is rank 0 -> rank 1 on its explicit path."""
    b = ScheduleBuilder(2)
    for nbytes, deps in sends:
        b.send(0, 1, nbytes, deps)
    return execute(topology, b.build(), explicit_routes(topology, paths), **kw)


def test_lone_flow_takes_latency_plus_bytes_over_capacity():
    topo = chain_topology([25e9, 50e9], [1e-6, 2e-6])
    result = run(topo, [(1e9, [])], [[0, 1]])
    assert result.makespan == pytest.approx(3e-6 + 1e9 / 25e9, rel=1e-12)
    assert result.link_bytes.tolist() == [1e9, 1e9]
    assert result.link_utilization[0] == pytest.approx((1e9 / 25e9) / result.makespan)


def test_two_flows_on_one_link_get_half_each():
    topo = chain_topology([10e9])
    result = run(topo, [(1e9, []), (1e9, [])], [[0], [0]])
    np.testing.assert_allclose(result.op_finish, [0.2, 0.2], rtol=1e-12)
    assert result.link_peak_flows[0] == 2
    assert result.link_busy[0] == pytest.approx(0.2)


def test_short_flow_leaves_and_long_flow_speeds_up():
    topo = chain_topology([10e9])
    # Both share at 5 GB/s until the 0.5 GB flow ends at 0.1 s; the other then has 10 GB/s.
    result = run(topo, [(0.5e9, []), (1.5e9, [])], [[0], [0]])
    np.testing.assert_allclose(result.op_finish, [0.1, 0.1 + 1.0e9 / 10e9], rtol=1e-12)


def test_textbook_max_min_example():
    # Links: A cap 10, B cap 4, C cap 6. Flows: f0 on A; f1 on A,B; f2 on B; f3 on B,C; f4 on C.
    # B is the bottleneck at 4/3 for f1,f2,f3; then A gives f0 10-4/3 and C gives f4 6-4/3.
    paths = [[0], [0, 1], [1], [1, 2], [2]]
    rows = [i for i, p in enumerate(paths) for _ in p]
    cols = [l for p in paths for l in p]
    incidence = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(5, 3))
    rates = max_min_rates(incidence, np.array([10.0, 4.0, 6.0]))
    np.testing.assert_allclose(rates, [10 - 4 / 3, 4 / 3, 4 / 3, 4 / 3, 6 - 4 / 3], rtol=1e-12)


def test_dependencies_serialise_sends():
    topo = chain_topology([1e9], [1e-3])
    result = run(topo, [(1e9, []), (1e9, [0])], [[0], [0]])
    np.testing.assert_allclose(result.op_finish, [1.001, 2.002], rtol=1e-12)
    np.testing.assert_allclose(result.op_release, [0.0, 1.001], rtol=1e-12)


def test_compute_and_barrier_and_overhead():
    topo = chain_topology([1e9])
    b = ScheduleBuilder(2)
    c = b.compute(0, 0.5)
    s = b.send(0, 1, 1e9, [c])
    bar = b.barrier([s])
    b.compute(1, 0.25, [bar])
    result = execute(topo, b.build(), explicit_routes(topo, [[0]]), overhead=0.01)
    np.testing.assert_allclose(result.op_finish, [0.5, 1.51, 1.51, 1.76], rtol=1e-12)


def test_not_before_delays_release():
    topo = chain_topology([1e9])
    b = ScheduleBuilder(2)
    b.send(0, 1, 1e9)
    result = execute(topo, b.build(), explicit_routes(topo, [[0]]), not_before=np.array([2.0]))
    assert result.op_release[0] == 2.0
    assert result.makespan == pytest.approx(3.0)


def test_zero_byte_send_takes_the_latency():
    topo = chain_topology([1e9], [5e-6])
    result = run(topo, [(0.0, [])], [[0]])
    assert result.makespan == pytest.approx(5e-6)


@st.composite
def random_flows(draw):
    num_links = draw(st.integers(1, 8))
    num_flows = draw(st.integers(1, 12))
    capacity = np.array(draw(st.lists(st.floats(0.5, 100.0), min_size=num_links,
                                      max_size=num_links)))
    paths = [sorted(draw(st.sets(st.integers(0, num_links - 1), min_size=1, max_size=num_links)))
             for _ in range(num_flows)]
    return capacity, paths


@settings(max_examples=200, deadline=None)
@given(random_flows())
def test_max_min_conditions_hold_on_random_cases(case):
    capacity, paths = case
    rows = [i for i, p in enumerate(paths) for _ in p]
    cols = [l for p in paths for l in p]
    incidence = sp.csr_matrix((np.ones(len(rows)), (rows, cols)),
                              shape=(len(paths), len(capacity)))
    rate = max_min_rates(incidence, capacity)
    load = incidence.T @ rate
    assert (load <= capacity * (1 + 1e-9)).all(), "a link is above capacity"
    saturated = load >= capacity * (1 - 1e-9)
    for f, path in enumerate(paths):
        # Some saturated link on the path where f's rate is the largest.
        assert any(saturated[l] and all(rate[g] <= rate[f] * (1 + 1e-9)
                                        for g, q in enumerate(paths) if l in q)
                   for l in path), f"flow {f} has no bottleneck"


@settings(max_examples=60, deadline=None)
@given(random_flows(), st.lists(st.floats(0.0, 50.0), min_size=12, max_size=12))
def test_link_bytes_are_the_sum_of_their_flows(case, sizes):
    capacity, paths = case
    topo = chain_topology(list(capacity))
    # Chain links are only consecutive, but the engine needs no path continuity: routes are given.
    result = run(topo, [(sizes[i], []) for i in range(len(paths))], paths)
    expected = np.zeros(len(capacity))
    for i, p in enumerate(paths):
        expected[p] += sizes[i]
    np.testing.assert_allclose(result.link_bytes, expected, rtol=1e-12)
    assert (result.link_utilization <= 1 + 1e-9).all()
    assert np.isfinite(result.op_finish).all()
