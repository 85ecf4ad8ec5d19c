"""The compiled loop on rate classes (engine.classes) equals the reference.

The property tests of the compiled loop (``test_engine_kernel``, which re-runs those of
the fast paths and of the symmetry classes) run again with the incremental loop forced on
from the first event of every run and on rate classes wherever paths are unweighted:
random DAGs with dependencies, computes, barriers, empty and self sends, release floors,
per-op overheads, per-hop latencies, parallel paths and tolerance, each against the
reference (numpy, cold solve at every event) within 1e-9 relative, with the same number of
events. Runs with symmetry weights take engine.incremental (``test_engine_incremental``).
The loop's own cases are imbalanced all-to-alls, where classes split, rise, freeze and
merge at nearly every event; they run here on meshes and tori, with and without per-hop
latency, symmetric and not.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netsim.engine import executor, simulate
from netsim.schedule import ScheduleBuilder, sends_from_arrays
from netsim.topology import mesh, torus

pytest.importorskip("numba")

from test_engine_kernel import (  # noqa: E402  (re-run under the fixture below)
    test_a_hand_over_at_any_event_matches_the_reference as test_classes_hand_over,
    test_a_link_without_capacity_is_refused_by_the_compiled_loop as
    test_classes_refuse_a_link_without_capacity,
    test_both_ways_of_filling_match_the_reference as test_classes_both_fillings,
    test_kernel_alltoall as test_classes_alltoall,
    test_kernel_collectives as test_classes_collectives,
    test_kernel_dependent_phases as test_classes_dependent_phases,
    test_kernel_nvswitch_box as test_classes_nvswitch_box,
    test_kernel_overheads as test_classes_overheads,
    test_kernel_random_dags as test_classes_random_dags,
    test_kernel_random_machines as test_classes_random_machines,
    test_kernel_release_floors as test_classes_release_floors,
    test_kernel_tolerance as test_classes_tolerance,
    test_the_compiled_loop_runs_and_reports_progress as test_classes_progress,
)
from test_engine_fastpaths import SETTINGS, assert_same_run  # noqa: E402
from test_engine_incremental import loops_used  # noqa: E402,F401  (its fixture)
from test_engine_symmetry import search_every_case  # noqa: E402,F401  (its fixture)


@pytest.fixture(autouse=True)
def classes_loop_for_every_run(monkeypatch):
    monkeypatch.setattr(executor, "KERNEL_AFTER_WORK", 0)
    monkeypatch.setattr(executor, "INCREMENTAL_MIN_SUBS", 0)
    monkeypatch.setattr(executor, "CLASSES", True)


def _alltoall(maker, shape, sizes, latency=0.0):
    n = shape[0] * shape[1]
    src, dst = np.divmod(np.arange(n * n), n)
    src, dst = src[src != dst], dst[src != dst]
    topo = maker(shape, bandwidth=1e9, latency=latency)
    return topo, sends_from_arrays(n, src, dst, sizes[:src.size], tag="a2a")


@settings(max_examples=40, **SETTINGS)
@given(shape=st.sampled_from([(3, 3), (4, 4), (3, 5), (5, 5)]),
       maker=st.sampled_from([mesh, torus]),
       latency=st.sampled_from([0.0, 1e-6]),
       sizes=st.sampled_from(["lognormal", "few", "equal"]),
       seed=st.integers(0, 2**16))
def test_imbalanced_alltoalls_match_the_reference(shape, maker, latency, sizes, seed):
    """Log-normal sizes (every flow ends at its own time), a few distinct sizes (ties
    between classes) and equal sizes (everything ends at once) on meshes and tori."""
    rng = np.random.default_rng(seed)
    n = shape[0] * shape[1] * (shape[0] * shape[1] - 1)
    nbytes = {"lognormal": np.rint(rng.lognormal(np.log(1e5), 1.0, n)),
              "few": rng.choice([5e4, 1e5, 2e5], n),
              "equal": np.full(n, 1e5)}[sizes]
    topo, schedule = _alltoall(maker, shape, nbytes, latency)
    assert_same_run(topo, schedule)


@pytest.mark.parametrize("latency", [0.0, 1e-6])
def test_pinned_classes_on_a_larger_mesh_match_the_reference(latency):
    """A 6x6 mesh all-to-all with log-normal sizes: classes large enough that most of
    those brought down at a saturating link are pinned there and end at their old rate
    on their own bottleneck, others stop below it or outlast the water's passing of it
    (engine.classes' docstring)."""
    rng = np.random.default_rng(5)
    nbytes = np.rint(rng.lognormal(np.log(1e5), 1.0, 36 * 35))
    topo, schedule = _alltoall(mesh, (6, 6), nbytes, latency)
    assert_same_run(topo, schedule)


@settings(max_examples=20, **SETTINGS)
@given(hosts=st.integers(3, 6), leaves=st.integers(2, 4), spines=st.integers(2, 3),
       oversubscription=st.sampled_from([1.0, 2.0]),
       sizes=st.sampled_from(["lognormal", "equal"]), seed=st.integers(0, 2**16))
def test_alltoalls_over_ecmp_leaf_spines_match_the_reference(hosts, leaves, spines,
                                                              oversubscription, sizes, seed):
    """All-to-all over a leaf-spine, ECMP by hash: spine links carry uneven numbers of
    flows, so classes bottlenecked at host links and at spine links split from each other
    at nearly every event, some classes small against the link's window of draining
    flows and some large (the two ways engine.classes' _split finds a split's members),
    and link loads move by many compensated updates (_add_load)."""
    from netsim.topology import leaf_spine

    topo = leaf_spine(hosts, leaves, spines, bandwidth=1e9,
                      oversubscription=oversubscription)
    n = hosts * leaves
    src, dst = np.divmod(np.arange(n * n), n)
    src, dst = src[src != dst], dst[src != dst]
    rng = np.random.default_rng(seed)
    nbytes = (np.rint(rng.lognormal(np.log(1e5), 1.0, src.size)) if sizes == "lognormal"
              else np.full(src.size, 1e5))
    assert_same_run(topo, sends_from_arrays(n, src, dst, nbytes, tag="a2a"))


@settings(max_examples=25, **SETTINGS)
@given(seed=st.integers(0, 2**16), waves=st.integers(2, 4))
def test_waves_of_alltoalls_with_dependencies_match_the_reference(seed, waves):
    """Phases of imbalanced sends, each rank's next send waiting for its last: flows
    join classes that are already draining."""
    rng = np.random.default_rng(seed)
    n = 9
    b = ScheduleBuilder(n)
    last = [None] * n
    for _ in range(waves):
        for src in range(n):
            dst = int(rng.integers(0, n - 1))
            dst += dst >= src
            deps = [] if last[src] is None else [last[src]]
            last[src] = b.send(src, dst, float(np.rint(rng.lognormal(np.log(1e5), 1.0))),
                               deps)
    assert_same_run(mesh((3, 3), bandwidth=1e9, latency=0.0), b.build())


@settings(max_examples=20, **SETTINGS)
@given(seed=st.integers(0, 2**16), backwards=st.booleans())
def test_flows_released_out_of_id_order_are_found_on_their_links(seed, backwards):
    """A split reads a link's draining flows from a window over the flows the run puts on
    it, widened as they start. Waves of imbalanced sends released one after another by
    release floors, the last-built wave first when ``backwards`` (a later wave's sends
    have lower ids), so windows narrowed past finished flows widen again at either end."""
    from netsim.engine import execute, route_schedule
    from test_engine_fastpaths import REL, reference_engine

    rng = np.random.default_rng(seed)
    n, waves = 9, 4
    b = ScheduleBuilder(n)
    for _ in range(waves):
        for src in range(n):
            dst = int(rng.integers(0, n - 1))
            b.send(src, dst + (dst >= src), float(np.rint(rng.lognormal(np.log(1e5), 1.0))))
    schedule = b.build()
    wave = np.arange(schedule.num_ops) // n
    if backwards:
        wave = waves - 1 - wave
    not_before = wave * rng.uniform(5e-5, 2e-4)     # overlapping the wave before, or not
    topo = mesh((3, 3), bandwidth=1e9, latency=0.0)
    routes = route_schedule(topo, schedule, topo.endpoints)
    fast = execute(topo, schedule, routes, not_before=not_before)
    with reference_engine():
        ref = execute(topo, schedule, routes, not_before=not_before)
    np.testing.assert_allclose(fast.op_finish, ref.op_finish, rtol=REL, atol=1e-18)
    assert fast.events == ref.events


def test_flat_schedules_take_the_classes_loop(loops_used):
    """With the default gate an unweighted schedule without dependencies runs in
    engine.classes and equals the reference."""
    rng = np.random.default_rng(4)
    topo, schedule = _alltoall(mesh, (3, 4), np.rint(rng.lognormal(np.log(1e5), 1.0, 132)))
    assert_same_run(topo, schedule)
    assert loops_used and set(loops_used) == {"netsim.engine.classes"}


def test_weighted_paths_take_the_flow_loop(monkeypatch, loops_used):
    """Symmetry weights (a torus all-to-all's classes) are not for rate classes: the
    run takes engine.incremental and equals the reference."""
    from netsim.engine import symmetry

    monkeypatch.setattr(symmetry, "MIN_SUBFLOWS", 0)
    topo, schedule = _alltoall(torus, (4, 4), np.full(240, 1e5))
    result = assert_same_run(topo, schedule)
    assert result.meta.get("symmetry_classes")
    assert "netsim.engine.classes" not in loops_used


@pytest.mark.parametrize("shape", [(4, 11), (6, 11)])
def test_checks_judge_saturation_relative_to_the_level(monkeypatch, loops_used, shape):
    """The log-normal all-to-alls on which engine.incremental's capacity-relative check
    once drifted (``test_engine_incremental``): the classes loop, whose checks judge
    saturation the same way, agrees with engine.kernel's full re-solve to rounding, with
    the same events."""
    from test_engine_incremental import _lognormal_alltoall

    topo, schedule = _lognormal_alltoall(shape, 1)
    ours = simulate(topo, schedule)
    assert set(loops_used) == {"netsim.engine.classes"}
    monkeypatch.setattr(executor, "INCREMENTAL_MIN_SUBS", None)   # engine.kernel
    monkeypatch.setattr(executor, "INCREMENTAL_FLAT", False)
    full = simulate(topo, schedule)
    assert ours.events == full.events
    assert np.max(np.abs(ours.op_finish - full.op_finish)) <= 1e-12 * full.makespan


def _heap_is_sound(hp, hval, hpos, n, level):
    """Every slot's (level, node) is at least its parent's, slots and positions agree,
    each slot holds its node's level, and no node outside the first n slots has one."""
    from netsim.engine.heaps import _FANOUT

    for i in range(n):
        assert hpos[hp[i]] == i and hval[i] == level[int(hp[i])]
        if i:
            p = (i - 1) >> _FANOUT
            assert (hval[p], hp[p]) <= (hval[i], hp[i])
    inside = set(hp[:n].tolist())
    assert all(hpos[f] == -1 for f in range(hpos.size) if f not in inside)


@settings(max_examples=60, **SETTINGS)
@given(ops=st.lists(st.tuples(st.sampled_from(["put", "pop", "take", "rise", "dip"]),
                              st.integers(0, 39),
                              st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.5, 7.0, 1e-300, 3e9])),
                    max_size=200))
def test_the_link_heap_pops_in_level_then_node_order(ops):
    """The refill's heap of link levels (``_put``, ``_take``, ``_rise`` as the refill and
    ``_freeze`` use them) against a dict: after every step the heap is sound, and each
    pop returns the least (level, node). A rise that rounding turned into a small fall
    must still move the node up (a leaf left in place there would break the order)."""
    from netsim.engine.heaps import _put, _rise, _take

    m = 40
    hp, hval = np.empty(m, dtype=np.int64), np.empty(m)
    hpos = np.full(m, -1, dtype=np.int64)
    level = {}
    n = 0
    for op, f, x in ops:
        if op == "put":
            n = _put(hp, hval, hpos, n, f, x)
            level[f] = x
        elif op == "pop" and n:
            assert (hval[0], hp[0]) == min((v, g) for g, v in level.items())
            del level[int(hp[0])]
            n = _take(hp, hval, hpos, n, 0)
        elif op == "take" and hpos[f] >= 0:        # a link left without rising classes
            del level[f]
            n = _take(hp, hval, hpos, n, hpos[f])
        elif op in ("rise", "dip") and hpos[f] >= 0:   # a freeze raises a link's level
            level[f] += x if op == "rise" else -x      # (or, by rounding, lowers it)
            _rise(hp, hval, hpos, n, hpos[f], f, level[f])
        _heap_is_sound(hp, hval, hpos, n, level)
