"""Every fast path of the engine equals the reference engine, on random cases.

The reference (``executor.REFERENCE = True``) solves the max-min rates cold, over every
draining flow, at every event: no warm start, no incremental bookkeeping. The fast engine
must give the same per-op release, start and finish times within 1e-9 relative, the same
number of events and the same per-link bytes, on:

* random machines, random DAGs (dependencies, computes, barriers, empty and self sends) and
  random faults (failures and degradations), from the invariants test's strategy;
* meshes and tori with all-to-all traffic of equal sizes (symmetric: many simultaneous
  completions) and of random sizes (asymmetric: one completion per event), with and
  without per-hop latency (flows join the sharing at staggered times);
* chains of dependent all-to-alls, where flows of one phase meet the next.
"""

from __future__ import annotations

from contextlib import contextmanager
from unittest import mock

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from netsim.engine import Fault, simulate
from netsim.engine import executor
from netsim.schedule import ScheduleBuilder, sends_from_arrays
from netsim.topology import mesh, torus

from test_invariants import cases as random_cases

REL = 1e-9
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@contextmanager
def reference_engine():
    saved = executor.REFERENCE
    executor.REFERENCE = True
    try:
        yield
    finally:
        executor.REFERENCE = saved


def assert_same_run(topo, schedule, placement=None, faults=()):
    fast = simulate(topo, schedule, placement, faults=faults)
    with reference_engine():
        ref = simulate(topo, schedule, placement, faults=faults)
    scale = max(float(np.nanmax(np.abs(ref.op_finish))) if ref.op_finish.size else 0.0, 1e-30)
    for name in ("op_release", "op_start", "op_finish"):
        np.testing.assert_allclose(getattr(fast, name), getattr(ref, name), rtol=REL,
                                   atol=REL * scale * 1e-3, err_msg=name)
    np.testing.assert_allclose(fast.link_bytes, ref.link_bytes, rtol=REL, atol=1e-6)
    assert fast.events == ref.events
    return fast


@settings(max_examples=150, **SETTINGS)
@given(random_cases())
def test_random_dags_with_faults_match_the_reference(case):
    topo, schedule, placement, faults = case
    assert_same_run(topo, schedule, placement, faults)


@st.composite
def alltoall_cases(draw):
    shape = draw(st.sampled_from([(2, 3), (3, 3), (2, 4), (4, 4)]))
    maker = draw(st.sampled_from([mesh, torus]))
    latency = draw(st.sampled_from([0.0, 1e-6]))
    topo = maker(shape, bandwidth=draw(st.sampled_from([1e9, 5e10])), latency=latency)
    n = shape[0] * shape[1]
    src, dst = np.divmod(np.arange(n * n), n)
    src, dst = src[src != dst], dst[src != dst]
    symmetric = draw(st.booleans())
    if symmetric:
        nbytes = float(draw(st.sampled_from([1, 1000, 1 << 20])))
    else:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        nbytes = np.maximum(np.rint(rng.lognormal(np.log(1 << 16), 1.0, src.size)), 0.0)
    faults = []
    if draw(st.booleans()):
        link = draw(st.integers(0, topo.num_links - 1))
        faults.append(Fault((link,), draw(st.sampled_from([0.0, 1e-6, 1e-5])),
                            draw(st.sampled_from([0.25, 0.5]))))
    return topo, sends_from_arrays(n, src, dst, nbytes), faults


@settings(max_examples=40, **SETTINGS)
@given(alltoall_cases())
def test_alltoall_symmetric_and_imbalanced_match_the_reference(case):
    topo, schedule, faults = case
    assert_same_run(topo, schedule, faults=faults)


@settings(max_examples=25, **SETTINGS)
@given(st.integers(0, 2**32 - 1), st.integers(2, 3))
def test_dependent_phases_match_the_reference(seed, phases):
    # Each rank's send of phase p waits for the sends it received in phase p-1, so the
    # flows of a late phase start while an early phase is still draining elsewhere.
    rng = np.random.default_rng(seed)
    topo = mesh((3, 3), bandwidth=1e9, latency=1e-7)
    n = 9
    b = ScheduleBuilder(n)
    received: list[list[int]] = [[] for _ in range(n)]
    for _ in range(phases):
        now: list[list[int]] = [[] for _ in range(n)]
        for s in range(n):
            for d in rng.choice(n, size=3, replace=False):
                if d != s:
                    now[d].append(b.send(s, int(d), float(rng.integers(1, 1 << 20)),
                                         deps=received[s]))
        received = now
    assert_same_run(topo, b.build())


@settings(max_examples=30, **SETTINGS)
@given(alltoall_cases())
def test_levels_noted_at_removal_equal_those_of_the_last_solution(case):
    # The warm start reads the last solution's saturation level of every link that lost
    # flows; the engine notes it when the flows leave instead of recomputing every link's
    # level after every solve. Both must give the same numbers.
    from netsim.engine.maxmin import saturation_levels

    topo, schedule, faults = case
    original = executor._Execution._solve
    checked = []

    def solve(self):
        last = getattr(self, "_last_solution", None)
        if self.level is not None and last is not None and self.lost.any():
            expected = saturation_levels(*last)
            np.testing.assert_array_equal(self.level[self.lost], expected[self.lost])
            checked.append(int(self.lost.sum()))
        original(self)
        lengths = self.path_len[self.active].copy()
        self._last_solution = (lengths, self.active_links.copy(),
                               self.rate[self.active].copy(), self.capacity.copy())

    with mock.patch.object(executor._Execution, "_solve", solve):
        simulate(topo, schedule, faults=faults)
    event(f"levels checked at {len(checked)} solves")
