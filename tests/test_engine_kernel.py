"""The compiled event loop (engine.kernel) equals the reference engine, on random cases.

Every property test of the fast paths (``test_engine_fastpaths``) and of the symmetry
classes (``test_engine_symmetry``) runs again here with the compiled loop forced on for
every run, however small (``executor.KERNEL_MIN_WORK = 0``): random DAGs (dependencies,
computes, barriers, empty and self sends), release floors, per-op overheads, per-hop
latencies, parallel paths, symmetry weights and tolerance, each checked against the
reference (numpy, cold solve at every event) within 1e-9 relative, with the same number of
events. Runs with faults keep the numpy loop, so the fault cases check that hand-over.
"""

from __future__ import annotations

import numpy as np
import pytest

from netsim.engine import executor, simulate
from netsim.schedule import ScheduleBuilder
from netsim.topology import torus

pytest.importorskip("numba")

from test_engine_fastpaths import (  # noqa: E402  (re-run under the fixture below)
    test_alltoall_symmetric_and_imbalanced_match_the_reference as test_kernel_alltoall,
    test_dependent_phases_match_the_reference as test_kernel_dependent_phases,
    test_random_dags_with_faults_match_the_reference as test_kernel_random_dags,
)
from test_engine_symmetry import (  # noqa: E402
    test_alltoall_with_release_floors_matches_the_reference as test_kernel_release_floors,
    test_an_nvswitch_box_matches_the_reference as test_kernel_nvswitch_box,
    test_collectives_match_the_reference as test_kernel_collectives,
    test_per_op_overheads_split_classes_and_match_the_reference as test_kernel_overheads,
    test_random_dags_on_random_machines_match_the_reference as test_kernel_random_machines,
    test_tolerance_merges_completions_within_its_window_and_no_others as
    test_kernel_tolerance,
)
from test_engine_symmetry import search_every_case  # noqa: E402,F401  (its fixture)


@pytest.fixture(autouse=True)
def compiled_loop_for_every_run(monkeypatch):
    monkeypatch.setattr(executor, "KERNEL_MIN_WORK", 0)


def test_the_compiled_loop_runs_and_reports_progress():
    """A run the kernel takes (not the numpy loop) calls ``progress`` as the loop does,
    pausing every ``progress_every`` events, and ends with the same makespan."""
    topo = torus((4, 4), bandwidth=1e9, latency=1e-6)
    b = ScheduleBuilder(16)
    for r in range(16):
        b.send(r, (r + 5) % 16, 1e6 * (1 + r))
    schedule = b.build()
    seen = []
    with_kernel = simulate(topo, schedule, progress=lambda e, t: seen.append((e, t)))
    assert seen and seen[-1][0] == with_kernel.events
    assert all(a[1] <= b[1] for a, b in zip(seen, seen[1:]))
    executor_kernel = executor.KERNEL
    try:
        executor.KERNEL = False
        numpy_loop = simulate(topo, schedule)
    finally:
        executor.KERNEL = executor_kernel
    np.testing.assert_allclose(with_kernel.op_finish, numpy_loop.op_finish, rtol=1e-12)
    assert with_kernel.events == numpy_loop.events


def test_a_link_without_capacity_is_refused_by_the_compiled_loop():
    from netsim.errors import SimulationError
    from netsim.topology import ring

    topo = ring(4, bandwidth=1e9)
    topo.bandwidth[:] = 0.0
    b = ScheduleBuilder(4)
    b.send(0, 1, 1e3)
    with pytest.raises(SimulationError, match="no capacity"):
        simulate(topo, b.build())
