"""Every run terminates, whatever the magnitudes: a property of the engine, not of cases.

The event loop must not spin when ``now + remaining / rate == now`` in floating point (an
8-byte all-reduce on dgx-h100, a 1-byte flow released at 1e6 s, a link degraded to 1e-7):
each event must retire at least one flow or one queued timed event, so a run of F sub-flows
ends within a bounded number of events. Where a closed form exists (a lone flow: release +
overhead + latency + B/C; flows that share one link fairly; a chain of dependent flows) the
answer is checked against it.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from netsim.engine import degrade_links, execute, simulate
from netsim.schedule import ScheduleBuilder

from engine_helpers import chain_topology, explicit_routes

sizes = st.floats(min_value=1.0, max_value=1e15)
whole_sizes = st.integers(min_value=1, max_value=10**15).map(float)
latencies = st.one_of(st.just(0.0), st.floats(min_value=1e-12, max_value=1e3))
rates = st.floats(min_value=1e-3, max_value=1e15)
factors = st.floats(min_value=1e-12, max_value=1.0)
starts = st.one_of(st.just(0.0), st.floats(min_value=1e-12, max_value=1e9))


def _close(a: float, b: float, rel: float = 1e-9) -> bool:
    # The clock resolution at time b is ulp(b); a closed form can be off by that much.
    return math.isclose(a, b, rel_tol=rel, abs_tol=4 * math.ulp(b))


def _lone(nbytes, bandwidth, latency, start, overhead=0.0, faults=()):
    topo = chain_topology([bandwidth], [latency])
    b = ScheduleBuilder(2)
    b.send(0, 1, nbytes)
    schedule = b.build()
    return execute(topo, schedule, explicit_routes(topo, [[0]]), overhead=overhead,
                   not_before=np.array([start]), faults=faults)


@settings(max_examples=300, deadline=None)
@given(nbytes=whole_sizes, bandwidth=rates, latency=latencies, start=starts,
       overhead=latencies)
def test_lone_flow_ends_at_its_closed_form(nbytes, bandwidth, latency, start, overhead):
    result = _lone(nbytes, bandwidth, latency, start, overhead)
    expected = start + overhead + latency + nbytes / bandwidth
    assert result.events <= 4
    assert _close(result.makespan, expected), (result.makespan, expected)


@settings(max_examples=200, deadline=None)
@given(nbytes=sizes, bandwidth=rates, latency=latencies, start=starts, factor=factors)
def test_degraded_link_from_the_start_ends_at_its_closed_form(nbytes, bandwidth, latency,
                                                              start, factor):
    topo = chain_topology([bandwidth], [latency])
    result = _lone(nbytes, bandwidth, latency, start,
                   faults=[degrade_links(topo, [0], factor)])
    expected = start + latency + nbytes / (bandwidth * factor)
    assert result.events <= 4
    assert _close(result.makespan, expected), (result.makespan, expected)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(min_value=1, max_value=12), nbytes=sizes, bandwidth=rates,
       latency=latencies, start=starts, data=st.data())
def test_flows_sharing_a_link_end_within_one_event_per_flow(n, nbytes, bandwidth, latency,
                                                            start, data):
    # Different sizes and releases on one link: every event must retire something.
    scale = data.draw(st.lists(st.floats(min_value=1e-6, max_value=1.0), min_size=n,
                               max_size=n))
    offsets = data.draw(st.lists(st.floats(min_value=0.0, max_value=1e3), min_size=n,
                                 max_size=n))
    topo = chain_topology([bandwidth], [latency])
    b = ScheduleBuilder(2)
    for s in scale:
        b.send(0, 1, max(1.0, nbytes * s))
    schedule = b.build()
    not_before = start + np.array(offsets)
    result = execute(topo, schedule, explicit_routes(topo, [[0]] * n), not_before=not_before)
    # At most three events per flow: its release, its activation, its completion.
    assert result.events <= 3 * n + 1
    assert np.isfinite(result.op_finish).all()
    # The link is never faster than its capacity: the last byte needs all bytes moved.
    total = float(schedule.nbytes.sum())
    lower = float(not_before.min()) + latency + total / bandwidth
    assert result.makespan >= lower * (1 - 1e-9) - 4 * math.ulp(lower)
    # All start at once: equal shares, so the whole set drains in exactly total / C.
    if len(set(offsets)) == 1:
        assert _close(result.makespan, lower), (result.makespan, lower)


@settings(max_examples=40, deadline=None)
@given(length=st.integers(min_value=1, max_value=400), nbytes=st.sampled_from([1.0, 8.0]),
       bandwidth=rates, latency=latencies, start=starts)
def test_chain_of_dependent_tiny_flows(length, nbytes, bandwidth, latency, start):
    topo = chain_topology([bandwidth], [latency])
    b = ScheduleBuilder(2)
    prev = None
    for _ in range(length):
        prev = b.send(0, 1, nbytes, deps=[] if prev is None else [prev])
    schedule = b.build()
    not_before = np.full(length, start)
    result = execute(topo, schedule, explicit_routes(topo, [[0]] * length),
                     not_before=not_before)
    assert result.events <= 2 * length + 2
    expected = start + length * (latency + nbytes / bandwidth)
    # Each step's finish is rounded to the clock at that time: allow one ulp per step.
    assert math.isclose(result.makespan, expected, rel_tol=1e-9,
                        abs_tol=4 * length * math.ulp(expected))


def test_eight_byte_allreduce_on_dgx_h100_ends():
    """The reported hang: the first row of every nccl-tests sweep."""
    from netsim.run.collective import run_collective
    from netsim.topology import parse_topology

    topo = parse_topology("dgx-h100")
    for size in (1, 2, 4, 8):
        for algo in ("ring", "innetwork", "auto"):
            run = run_collective("allreduce", topo, algo, size)
            assert math.isfinite(run.time_s) and run.time_s >= 3.4e-6  # at least one alpha


def test_mesh_with_a_link_degraded_by_1e_7_ends():
    from netsim.topology import mesh

    topo = mesh((4, 4), bandwidth=50e9)
    b = ScheduleBuilder(2)
    b.send(0, 1, 2.0**20)
    link = int(np.flatnonzero((topo.link_src == 0) & (topo.link_dst == 1))[0])
    result = simulate(topo, b.build(), [0, 1], faults=[degrade_links(topo, [link], 1e-7)])
    assert _close(result.makespan, 2.0**20 / (50e9 * 1e-7))
