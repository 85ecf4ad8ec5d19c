"""Invariants of the fluid network over random machines, random DAGs and random faults.

Machines: random connected graphs (cables of random bandwidth and latency, some bundles
of parallel links), meshes, tori, rings and fat-trees. Schedules: random DAGs of sends
(some of zero bytes, some from a rank to itself), computes and barriers. Faults: links
that fail or degrade at random times, chosen so that the machine stays connected.

Every interval of the run is observed from inside the engine (the draining sub-flows,
their rates, their current paths and the link capacities), so the checks are exact:

* no link carries more than its current capacity (from the faults, not the engine);
* the rates are max-min fair: every draining flow crosses a saturated link on which no
  flow is faster;
* bytes are conserved: each flow drains exactly its bytes, once; each link's bytes are the
  integral of its load, which the recorded timeline shows too; every op finishes;
* every collective delivers exactly what it promises (netsim.algorithms.verify), and its
  schedule runs to completion on a faulty machine.
"""

from __future__ import annotations

from contextlib import contextmanager
from unittest import mock

import networkx as nx
import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine_helpers import placed_ranks, random_graph, with_extra_nodes
from netsim.engine import Fault, simulate
from netsim.engine import executor
from netsim.schedule import SEND, ScheduleBuilder
from netsim.topology import fat_tree, mesh, ring, torus

TOL = 1e-9
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- machines -------------------------------------------------------------------------

machines = st.one_of(
    random_graph((2, 7), [1e9, 2e9, 5e9, 1e10]),
    st.builds(lambda d, l: mesh(d, bandwidth=1e9, latency=1e-7, links=l),
              st.sampled_from([(2, 2), (2, 3), (3, 3)]), st.sampled_from([1, 2])),
    st.builds(lambda d: torus(d, bandwidth=2e9, latency=1e-7),
              st.sampled_from([(3, 3), (2, 4)])),
    st.builds(lambda n: ring(n, bandwidth=1e9), st.integers(3, 6)),
    st.just(fat_tree(4, bandwidth=1e9, latency=1e-7)),
)


# -- schedules ------------------------------------------------------------------------

@st.composite
def random_dag(draw, num_ranks: int):
    """Up to 20 ops; each depends on a few earlier ones."""
    b = ScheduleBuilder(num_ranks)
    for op in range(draw(st.integers(1, 20))):
        deps = draw(st.lists(st.integers(0, op - 1), max_size=3, unique=True)) if op else []
        kind = draw(st.sampled_from(["send"] * 6 + ["compute", "barrier"]))
        if kind == "send":
            src = draw(st.integers(0, num_ranks - 1))
            dst = draw(st.integers(0, num_ranks - 1))
            b.send(src, dst, draw(st.sampled_from([0.0, 1e3, 1e5, 3e5, 1e6, 4e6])), deps)
        elif kind == "compute":
            b.compute(draw(st.integers(0, num_ranks - 1)),
                      draw(st.sampled_from([0.0, 1e-6, 1e-4])), deps)
        else:
            b.barrier(deps)
    return b.build()


# -- faults ---------------------------------------------------------------------------

def strongly_connected_without(topo, failed: set[int]) -> bool:
    g = nx.DiGraph()
    g.add_nodes_from(range(topo.num_nodes))
    g.add_edges_from((int(topo.link_src[l]), int(topo.link_dst[l]))
                     for l in range(topo.num_links) if l not in failed)
    return nx.is_strongly_connected(g)


@st.composite
def random_faults(draw, topo):
    """Up to 3 faults: failures that keep the machine connected, and slow-downs."""
    faults, failed = [], set()
    for _ in range(draw(st.integers(0, 3))):
        link = draw(st.integers(0, topo.num_links - 1))
        time = draw(st.sampled_from([0.0, 1e-6, 5e-5, 2e-4, 1e-3]))
        if draw(st.booleans()) and strongly_connected_without(topo, failed | {link}):
            failed.add(link)
            faults.append(Fault((link,), time, 0.0))
        else:
            faults.append(Fault((link,), time, draw(st.sampled_from([0.1, 0.5, 0.9]))))
    return faults


def capacity_at(topo, faults, t: float) -> np.ndarray:
    """Each link's bandwidth at time t, from the faults alone (latest fault of a link wins)."""
    cap = topo.bandwidth.astype(float).copy()
    for fault in sorted(faults, key=lambda f: f.time):
        if fault.time <= t:
            cap[list(fault.links)] = topo.bandwidth[list(fault.links)] * fault.factor
    return cap


# -- observing the engine -------------------------------------------------------------

@contextmanager
def observed():
    """Record every fluid interval: who drains, how fast, along which links, under which
    capacities (a wrapper around the executor's own time step)."""
    intervals: list[dict] = []
    runs: list = []
    original, original_run = executor._Execution._advance, executor._Execution.run

    def run(self):
        runs.append(self)
        return original_run(self)

    def advance(self, dt):
        if self.active.size and dt > 0:
            subs = self.active.copy()
            lengths = self.path_len[subs].copy()
            intervals.append(dict(
                t0=self.now, dt=dt, subs=subs, rate=self.rate[subs].copy(), lengths=lengths,
                links=executor._gather_spans(self.path_start[subs], lengths, self.path_links),
                capacity=self.capacity.copy()))
        original(self, dt)

    with mock.patch.object(executor._Execution, "_advance", advance), \
            mock.patch.object(executor._Execution, "run", run):
        yield intervals, runs


def check_invariants(topo, schedule, placement, faults):
    with observed() as (intervals, runs):
        result = simulate(topo, schedule, placement, faults=faults, record_timeline=True)
    assert np.isfinite(result.op_finish).all(), "an op never finished"
    assert len(result.timeline) == len(intervals)
    num_links = topo.num_links
    link_bytes = np.zeros(num_links)
    drained = None
    for iv, (t0, t1, used, load_tl) in zip(intervals, result.timeline):
        assert t0 == iv["t0"] and t1 - t0 == iv["dt"]
        rate, lengths, links = iv["rate"], iv["lengths"], iv["links"]
        assert (rate > 0).all() and np.isfinite(rate).all()
        load = np.bincount(links, weights=np.repeat(rate, lengths), minlength=num_links)
        np.testing.assert_allclose(load[used], load_tl, rtol=1e-12)
        assert not load[np.setdiff1d(np.arange(num_links), used)].any()
        # 1. capacities: the engine's are those of the faults (a fault within the engine's
        # 1e-9 relative tolerance of an interval's start may already be applied), and no
        # link is above them
        now = capacity_at(topo, faults, iv["t0"])
        soon = capacity_at(topo, faults, iv["t0"] * (1 + 1e-8) + 1e-18)
        assert ((iv["capacity"] == now) | (iv["capacity"] == soon)).all()
        assert (load <= iv["capacity"] * (1 + TOL) + 1e-6).all()
        assert (load <= np.maximum(now, soon) * (1 + TOL) + 1e-6).all()
        # 2. max-min: each flow has a saturated link where nobody is faster
        owner = np.repeat(np.arange(len(rate)), lengths)
        fastest = np.zeros(num_links)
        np.maximum.at(fastest, links, rate[owner])
        saturated = load >= iv["capacity"] * (1 - TOL)
        bottleneck = saturated[links] & (rate[owner] >= fastest[links] * (1 - TOL))
        assert np.logical_or.reduceat(bottleneck, np.concatenate(
            ([0], np.cumsum(lengths)[:-1]))).all(), "a flow has no bottleneck"
        # 3. bytes, per link and per flow
        link_bytes += load * iv["dt"]
        if drained is None:
            drained = np.zeros(len(runs[0].sub_bytes))
        np.add.at(drained, iv["subs"], rate * iv["dt"])
    np.testing.assert_allclose(link_bytes, result.link_bytes, rtol=1e-6, atol=1e-3)
    run = runs[0]
    moving = (run.sub_bytes > 0) & (run.path_len > 0)
    if moving.any():
        np.testing.assert_allclose(drained[moving], run.sub_bytes[moving], rtol=1e-6)
    # Without faults the bytes of each link are those of the flows routed over it.
    if not faults:
        from netsim.engine import route_schedule

        routes = route_schedule(topo, schedule, np.asarray(placement))
        sends = np.flatnonzero(schedule.kind == SEND)
        per_sub = schedule.nbytes[sends][routes.sub_req] * routes.sub_frac
        expected = np.bincount(routes.path_links, minlength=num_links,
                               weights=np.repeat(per_sub, np.diff(routes.path_ptr)))
        np.testing.assert_allclose(result.link_bytes, expected, rtol=1e-9, atol=1e-6)
    total = float(schedule.nbytes[schedule.kind == SEND].sum())
    assert float(result.link_bytes.sum()) <= total * max(1, topo.num_nodes) * (1 + TOL)
    return result


@st.composite
def cases(draw):
    topo, placement = placed_ranks(draw, machines, 1, 6)
    return topo, draw(random_dag(placement.size)), placement, draw(random_faults(topo))


def test_a_failure_while_a_send_to_self_is_pending_does_not_crash():
    # Found by the property test below (before engine commit 901b562 it raised IndexError
    # in _reroute: the last unfinished sub-flow had an empty path).
    topo = ring(3, bandwidth=1e9)
    b = ScheduleBuilder(2)
    b.send(0, 1, 1e6)
    b.send(1, 1, 1e6)                    # empty path, unfinished when the link fails
    result = simulate(topo, b.build(), faults=[Fault((topo.link("n0->n1"),), 0.0, 0.0)])
    assert np.isfinite(result.op_finish).all()


@settings(max_examples=120, **SETTINGS)
@given(cases())
def test_capacity_max_min_and_bytes_hold_in_every_interval(case):
    result = check_invariants(*case)
    event(f"{result.topology.split('-')[0]}, {len(case[3])} faults, "
          f"{'several' if len(result.timeline) > 1 else 'at most one'} interval(s)")


# -- collectives ----------------------------------------------------------------------

@st.composite
def collective_cases(draw):
    from netsim.algorithms import algorithms_for
    from netsim.algorithms.options import AlgoOptions
    from netsim.algorithms.registry import OPS

    topo = draw(st.sampled_from([mesh((2, 3), bandwidth=1e9, latency=1e-7),
                                 torus((3, 3), bandwidth=1e9), ring(5, bandwidth=1e9),
                                 fat_tree(4, bandwidth=1e9)]))
    op = draw(st.sampled_from(OPS))
    n = draw(st.integers(2, min(9, topo.num_endpoints)))
    nodes = np.asarray(topo.endpoints[:n])
    options = AlgoOptions(chunks=draw(st.integers(1, 3)), topology=topo, placement=nodes,
                          root=draw(st.integers(0, n - 1)),
                          gamma=draw(st.sampled_from([None, 5e9])))
    usable = [a for a in algorithms_for(op) if a.applies(n, options)]
    algorithm = draw(st.sampled_from(usable)) if usable else None
    return topo, op, algorithm, n, nodes, options, draw(random_faults(topo))


@settings(max_examples=60, **SETTINGS)
@given(collective_cases(), st.sampled_from([1e3, 1e6, 3e6]))
def test_collectives_deliver_what_they_promise_on_faulty_machines(case, size):
    from netsim.algorithms import build_schedule, verify

    topo, op, algorithm, n, nodes, options, faults = case
    event(f"{op} {'none applies' if algorithm is None else 'ran'}, {len(faults)} faults")
    if algorithm is None:
        return
    schedule = build_schedule(op, algorithm.name, n, size, options)
    verify(schedule, op, n)                      # symbolic: the right data, exactly once
    placement = with_extra_nodes(nodes, schedule)
    result = check_invariants(topo, schedule, placement, faults)
    assert result.makespan > 0 or schedule.total_bytes == 0
