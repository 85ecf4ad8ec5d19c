"""The compiled loop on rate classes (engine.classes) equals the reference.

Random cases of every kind run on every path in tests/test_engine_conformance.py. The
loop's own cases are imbalanced all-to-alls, where classes split, rise, freeze and
merge at nearly every event; they run here on meshes and tori, with and without per-hop
latency, symmetric and not.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsim.engine import EngineConfig, execute, route_schedule, simulate
from netsim.errors import ResourceError
from netsim.schedule import ScheduleBuilder, sends_from_arrays
from netsim.topology import mesh, torus

from engine_helpers import lognormal_alltoall

pytest.importorskip("numba")

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
CLASSES = EngineConfig(loop="classes", symmetry=False)
REFERENCE = EngineConfig(loop="reference")
REL = 1e-9                    # the engine's merge window (tests/test_engine_conformance.py)


def assert_same_run(topo, schedule, not_before=None):
    """The classes loop against the reference, op for op and link for link."""
    routes = route_schedule(topo, schedule, np.asarray(topo.endpoints[:schedule.num_ranks]))
    fast = execute(topo, schedule, routes, not_before=not_before, config=CLASSES)
    ref = execute(topo, schedule, routes, not_before=not_before, config=REFERENCE)
    assert fast.meta["engine"]["loop"] == "classes"
    scale = max(float(ref.makespan), 1e-30)
    for name in ("op_release", "op_start", "op_finish"):
        np.testing.assert_allclose(getattr(fast, name), getattr(ref, name), rtol=1e-12,
                                   atol=REL * scale, err_msg=name)
    np.testing.assert_allclose(fast.link_bytes, ref.link_bytes, rtol=1e-12, atol=1e-9)
    assert fast.events == ref.events
    return fast


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
    assert_same_run(topo, schedule, not_before)


def test_flat_schedules_take_the_classes_loop_weighted_or_not():
    """Under ``auto`` (handing over from the first event) a schedule without dependencies
    runs in engine.classes, on flows or on symmetry classes (a torus all-to-all's, whose
    representatives carry weights: an entry counts the flows they stand for)."""
    rng = np.random.default_rng(4)
    config = EngineConfig(numpy_work=0, symmetry_min_subflows=0)
    topo, schedule = _alltoall(mesh, (3, 4), np.rint(rng.lognormal(np.log(1e5), 1.0, 132)))
    assert simulate(topo, schedule, config=config).meta["engine"]["loop"] == "classes"
    topo, schedule = _alltoall(torus, (4, 4), np.full(240, 1e5))
    engine = simulate(topo, schedule, config=config).meta["engine"]
    assert engine["symmetry"]["classes"] and engine["loop"] == "classes"
    b = ScheduleBuilder(9)                 # with dependencies, of that size: engine.kernel
    last = None
    for k in range(72):                    # a chain: each send waits for the one before
        last = b.send(k % 9, (k + 1) % 9, 1e5 + k, [] if last is None else [last])
    topo = mesh((3, 3), bandwidth=1e9, latency=0.0)
    assert simulate(topo, b.build(), config=config).meta["engine"]["loop"] == "kernel"


def test_a_work_space_beyond_the_budget_is_refused_with_its_estimate():
    """The classes loop's work space (112 B per path link, 300 B per flow) beyond the
    memory budget is refused with one line, not switched to another loop."""
    topo, schedule = lognormal_alltoall((2, 3), 5)
    small = EngineConfig(loop="classes", symmetry=False, memory_budget=1000)
    # 50 path links x 112 B + 30 flows x 300 B = 14,600 B
    with pytest.raises(ResourceError, match=r"classes loop on 30 flows \(50 path links\) "
                                            r".*about 14\.26 KiB"):
        simulate(topo, schedule, config=small)
    assert simulate(topo, schedule, config=EngineConfig(
        loop="kernel", symmetry=False, memory_budget=1000)).meta["engine"]["loop"] == "kernel"


@pytest.mark.parametrize("shape", [(4, 11), (6, 11)])
def test_checks_judge_saturation_relative_to_the_level(shape):
    """Log-normal all-to-alls (seed 1) where a check once let a slack of up to 1e-12 of the
    capacity pass as "still saturated" (in the flow-by-flow solver that preceded rate
    classes): on a link of ~100 flows the one rising flow took it and froze 5e-11 above
    the flows bottlenecked with it, and a later check at its rate left those frozen, so
    rates went far from max-min (op finish times off by 1.8e-4 and 0.83 of the makespan).
    The classes loop, whose checks judge saturation relative to the level (``_SLACK``),
    agrees with engine.kernel's full re-solve to rounding, with the same events."""
    topo, schedule = lognormal_alltoall(shape, 1)
    ours = simulate(topo, schedule, config=CLASSES)
    full = simulate(topo, schedule, config=EngineConfig(loop="kernel", symmetry=False))
    assert ours.meta["engine"]["loop"] == "classes"
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
