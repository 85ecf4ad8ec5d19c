"""Symmetry classes (engine.symmetry) are exact: the quotient run equals the full run.

The reference engine (``EngineConfig(loop="reference")``) simulates every flow, cold, at
every event. With the search threshold at 0, every case below goes through the class
search; where it finds classes the run is on one representative per class. Per-op times
must agree within 1e-9 relative and per-link bytes, busy time and peak flow counts exactly
(up to rounding), on symmetric cases (collectives on rings, tori, meshes, fat-trees and an
NVSwitch box) and release floors; random DAGs on random machines are in
tests/test_engine_conformance.py.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine_helpers import with_extra_nodes
from netsim.engine import EngineConfig, simulate, symmetry
from netsim.schedule import SEND, ScheduleBuilder, sends_from_arrays
from netsim.topology import fat_tree, mesh, ring, torus

from test_invariants import collective_cases, random_dag, machines

REL = 1e-9
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Every case searched, compiled wherever numba is installed (the numpy search is compared
#: with it below, partition for partition).
SEARCH = EngineConfig(symmetry_min_subflows=0, symmetry_compiled_from=0)
NUMPY_SEARCH = EngineConfig(symmetry_min_subflows=0, symmetry_compiled_from=None)
REFERENCE = EngineConfig(loop="reference")


def assert_same_as_reference(topo, schedule, placement=None, not_before=None):
    fast = _run(topo, schedule, placement, not_before, SEARCH)
    ref = _run(topo, schedule, placement, not_before, REFERENCE)
    scale = max(float(np.nanmax(np.abs(ref.op_finish))) if ref.op_finish.size else 0.0, 1e-30)
    for name in ("op_release", "op_start", "op_finish"):
        np.testing.assert_allclose(getattr(fast, name), getattr(ref, name), rtol=REL,
                                   atol=REL * scale * 1e-3, err_msg=name)
    np.testing.assert_allclose(fast.link_bytes, ref.link_bytes, rtol=REL, atol=1e-6)
    np.testing.assert_allclose(fast.link_busy, ref.link_busy, rtol=REL, atol=REL * scale)
    np.testing.assert_array_equal(fast.link_peak_flows, ref.link_peak_flows)
    assert "symmetry_classes" not in ref.meta
    return fast


def _run(topo, schedule, placement, not_before, config):
    if not_before is None:
        return simulate(topo, schedule, placement, config=config)
    from netsim.engine import execute, route_schedule
    from netsim.engine import default_placement

    placement = default_placement(topo, schedule.num_ranks) if placement is None else placement
    routes = route_schedule(topo, schedule, np.asarray(placement))
    return execute(topo, schedule, routes, not_before=not_before, config=config)


def test_a_ring_of_neighbour_sends_is_one_class_and_takes_b_over_bw():
    topo = ring(8, bandwidth=2e9)
    schedule = sends_from_arrays(8, np.arange(8), (np.arange(8) + 1) % 8, 1e9)
    result = assert_same_as_reference(topo, schedule)
    assert result.meta["symmetry_classes"] == {"ops": 1, "flows": 1, "links": 2}
    assert result.makespan == pytest.approx(0.5, rel=1e-12)     # B / bw, no sharing


def test_flows_sharing_a_link_by_class_get_capacity_over_multiplicity():
    # Every rank of a 6-ring sends to the rank 2 ahead, shortest way: each link carries
    # exactly 2 of the 6 equal flows, so each gets bw / 2 (one class, weight 2).
    topo = ring(6, bandwidth=1e9)
    schedule = sends_from_arrays(6, np.arange(6), (np.arange(6) + 2) % 6, 1e9)
    result = assert_same_as_reference(topo, schedule)
    assert result.meta["symmetry_classes"]["flows"] == 1
    assert result.makespan == pytest.approx(2.0, rel=1e-12)
    assert result.link_peak_flows.max() == 2


def test_a_non_equitable_partition_is_refused_by_the_exact_check():
    # Two ops in one class although one depends on something and the other does not.
    ptr = np.array([0, 1, 1, 1])
    idx = np.array([2])
    cls = np.array([0, 0, 1])
    assert not symmetry._equitable(cls, ptr, idx, cls)
    assert symmetry._equitable(np.array([0, 1, 2]), ptr, idx, np.array([0, 1, 2]))


@settings(max_examples=60, **SETTINGS)
@given(collective_cases(), st.sampled_from([1e3, 1e6, 3e6]))
def test_collectives_match_the_reference(case, size):
    from netsim.algorithms import build_schedule

    topo, op, algorithm, n, nodes, options, _ = case
    if algorithm is None:
        return
    schedule = build_schedule(op, algorithm.name, n, size, options)
    placement = with_extra_nodes(nodes, schedule)
    fast = assert_same_as_reference(topo, schedule, placement)
    event("classes" if "symmetry_classes" in fast.meta else "no classes")


@settings(max_examples=12, **SETTINGS)
@given(st.sampled_from(["ring", "innetwork", "oneshot", "dbtree"]),
       st.sampled_from([1e4, 1e6]), st.integers(1, 3))
def test_an_nvswitch_box_matches_the_reference(algo, size, chunks):
    from netsim.algorithms import build_schedule
    from netsim.algorithms.options import AlgoOptions
    from netsim.topology import parse_topology

    topo = parse_topology("dgx-h100")
    nodes = np.asarray(topo.endpoints[:8])
    options = AlgoOptions(chunks=chunks, topology=topo, placement=nodes)
    schedule = build_schedule("allreduce", algo, 8, size, options)
    placement = with_extra_nodes(nodes, schedule)
    fast = simulate(topo, schedule, placement, config=SEARCH)
    ref = simulate(topo, schedule, placement, config=REFERENCE)
    np.testing.assert_allclose(fast.op_finish, ref.op_finish, rtol=REL)
    np.testing.assert_allclose(fast.link_busy, ref.link_busy, rtol=REL, atol=1e-15)
    np.testing.assert_array_equal(fast.link_peak_flows, ref.link_peak_flows)


@settings(max_examples=40, **SETTINGS)
@given(st.sampled_from([(2, 3), (3, 3), (4, 4)]), st.sampled_from([mesh, torus]),
       st.integers(0, 2**32 - 1), st.booleans(), st.booleans())
def test_alltoall_with_release_floors_matches_the_reference(shape, maker, seed, equal, floors):
    rng = np.random.default_rng(seed)
    topo = maker(shape, bandwidth=1e9, latency=1e-7)
    n = shape[0] * shape[1]
    src, dst = np.divmod(np.arange(n * n), n)
    src, dst = src[src != dst], dst[src != dst]
    nbytes = 1e6 if equal else rng.choice([1e5, 1e6], size=src.size)
    schedule = sends_from_arrays(n, src, dst, nbytes)
    # Release floors by source rank's row: symmetric within a row, not across rows.
    not_before = (rng.choice([0.0, 1e-4], size=shape[0])[src // shape[1]]
                  if floors else None)
    assert_same_as_reference(topo, schedule, not_before=not_before)


def test_dependent_phases_on_a_torus_match_the_reference():
    # Two ring steps, the second after the first at every rank: 2 op classes, exact times.
    topo = torus((4, 4), bandwidth=1e9)
    b = ScheduleBuilder(16)
    first = [b.send(r, (r + 1) % 16, 1e6) for r in range(16)]
    for r in range(16):
        b.send(r, (r + 4) % 16, 2e6, deps=[first[(r - 1) % 16]])
    assert_same_as_reference(topo, b.build())


def test_the_fat_tree_timeline_expands_to_every_link():
    topo = fat_tree(4, bandwidth=1e9)
    n = topo.num_endpoints
    schedule = sends_from_arrays(n, np.arange(n), (np.arange(n) + n // 2) % n, 1e6)
    fast = simulate(topo, schedule, record_timeline=True, config=SEARCH)
    ref = simulate(topo, schedule, record_timeline=True, config=REFERENCE)
    assert len(fast.timeline) == len(ref.timeline)
    for (a0, a1, au, al), (b0, b1, bu, bl) in zip(fast.timeline, ref.timeline):
        assert a0 == pytest.approx(b0) and a1 == pytest.approx(b1)
        np.testing.assert_array_equal(au, bu)
        np.testing.assert_allclose(al, bl, rtol=REL)


# -- approximate mode ------------------------------------------------------------------

def _two_lone_flows(second_bytes: float):
    from netsim.topology import ring as ring_topology

    topo = ring_topology(4, bandwidth=1e9)
    b = ScheduleBuilder(4)
    b.send(0, 1, 1e9)              # alone on its link: finishes at 1 s
    b.send(2, 3, second_bytes)     # alone on another: finishes at second_bytes / 1e9 s
    return topo, b.build()


def test_tolerance_merges_completions_within_its_window_and_no_others():
    topo, schedule = _two_lone_flows(1.0005e9)          # 1 s and 1.0005 s
    exact = simulate(topo, schedule)
    assert exact.events == 3 and exact.op_finish[1] == pytest.approx(1.0005)
    merged = simulate(topo, schedule, tolerance=1e-3)   # 0.0005 s <= 1e-3 x 1 s: merged
    assert merged.events == 2
    np.testing.assert_allclose(merged.op_finish, [1.0005, 1.0005])   # at the last: late
    np.testing.assert_allclose(merged.link_bytes, exact.link_bytes)   # every byte counted
    apart = simulate(topo, schedule, tolerance=1e-4)    # 0.0005 s > 1e-4 x 1 s: not merged
    np.testing.assert_allclose(apart.op_finish, exact.op_finish, rtol=1e-12)


def test_tolerance_zero_is_the_exact_engine_and_bad_values_are_refused():
    from netsim.errors import InputError

    topo, schedule = _two_lone_flows(3e8)
    np.testing.assert_array_equal(simulate(topo, schedule, tolerance=0.0).op_finish,
                                  simulate(topo, schedule).op_finish)
    for bad in (1.5, float("nan"), -0.1, float("inf"), True):
        with pytest.raises(InputError, match="tolerance"):
            simulate(topo, schedule, tolerance=bad)


# -- per-op overhead -------------------------------------------------------------------

def test_a_per_op_overhead_delays_each_send_by_its_own_cost():
    # Two lone sends on separate links: each finishes at its own overhead + B / bw.
    topo, schedule = _two_lone_flows(1e9)
    result = simulate(topo, schedule, overhead=np.array([1e-3, 5e-3]))
    np.testing.assert_allclose(result.op_finish, [1.001, 1.005], rtol=1e-12)
    np.testing.assert_allclose(result.op_start, [1e-3, 5e-3], rtol=1e-12)
    from netsim.errors import SimulationError
    with pytest.raises(SimulationError, match="one per op"):
        simulate(topo, schedule, overhead=np.array([1e-3]))


@settings(max_examples=20, **SETTINGS)
@given(st.integers(0, 2**32 - 1))
def test_per_op_overheads_split_classes_and_match_the_reference(seed):
    # A ring of neighbour sends, half of them with a larger overhead: the classes must
    # follow the overheads (same result as the reference, member by member).
    rng = np.random.default_rng(seed)
    topo = ring(8, bandwidth=1e9, latency=1e-7)
    schedule = sends_from_arrays(8, np.arange(8), (np.arange(8) + 1) % 8, 1e6)
    overhead = rng.choice([0.0, 2e-4], size=8)
    fast = simulate(topo, schedule, overhead=overhead, config=SEARCH)
    ref = simulate(topo, schedule, overhead=overhead, config=REFERENCE)
    np.testing.assert_allclose(fast.op_finish, ref.op_finish, rtol=REL)
    np.testing.assert_allclose(fast.op_finish, overhead + 1e-7 + 1e-3, rtol=1e-12)


# -- the compiled search (numba) against the numpy one ---------------------------------

def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal up to the names of the classes: the pairs (a, b) are as many as either's."""
    if a.shape != b.shape:
        return False
    if a.size == 0:
        return True
    pairs = np.unique(a * (int(b.max()) + 1) + b).size
    return pairs == np.unique(a).size == np.unique(b).size


def _both_searches(topo, schedule, placement=None, not_before=None, overhead=0.0):
    from netsim.engine import default_placement, route_schedule

    placement = default_placement(topo, schedule.num_ranks) if placement is None else placement
    routes = route_schedule(topo, schedule, np.asarray(placement))
    if len(routes.sub_req) == 0:                    # find_classes stops before searching
        return None, None
    kernels = symmetry._compiled(0, SEARCH)
    assert kernels is not None
    attrs = symmetry._attributes(schedule, routes, topo.bandwidth, not_before, overhead)
    slow = symmetry._find_numpy(symmetry._start_labels(None, *attrs[:3]), attrs[3], SEARCH)
    start = symmetry._start_labels(kernels, *attrs[:3])
    return slow, symmetry._find_compiled(kernels, start, attrs[3], SEARCH)


def assert_same_search(*args, **kwargs):
    slow, fast = _both_searches(*args, **kwargs)
    assert (slow is None) == (fast is None)
    if slow is not None:
        for name in ("op", "sub", "link"):
            assert _same_partition(getattr(slow, name), getattr(fast, name)), name
    return fast


@pytest.mark.parametrize("chunks", [1, 3])
def test_the_compiled_search_finds_the_numpy_partition_on_a_torus_ring(chunks):
    pytest.importorskip("numba")
    from netsim.algorithms import build_schedule
    from netsim.algorithms.options import AlgoOptions

    topo = torus((4, 4), bandwidth=1e9, latency=1e-7)
    schedule = build_schedule("allreduce", "ring", 16, 1e6, AlgoOptions(chunks=chunks))
    classes = assert_same_search(topo, schedule)
    # Moving every rank one row down (r -> r + 4) maps the torus and the ring onto
    # themselves: the classes are at most a quarter of the sends.
    assert int(classes.sub.max()) + 1 <= schedule.num_ops // 4


@settings(max_examples=60, **SETTINGS)
@given(machines, st.data())
def test_the_compiled_search_finds_the_numpy_partition_on_random_dags(topo, data):
    pytest.importorskip("numba")
    endpoints = np.asarray(topo.endpoints)
    ranks = data.draw(st.integers(1, min(6, endpoints.size)))
    placement = np.asarray(data.draw(st.permutations(endpoints.tolist()))[:ranks])
    schedule = data.draw(random_dag(ranks))
    floors = data.draw(st.sampled_from([None, "some"]))
    not_before = (None if floors is None else
                  np.where(np.arange(schedule.num_ops) % 3 == 0, 1e-4, -0.0))
    assert_same_search(topo, schedule, placement, not_before=not_before)


@settings(max_examples=30, **SETTINGS)
@given(collective_cases(), st.sampled_from([1e3, 1e6]))
def test_the_compiled_search_finds_the_numpy_partition_on_collectives(case, size):
    pytest.importorskip("numba")
    from netsim.algorithms import build_schedule

    topo, op, algorithm, n, nodes, options, _ = case
    if algorithm is None:
        return
    schedule = build_schedule(op, algorithm.name, n, size, options)
    assert_same_search(topo, schedule, with_extra_nodes(nodes, schedule))


def test_the_compiled_search_tells_apart_neighbours_that_salts_a_few_apart_confused():
    # tt-metal's line all-gather on 5 ranks (found by hypothesis): with per-relation salts
    # one apart, an op's dependency of class c and another's successor of class c ^ 1 added
    # the same value, the compiled search kept a class the numpy one split (9 sub-flow
    # classes against 10) and its exact check then refused the search.
    pytest.importorskip("numba")
    from netsim.algorithms import build_schedule
    from netsim.algorithms.options import AlgoOptions

    topo = ring(5, bandwidth=1e9)
    schedule = build_schedule("allgather", "tt_line", 5, 1e3, AlgoOptions(chunks=1,
                                                                           topology=topo))
    found = assert_same_search(topo, schedule, np.arange(5))
    assert found is not None and found.sub.max() + 1 == 10


@settings(max_examples=200, **SETTINGS)
@given(st.integers(1, 8), st.integers(1, 6), st.integers(1, 4), st.integers(1, 4),
       st.integers(0, 2**32 - 1))
def test_the_compiled_equitable_check_agrees_with_the_numpy_one(rows, cols, nx, ny, seed):
    # Random bipartite incidences and random partitions: the two exact checks agree, and
    # a partition into singletons is always equitable.
    pytest.importorskip("numba")
    rng = np.random.default_rng(seed)
    degree = rng.integers(0, 4, size=rows)
    ptr = np.concatenate([[0], np.cumsum(degree)]).astype(np.int64)
    nb = rng.integers(0, cols, size=int(ptr[-1])).astype(np.int64)
    x = rng.integers(0, nx, size=rows).astype(np.int64)
    y = rng.integers(0, ny, size=cols).astype(np.int64)
    x = np.unique(x, return_inverse=True)[1].astype(np.int64)   # dense ids
    y = np.unique(y, return_inverse=True)[1].astype(np.int64)
    k = symmetry._compiled(0, SEARCH)
    expected = symmetry._equitable(x, ptr, nb, y)
    assert k._k_equitable(x, int(x.max()) + 1, ptr, nb, y, int(y.max()) + 1) == expected
    alone = np.arange(rows, dtype=np.int64)
    assert k._k_equitable(alone, rows, ptr, nb, y, int(y.max()) + 1)


def test_the_compiled_relabel_codes_pairs_exactly():
    # Many more distinct pairs than the table starts with (it doubles): equal codes for
    # equal pairs only, numbered by first appearance.
    pytest.importorskip("numba")
    rng = np.random.default_rng(7)
    old = rng.integers(0, 50, size=20_000).astype(np.int64)
    key = rng.integers(0, 300, size=20_000).astype(np.uint64)
    codes, count = symmetry._compiled(0, SEARCH)._k_relabel(old, key)
    pairs = old * 300 + key.astype(np.int64)
    assert count == np.unique(pairs).size
    assert _same_partition(codes, np.unique(pairs, return_inverse=True)[1].astype(np.int64))
    first = np.unique(codes, return_index=True)[1]
    assert (np.diff(first) > 0).all()                 # class c appears before class c + 1


@pytest.mark.parametrize("config", [SEARCH, NUMPY_SEARCH], ids=["compiled", "numpy"])
def test_a_search_of_the_same_graph_and_start_labels_is_kept_and_equals_a_fresh_one(
        config, monkeypatch):
    # A sweep: the same ring all-reduce at two sizes is one graph whose ops' bytes scale
    # alike, so the second search returns the first's classes (kept), and those are the
    # arrays a fresh search finds. One op of another size changes the start labels: that
    # search runs (not kept) and finds the partition its own input has.
    if config is SEARCH:
        pytest.importorskip("numba")
    from netsim.algorithms import build_schedule
    from netsim.algorithms.options import AlgoOptions
    from netsim.engine import default_placement, route_schedule

    topo = torus((4, 4), bandwidth=1e9, latency=1e-7)

    def searched(size, *, fresh, odd=False):
        schedule = build_schedule("allreduce", "ring", 16, size, AlgoOptions(chunks=2))
        if odd:
            nbytes = schedule.nbytes.copy()
            nbytes[np.flatnonzero(schedule.kind == SEND)[5]] *= 3   # one send, 3x its bytes
            schedule = dataclasses.replace(schedule, nbytes=nbytes)
        routes = route_schedule(topo, schedule, default_placement(topo, 16))
        if fresh:
            symmetry.forget_searches()
        before = len(searches)
        found = symmetry.find_classes(schedule, routes, topo.bandwidth, config=config)
        return found, len(searches) - before

    searches = []
    for name in ("_find_compiled", "_find_numpy"):
        original = getattr(symmetry, name)
        monkeypatch.setattr(symmetry, name,
                            lambda *a, original=original: searches.append(1) or original(*a))

    first, ran = searched(1e6, fresh=True)
    assert ran == 1 and first is not None
    kept, ran = searched(4e6, fresh=False)
    assert ran == 0                                       # kept: no search ran
    fresh, ran = searched(4e6, fresh=True)
    assert ran == 1
    for name in ("op", "sub", "link"):
        np.testing.assert_array_equal(getattr(kept, name), getattr(fresh, name))
    getattr(kept, "op")[:] = -1                           # a copy: the kept one unharmed
    again, ran = searched(4e6, fresh=False)
    assert ran == 0 and (again.op == fresh.op).all()
    odd, ran = searched(4e6, fresh=False, odd=True)
    assert ran == 1                                       # other start labels: searched
    odd_fresh, _ = searched(4e6, fresh=True, odd=True)
    assert (odd is None) == (odd_fresh is None)
    # the odd send splits classes (here into more than the search keeps: none found)
    assert odd is None or int(odd.op.max()) > int(fresh.op.max())
    if odd is not None:
        for name in ("op", "sub", "link"):
            np.testing.assert_array_equal(getattr(odd, name), getattr(odd_fresh, name))
    none_again, ran = searched(4e6, fresh=False, odd=True)
    assert ran == 0 and (none_again is None) == (odd is None)     # a search that found
                                                                  # none is kept too


def test_a_sweep_gives_the_same_bits_whether_the_search_was_kept_or_not(monkeypatch):
    # NCCL's model on an 8-GPU NVSwitch box at two sizes of one schedule graph: the second
    # size's search is the first's, kept. Its run equals the same size run after the kept
    # searches are dropped, bit for bit.
    from netsim.run import run_collective

    searches = []
    for name in ("_find_compiled", "_find_numpy"):
        original = getattr(symmetry, name)
        monkeypatch.setattr(symmetry, name,
                            lambda *a, original=original: searches.append(1) or original(*a))
    symmetry.forget_searches()
    run_collective("allreduce", "dgx-h100", "nccl", 2**30)
    assert len(searches) == 1
    kept = run_collective("allreduce", "dgx-h100", "nccl", 2**31).result
    assert len(searches) == 1                          # the same graph: kept, not searched
    symmetry.forget_searches()
    fresh = run_collective("allreduce", "dgx-h100", "nccl", 2**31).result
    assert len(searches) == 2
    assert kept.meta["engine"] == fresh.meta["engine"]
    assert kept.meta["engine"]["symmetry"]["classes"]
    for name in ("op_start", "op_finish", "link_bytes", "link_busy"):
        np.testing.assert_array_equal(getattr(kept, name), getattr(fresh, name))

