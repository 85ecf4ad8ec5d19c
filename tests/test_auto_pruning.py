"""``--algo auto`` skips candidates that cannot win, and picks exactly as if it had not.

* :func:`netsim.algorithms.lower_bound.schedule_bound` never exceeds the engine's makespan:
  random DAGs on random machines (computes, barriers, self and empty sends, overheads per
  op, release floors) and the registry's collectives on meshes, tori, rings, fat-trees;
  and it is the closed form where one is known (a lone send, a chain, a shared link).
* ``run_collective``/``run_sweep`` pick the same algorithm with the same time with and
  without pruning on dgx-h100, galaxy-wh, t3000 and gb200-nvl72, and every pruned
  candidate's bound is at most its simulated time; the command's JSON is the same but
  for the pruned candidates, written ``name>=bound``.
* Placement's ``auto`` resolution picks what simulating every algorithm picks.
* :meth:`Plan.reduce` with repeated ranks writes the ops one call per round would.
"""

from __future__ import annotations

import json
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_helpers import with_extra_nodes
from netsim.algorithms.lower_bound import engine_floor, schedule_bound
from netsim.engine import route_schedule, simulate
from netsim.errors import InputError
from netsim.run import collective
from netsim.run.placed import fabric_topology
from netsim.schedule import ScheduleBuilder
from netsim.topology import parse_topology, ring

from cli_helpers import run_main
from test_invariants import cases as random_cases
from test_invariants import collective_cases

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _assert_below(bound: float, schedule, makespan: float) -> None:
    # the engine merges events within a relative 1e-9: its times may be that much early
    assert engine_floor(bound, schedule) <= makespan + 1e-300, (bound, makespan)


# -- the bound -------------------------------------------------------------------------

@settings(max_examples=120, **SETTINGS)
@given(random_cases(), st.data())
def test_bound_never_exceeds_the_makespan_of_random_dags(case, data):
    topo, schedule, placement, _faults = case
    n = schedule.num_ops
    overhead = data.draw(st.sampled_from(["none", "one", "per op"]))
    overhead = {"none": 0.0, "one": 2e-6,
                "per op": np.random.default_rng(n).uniform(0, 3e-6, n)}[overhead]
    not_before = (np.random.default_rng(n + 1).uniform(0, 1e-5, n)
                  if data.draw(st.booleans()) else None)
    result = simulate(topo, schedule, placement, overhead=overhead, not_before=not_before)
    bound = schedule_bound(topo, schedule, placement, overhead=overhead,
                           not_before=not_before)
    _assert_below(bound, schedule, result.makespan)
    # the same bound from the sends' own routes as from the table of routed pairs
    routes = route_schedule(topo, schedule, np.asarray(placement, dtype=np.int64))
    assert schedule_bound(topo, schedule, placement, overhead=overhead, routes=routes,
                          not_before=not_before) == pytest.approx(bound, rel=1e-12, abs=0)


@settings(max_examples=40, **SETTINGS)
@given(collective_cases(), st.sampled_from([1e3, 1e6, 3e6]), st.sampled_from([0.0, 1e-6]))
def test_bound_never_exceeds_the_makespan_of_collectives(case, size, alpha):
    from netsim.algorithms import build_schedule

    topo, op, algorithm, n, nodes, options, _faults = case
    if algorithm is None:
        return
    schedule = build_schedule(op, algorithm.name, n, size, options)
    placement = with_extra_nodes(nodes, schedule)
    result = simulate(topo, schedule, placement, overhead=alpha)
    _assert_below(schedule_bound(topo, schedule, placement, overhead=alpha), schedule,
                  result.makespan)


def test_bound_is_the_closed_form_of_chains_and_shared_links():
    C, L, B, alpha = 1e9, 1e-6, 3e6, 5e-7
    topo = ring(3, bandwidth=C, latency=L)
    b = ScheduleBuilder(3)
    first = b.send(0, 1, B)
    work = b.compute(1, 2e-6, deps=[first])
    b.send(1, 2, B, deps=[work])
    # critical path: two sends of alpha + L + B/C around a compute
    assert schedule_bound(topo, b.build(), [0, 1, 2], overhead=alpha) == pytest.approx(
        2 * (alpha + L + B / C) + 2e-6, rel=1e-12)
    b = ScheduleBuilder(2)
    for _ in range(4):                       # four independent sends on the same link
        b.send(0, 1, B)
    schedule = b.build()
    bound = schedule_bound(topo, schedule, [0, 1])
    assert bound == pytest.approx(4 * B / C, rel=1e-12)           # the link's load
    assert simulate(topo, schedule, [0, 1]).makespan == pytest.approx(L + bound, rel=1e-9)


# -- auto with and without pruning -----------------------------------------------------

CASES = [("allreduce", "dgx-h100", "4KiB,8MiB,256MiB"),
         ("allreduce", "galaxy-wh", "4KiB,16MiB"),
         ("allgather", "t3000", "1KiB,64MiB"),
         ("allreduce", "gb200-nvl72", "64KiB")]


@pytest.mark.parametrize("op, machine, sizes", CASES)
def test_auto_picks_the_same_with_and_without_pruning(op, machine, sizes):
    topo = parse_topology(machine)
    pruned = collective.run_sweep(op, topo, "auto", sizes)
    full = collective.run_sweep(op, topo, "auto", sizes, prune=False)
    for fast, slow in zip(pruned, full):
        assert (fast.algorithm, fast.time_s) == (slow.algorithm, slow.time_s)
        assert fast.record().keys() == slow.record().keys()
        assert set(fast.candidates) | set(fast.pruned or {}) == set(slow.candidates)
        for name, t in fast.candidates.items():
            assert t == slow.candidates[name]
        for name, bound in (fast.pruned or {}).items():
            assert bound <= slow.candidates[name]      # a true lower bound (engine_floor)
            assert bound >= fast.time_s                 # and it could not win


def _candidates(listed: list[dict]) -> dict[str, tuple[str, float]]:
    """A record's candidates as name -> ('=', time) or ('>=', bound), seconds."""
    return {c["algorithm"]: ("=", c["time_s"]) if "time_s" in c else (">=", c["bound_s"])
            for c in listed}


def test_command_json_is_the_same_but_for_pruned_candidates(capsys, tmp_path):
    argv = ["coll", "allreduce", "--topo", "dgx-h100", "--algo", "auto", "--sizes",
            "16KiB:32MiB:8", "--format", "json"]
    code, out, err = run_main(argv, capsys)
    assert code == 0, err
    original = collective.resolve_request

    def unpruned(*args, **kwargs):
        return original(*args, **{**kwargs, "prune": False})

    with mock.patch.object(collective, "resolve_request", unpruned):
        code, full_out, err = run_main(argv, capsys)
    assert code == 0, err
    pruned_doc, full_doc = json.loads(out), json.loads(full_out)
    assert len(pruned_doc["records"]) == len(full_doc["records"]) == 4
    skipped = 0
    for fast, slow in zip(pruned_doc["records"], full_doc["records"]):
        fast_c, slow_c = _candidates(fast.pop("candidates")), _candidates(slow.pop("candidates"))
        assert fast == slow                     # every other figure as printed
        assert fast_c.keys() == slow_c.keys()
        for name, (sign, value) in fast_c.items():
            assert slow_c[name][0] == "="
            if sign == "=":
                assert value == slow_c[name][1]
            else:                               # a lower bound of the simulated time
                skipped += 1
                assert value <= slow_c[name][1] * (1 + 1e-9)
    assert skipped > 0


# -- placement -------------------------------------------------------------------------

def test_placement_auto_resolution_equals_simulating_every_algorithm():
    from netsim.algorithms import AlgoOptions, algorithms_for
    from netsim.placement import ParallelLayout, bytes_workload, place
    from netsim.placement.workload import phase_schedule
    from netsim.run.placements.evaluate import StepModel

    topo = parse_topology("galaxy-wh")
    model = StepModel(topo, ParallelLayout(tp=8, dp=4),
                      bytes_workload(tp_bytes=2**20, dp_bytes=2**24, algorithm="auto"))
    placement = np.asarray(place("row_major", topo, model.layout), dtype=np.int64)
    chosen = model.resolve(placement)
    for phase in model.workload.phases:
        k = model.layout.degree(phase.dim)
        options = AlgoOptions(chunks=phase.chunks, gamma=model.gamma, topology=topo,
                              placement=placement[:k])
        times = []
        for algo in algorithms_for(phase.op):
            if not algo.applies(k, options):
                continue
            try:
                sched, extra = phase_schedule(phase, topo, model.layout, placement, algo.name,
                                              gamma=model.gamma)
            except InputError:                  # does not apply here
                continue
            full = np.concatenate([placement, np.asarray(extra, dtype=np.int64)])
            times.append(simulate(fabric_topology(topo, sched), sched, full,
                                  overhead=model.overhead).makespan)
            times[-1] = (times[-1], len(times), algo.name)
        assert chosen[phase.name] == min(times)[2]


# -- Plan.reduce with repeated ranks ----------------------------------------------------

def _reduce_by_rounds(plan, ranks, received, nbytes):
    """The reference: one Plan.reduce call per round of distinct ranks."""
    nth = np.zeros(ranks.size, dtype=np.int64)
    seen: dict[int, int] = {}
    for i, r in enumerate(ranks.tolist()):
        nth[i] = seen.get(r, 0)
        seen[r] = nth[i] + 1
    ids = np.empty(ranks.size, dtype=np.int64)
    for j in range(int(nth.max()) + 1):
        rows = np.flatnonzero(nth == j)
        ids[rows] = plan.reduce(ranks[rows], received[rows], nbytes[rows])
    return ids


@settings(max_examples=60, **SETTINGS)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=14), st.integers(0, 2**31),
       st.sampled_from([0, 64]))
def test_reduce_with_repeated_ranks_writes_the_ops_of_one_call_per_round(ranks, seed, few):
    from netsim.algorithms import plan as plan_module

    with mock.patch.object(plan_module, "_FEW", few):     # numpy rounds, Python rounds
        _check_reduce_rounds(ranks, seed)


def _check_reduce_rounds(ranks, seed):
    from netsim.algorithms import AlgoOptions
    from netsim.algorithms.plan import Plan

    ranks = np.asarray(ranks, dtype=np.int64)
    rng = np.random.default_rng(seed)
    nbytes = rng.uniform(1, 1e6, ranks.size)
    built = []
    for reference in (False, True):
        plan = Plan("allreduce", 5, 1e6, 5, AlgoOptions(gamma=3e9, extra={"annotate": False}))
        first = plan.reduce(np.arange(5), np.full(5, -1), np.full(5, 10.0))  # earlier work
        sent = plan.sends(np.zeros(ranks.size, dtype=np.int64), ranks, nbytes=1.0,
                          deps=first[ranks])
        ids = (_reduce_by_rounds(plan, ranks, sent, nbytes) if reference
               else plan.reduce(ranks, sent, nbytes))
        after = plan.reduce(np.arange(5), np.full(5, -1), np.full(5, 1.0))   # chains on
        s = plan.build()
        built.append((ids, after, [getattr(s, k).tolist() for k in
                                   ("kind", "src", "dst", "nbytes", "seconds", "dep_ptr",
                                    "dep_idx")]))
    assert built[0][0].tolist() == built[1][0].tolist()
    assert built[0][1].tolist() == built[1][1].tolist()
    assert built[0][2] == built[1][2]


def test_compiled_longest_path_equals_the_numpy_blocks():
    pytest.importorskip("numba")
    from netsim.algorithms import AlgoOptions, build_schedule
    from netsim.algorithms import lower_bound

    topo = parse_topology("dgx-h100")
    nodes = topo.first_endpoints(8)
    schedule = build_schedule("allreduce", "innetwork", 8, 2**26,
                              AlgoOptions(topology=topo, placement=nodes, gamma=1e11))
    assert schedule.num_ops > 2048
    placement = np.concatenate([nodes, np.asarray(schedule.extra_nodes, dtype=np.int64)])
    bounds = []
    for compiled in (True, False):
        with mock.patch.object(lower_bound, "COMPILED", compiled):
            bounds.append(schedule_bound(topo, schedule, placement, overhead=1e-6))
    assert bounds[0] == bounds[1]


@pytest.mark.parametrize("name", ["oneshot", "ring", "direct", "dbtree", "halving_doubling",
                                  "tt_ring"])
def test_compiled_longest_path_equals_the_numpy_blocks_on_small_schedules(name):
    pytest.importorskip("numba")
    from netsim.algorithms import AlgoOptions, build_schedule
    from netsim.algorithms import lower_bound

    topo = parse_topology("dgx-h100")
    nodes = topo.first_endpoints(8)
    schedule = build_schedule("allreduce", name, 8, 3e6,
                              AlgoOptions(topology=topo, placement=nodes, gamma=1e11))
    assert lower_bound.COMPILED_FROM < schedule.num_ops <= 2048
    bounds = []
    for compiled in (True, False):
        with mock.patch.object(lower_bound, "COMPILED", compiled):
            bounds.append(schedule_bound(topo, schedule, nodes, overhead=1e-6))
    assert bounds[0] == bounds[1]


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("spec", ["fattree:k=4", "dgx-h100-cluster"])
def test_a_table_of_many_pairs_bounds_a_schedule_of_few_as_its_own_routes_do(spec, dense,
                                                                             monkeypatch):
    """The pair table of a machine holds every pair bounded so far; a ring's bound then
    reads a few of its rows (the sparse product over used rows), a direct all-to-all's
    all of them: both as from their own routes, whether the rows are looked up in a table
    of every key (``dense``) or by a binary search of the held keys."""
    from netsim.algorithms import AlgoOptions, build_schedule
    from netsim.topology import parse_topology

    from netsim.algorithms import lower_bound

    monkeypatch.setattr(lower_bound, "DENSE_NODES", 2048 if dense else 0)

    topo = parse_topology(spec)
    nodes = np.asarray(topo.endpoints, dtype=np.int64)
    n = nodes.size
    options = AlgoOptions(topology=topo, placement=nodes)
    everyone = build_schedule("alltoall", "direct", n, 1e6, options)
    ring = build_schedule("allreduce", "ring", n, 3e6, options)
    from netsim.algorithms.lower_bound import _PairTerms, _subflows, link_load
    from netsim.routing import default_router

    table = _PairTerms.of(topo, default_router(topo))
    for schedule in (everyone, ring, everyone):
        bound = schedule_bound(topo, schedule, nodes, overhead=1e-6)
        routes = route_schedule(topo, schedule, nodes)
        assert bound == pytest.approx(schedule_bound(topo, schedule, nodes, overhead=1e-6,
                                                     routes=routes), rel=1e-12, abs=0)
        own = link_load(topo, routes, _subflows(topo, schedule, routes)[0])
        assert table.terms(topo, schedule, nodes)[1] == pytest.approx(own, rel=1e-12)
        assert own > 0
