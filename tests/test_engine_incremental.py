"""The compiled loop that repairs the last solution (engine.incremental) equals the reference.

The property tests of the compiled loop (``test_engine_kernel``, which re-runs those of
the fast paths and of the symmetry classes) run again here with the incremental loop forced
on from the first event of every run: random DAGs with dependencies, computes, barriers,
empty and self sends, release floors, per-op overheads, per-hop latencies, parallel paths,
symmetry weights and tolerance, each against the reference (numpy, cold solve at every
event) within 1e-9 relative, with the same number of events. The imbalanced all-to-alls of
``test_both_ways_of_filling`` are the loop's own case: most events change a few rates
and leave the rest.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netsim.engine import executor, simulate
from netsim.schedule import ScheduleBuilder

pytest.importorskip("numba")

from test_engine_kernel import (  # noqa: E402  (re-run under the fixture below)
    test_a_hand_over_at_any_event_matches_the_reference as test_incremental_hand_over,
    test_a_link_without_capacity_is_refused_by_the_compiled_loop as
    test_incremental_refuses_a_link_without_capacity,
    test_both_ways_of_filling_match_the_reference as test_incremental_both_fillings,
    test_kernel_alltoall as test_incremental_alltoall,
    test_kernel_collectives as test_incremental_collectives,
    test_kernel_dependent_phases as test_incremental_dependent_phases,
    test_kernel_nvswitch_box as test_incremental_nvswitch_box,
    test_kernel_overheads as test_incremental_overheads,
    test_kernel_random_dags as test_incremental_random_dags,
    test_kernel_random_machines as test_incremental_random_machines,
    test_kernel_release_floors as test_incremental_release_floors,
    test_kernel_tolerance as test_incremental_tolerance,
    test_the_compiled_loop_runs_and_reports_progress as test_incremental_progress,
)
from test_engine_symmetry import search_every_case  # noqa: E402,F401  (its fixture)
from test_engine_fastpaths import SETTINGS  # noqa: E402


@pytest.fixture(autouse=True)
def incremental_loop_for_every_run(monkeypatch):
    monkeypatch.setattr(executor, "KERNEL_AFTER_WORK", 0)
    monkeypatch.setattr(executor, "INCREMENTAL_MIN_SUBS", 0)
    monkeypatch.setattr(executor, "CLASSES", False)     # engine.classes: its own file


@pytest.fixture
def loops_used(monkeypatch):
    """The compiled loops called, in order, by module name."""
    from netsim.engine import classes, incremental, kernel

    used = []
    for module in (classes, incremental, kernel):
        loop = module.run_events
        monkeypatch.setattr(module, "run_events",
                            lambda *a, _loop=loop, _m=module.__name__: used.append(_m)
                            or _loop(*a))
    return used


def _lognormal_alltoall(shape, seed):
    """A mesh and an all-to-all on it with log-normal sizes around 100 kB."""
    from netsim.schedule import sends_from_arrays
    from netsim.topology import mesh

    n = shape[0] * shape[1]
    src, dst = np.divmod(np.arange(n * n), n)
    src, dst = src[src != dst], dst[src != dst]
    nbytes = np.rint(np.random.default_rng(seed).lognormal(np.log(1e5), 1.0, src.size))
    return mesh(shape, bandwidth=1e9, latency=0.0), sends_from_arrays(n, src, dst, nbytes,
                                                                     tag="a2a")


def test_flat_schedules_take_the_incremental_loop_at_any_size(monkeypatch, loops_used):
    """With the default gate, a schedule without dependencies (an imbalanced all-to-all of
    72 flows) runs in engine.incremental and equals the reference; one with dependencies
    of the same size stays in engine.kernel."""
    from test_engine_fastpaths import assert_same_run

    monkeypatch.setattr(executor, "INCREMENTAL_MIN_SUBS", 20_000)
    topo, schedule = _lognormal_alltoall((3, 3), 3)
    assert_same_run(topo, schedule)
    assert loops_used and set(loops_used) == {"netsim.engine.incremental"}
    loops_used.clear()
    b = ScheduleBuilder(9)
    last = None
    for k in range(72):                    # a chain: each send waits for the one before
        last = b.send(k % 9, (k + 1) % 9, 1e5 + k, [] if last is None else [last])
    simulate(topo, b.build())
    assert loops_used and set(loops_used) == {"netsim.engine.kernel"}


def test_the_kernel_loop_runs_where_the_incremental_work_space_does_not_fit(loops_used):
    """The incremental loop is work space on top of the run: with no room left under
    --max-memory, the same flat run goes to engine.kernel, and still equals the
    reference."""
    from netsim.budget import memory_room, set_max_memory

    from test_engine_fastpaths import assert_same_run

    topo, schedule = _lognormal_alltoall((2, 3), 5)
    set_max_memory(1 << 20)                    # 1 MiB: less than the process holds
    try:
        assert memory_room() < 0
        assert_same_run(topo, schedule)
    finally:
        set_max_memory(None)
    assert loops_used and set(loops_used) == {"netsim.engine.kernel"}
    assert memory_room() > 0


@pytest.mark.parametrize("shape", [(4, 11), (5, 11), (6, 11)])
def test_a_check_judges_saturation_relative_to_the_level(monkeypatch, loops_used, shape):
    """Log-normal all-to-alls (seed 1) where a check once let a slack of up to 1e-12 of the
    capacity pass as "still saturated": on a link of ~100 flows the one rising flow took
    it and froze 5e-11 above the flows bottlenecked with it (more than _TOP), and a later
    check at its rate left those frozen, so rates went far from max-min (op finish times
    off by 1.8e-4, 0.72 and 0.83 of the makespan against engine.kernel's full re-solve).
    Now the loop agrees with engine.kernel to rounding, with the same events."""
    topo, schedule = _lognormal_alltoall(shape, 1)
    ours = simulate(topo, schedule)
    assert set(loops_used) == {"netsim.engine.incremental"}
    loops_used.clear()
    monkeypatch.setattr(executor, "INCREMENTAL_MIN_SUBS", None)   # engine.kernel
    monkeypatch.setattr(executor, "INCREMENTAL_FLAT", False)
    full = simulate(topo, schedule)
    assert set(loops_used) == {"netsim.engine.kernel"}
    assert ours.events == full.events
    assert np.max(np.abs(ours.op_finish - full.op_finish)) <= 1e-12 * full.makespan
