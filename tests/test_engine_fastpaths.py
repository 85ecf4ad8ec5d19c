"""The numpy loop's warm start reads the levels it noted when flows left: they must be
those of the last solution. (That every path's answer is the reference's is
tests/test_engine_conformance.py.)"""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from netsim.engine import EngineConfig, Fault, simulate
from netsim.engine import executor
from netsim.schedule import sends_from_arrays
from netsim.topology import mesh, torus

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


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
        simulate(topo, schedule, faults=faults, config=EngineConfig(loop="numpy"))
    event(f"levels checked at {len(checked)} solves")
