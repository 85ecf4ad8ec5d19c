"""The compiled event loop (engine.kernel) equals the reference engine, on random cases.

Every property test of the fast paths (``test_engine_fastpaths``) and of the symmetry
classes (``test_engine_symmetry``) runs again here with the compiled loop forced on for
every run, however small, from its first event on (``executor.KERNEL_AFTER_WORK = 0``:
the numpy loop hands over after one event): random DAGs (dependencies,
computes, barriers, empty and self sends), release floors, per-op overheads, per-hop
latencies, parallel paths, symmetry weights and tolerance, each checked against the
reference (numpy, cold solve at every event) within 1e-9 relative, with the same number of
events. Runs with faults keep the numpy loop, so the fault cases check that hand-over.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
from test_engine_fastpaths import SETTINGS, reference_engine  # noqa: E402


@pytest.fixture(autouse=True)
def compiled_loop_for_every_run(monkeypatch):
    monkeypatch.setattr(executor, "KERNEL_AFTER_WORK", 0)
    monkeypatch.setattr(executor, "INCREMENTAL_MIN_SUBS", None)   # engine.kernel's loop


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


@pytest.mark.parametrize("factor", [0.0, 1e18])
def test_both_ways_of_filling_match_the_reference(factor, monkeypatch):
    """Each solve fills by passes (factor 0) or one bottleneck link at a time (factor
    huge); both give the reference's times on imbalanced all-to-alls with latency, where
    the warm start meets new and finished flows at most events."""
    from netsim.engine import kernel
    from netsim.schedule import sends_from_arrays
    from netsim.topology import mesh

    from test_engine_fastpaths import assert_same_run

    monkeypatch.setattr(kernel, "LINK_SCAN_FACTOR", factor)
    rng = np.random.default_rng(7)
    for shape, latency in (((3, 4), 1e-6), ((4, 4), 0.0), ((2, 5), 5e-7)):
        topo = mesh(shape, bandwidth=1e9, latency=latency)
        n = shape[0] * shape[1]
        src, dst = np.divmod(np.arange(n * n), n)
        src, dst = src[src != dst], dst[src != dst]
        nbytes = np.rint(rng.lognormal(np.log(1e5), 1.0, src.size))
        assert_same_run(topo, sends_from_arrays(n, src, dst, nbytes, tag="a2a"))


@settings(max_examples=30, **SETTINGS)
@given(st.integers(0, 2**32 - 1), st.integers(0, 4000))
def test_a_hand_over_at_any_event_matches_the_reference(seed, after):
    """The numpy loop hands over to the compiled loop after a random amount of work, with
    flows draining and timed events queued (latencies, computes, release floors)."""
    from netsim.engine import execute, route_schedule

    rng = np.random.default_rng(seed)
    topo = torus((3, 3), bandwidth=1e9, latency=2e-7)
    b = ScheduleBuilder(9)
    last = [None] * 9
    for _ in range(40):
        s, d = rng.choice(9, size=2, replace=False)
        deps = [x for x in (last[s],) if x is not None]
        if rng.random() < 0.2:
            op = b.compute(int(s), float(rng.uniform(0, 2e-6)), deps)
        else:
            op = b.send(int(s), int(d), float(rng.integers(1, 20000)), deps)
        last[int(d) if rng.random() < 0.5 else int(s)] = op
    schedule = b.build()
    not_before = rng.uniform(0, 5e-6, schedule.num_ops) * (rng.random(schedule.num_ops) < 0.3)
    routes = route_schedule(topo, schedule, topo.endpoints)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(executor, "KERNEL_AFTER_WORK", after)
        patch.setattr(executor, "KERNEL_EVENT_WORK", 1)
        fast = execute(topo, schedule, routes, not_before=not_before)
    with reference_engine():
        ref = execute(topo, schedule, routes, not_before=not_before)
    for name in ("op_release", "op_start", "op_finish"):
        np.testing.assert_allclose(getattr(fast, name), getattr(ref, name), rtol=1e-9,
                                   atol=1e-18, err_msg=name)
    np.testing.assert_allclose(fast.link_busy, ref.link_busy, rtol=1e-9, atol=1e-18)
    np.testing.assert_array_equal(fast.link_peak_flows, ref.link_peak_flows)
    assert fast.events == ref.events


def test_numba_loads_without_scipy_linalg_and_still_compiles_blas_code():
    """engine.numba_loader defers numba's BLAS probe: loading the compiled loop leaves
    scipy.linalg unimported, numba's flag ends as its own probe sets it with scipy installed,
    and a function that needs BLAS (np.convolve) still compiles, imports scipy.linalg then,
    and agrees with numpy. A fresh interpreter: this one imported scipy.linalg long ago."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "import netsim.engine.kernel\n"
        "from numba.np import arraymath\n"
        "print('scipy.linalg' in sys.modules, arraymath._HAVE_BLAS)\n"
        "import numba\n"
        "f = numba.njit(lambda a, b: np.convolve(a, b))\n"
        "a, b = np.arange(1.0, 7.0), np.array([0.5, -1.0, 2.0])\n"
        "print(bool(np.allclose(f(a, b), np.convolve(a, b))), 'scipy.linalg' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True", "True", "True"]
