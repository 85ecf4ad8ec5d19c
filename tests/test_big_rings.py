"""Big rings: the array build path, routing by distinct pair, the memory gate.

No big run here: the array paths are compared with the loops they replace on small cases,
op by op, and the refusals are checked on their estimates (benchmarks/bench_big_rings.py
measures the big cases).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import netsim.routing as routing
from netsim.algorithms import AlgoOptions, build_schedule, rings
from netsim.budget import (BYTES_PER_INCIDENCE, BYTES_PER_SEND, require_sends, send_memory,
                           set_max_memory)
from netsim.cli import main
from netsim.errors import ResourceError
from netsim.routing import DimensionOrderRouter, UpDownRouter, route
from netsim.run.collective import run_collective
from netsim.topology import parse_topology, torus

_FIELDS = ("kind", "src", "dst", "nbytes", "seconds", "dep_ptr", "dep_idx", "tag")


def _both(monkeypatch, *args):
    """The schedule built by the bulk path and by the step loop."""
    monkeypatch.setattr(rings, "BULK", True)
    bulk = build_schedule(*args)
    monkeypatch.setattr(rings, "BULK", False)
    loop = build_schedule(*args)
    return bulk, loop


def _assert_same(a, b):
    for name in _FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert a.tags == b.tags and a.num_ranks == b.num_ranks


@pytest.mark.parametrize("op,algo", list(itertools.product(
    ["allreduce", "allgather", "reducescatter"], ["ring", "bidir_ring"])))
def test_the_bulk_ring_is_the_step_loop_op_by_op(monkeypatch, op, algo):
    for n, chunks in itertools.product([2, 3, 5, 8], [1, 3]):
        options = AlgoOptions(chunks=chunks, extra={"annotate": False})
        bulk, loop = _both(monkeypatch, op, algo, n, 1e6, options)
        _assert_same(bulk, loop)
        # and it is a ring: each send goes to the next position, every step but the first
        # waits for exactly two earlier ops
        assert bulk.num_sends == (2 if op == "allreduce" else 1) * (n - 1) * n * chunks * \
            (2 if algo == "bidir_ring" else 1)
        assert (bulk.dep_idx < np.repeat(np.arange(bulk.num_ops), np.diff(bulk.dep_ptr))).all()


@pytest.mark.parametrize("algo,extra", [
    ("dimensionwise", {"topology": torus((4, 6))}),
    ("hierarchical", {"groups": tuple(tuple(range(g * 4, g * 4 + 4)) for g in range(6))}),
])
def test_rings_inside_other_algorithms_are_unchanged(monkeypatch, algo, extra):
    # their rings wait for earlier phases (``ready`` with several columns)
    for chunks in (1, 2):
        options = AlgoOptions(chunks=chunks, extra={"annotate": False}, **extra)
        _assert_same(*_both(monkeypatch, "allreduce", algo, 24, 1e6, options))


def test_reductions_and_annotations_keep_the_step_loop(monkeypatch):
    # gamma adds compute ops between steps, annotation tracks pieces: the loop builds those
    for options in (AlgoOptions(gamma=1e10, extra={"annotate": False}), AlgoOptions()):
        _assert_same(*_both(monkeypatch, "allreduce", "ring", 6, 1e6, options))


def _routes_equal(a, b):
    for name in ("src", "dst", "sub_ptr", "sub_req", "sub_frac", "path_ptr", "path_links",
                 "sub_latency"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.parametrize("spec,router", [("torus:6x6", None), ("mesh:5x7", None),
                                         ("fat_tree:4", UpDownRouter(ecmp="spray")),
                                         ("mesh:3x3,links=2", None)])
def test_routing_each_distinct_pair_once_gives_the_same_routes(monkeypatch, spec, router):
    topo = parse_topology(spec)
    rng = np.random.default_rng(3)
    pairs = rng.choice(topo.endpoints, size=(40, 2))     # some with src == dst
    pick = rng.integers(0, 40, 5000)
    src, dst = pairs[pick, 0], pairs[pick, 1]
    moving = src != dst
    neighbours = topo.link_src[pick % topo.num_links], topo.link_dst[pick % topo.num_links]
    # with requests that stay on their node; every request moving; one link each
    for s, d in ((src, dst), (src[moving], dst[moving]), neighbours):
        monkeypatch.setattr(routing, "PAIR_DEDUPE_FROM", 1)
        once = route(topo, s, d, router=router)
        monkeypatch.setattr(routing, "PAIR_DEDUPE_FROM", 10**12)
        _routes_equal(once, route(topo, s, d, router=router))


def test_routers_say_when_a_path_depends_on_the_pair_alone():
    assert DimensionOrderRouter().pair_only and UpDownRouter(ecmp="spray").pair_only
    assert not DimensionOrderRouter(planes="hash").pair_only
    assert not UpDownRouter(ecmp="hash").pair_only


@pytest.mark.parametrize("num_nodes", [50, 10**6])       # dense marks; unique + search
def test_distinct_pairs_index_back_to_every_request(num_nodes):
    rng = np.random.default_rng(5)
    src = rng.integers(0, num_nodes, 20000)
    dst = rng.integers(0, num_nodes, 20000)
    src[::2], dst[::2] = src[1::2], dst[1::2]           # plenty of repeats
    u_src, u_dst, inverse = routing._distinct_pairs(src, dst, num_nodes)
    assert np.array_equal(u_src[inverse], src) and np.array_equal(u_dst[inverse], dst)
    keys = u_src * num_nodes + u_dst
    assert (np.diff(keys) > 0).all()                   # distinct, sorted
    assert keys.size == np.unique(src * num_nodes + dst).size


def test_a_ring_that_does_not_fit_fails_at_once_with_the_estimate():
    # timed reductions (gamma): no block form (tests/test_engine_blocks.py), the full build
    set_max_memory(2**30)
    try:
        with pytest.raises(ResourceError) as err:
            run_collective("allreduce", "torus:128x128", "ring", "1GiB",
                           options=AlgoOptions(gamma=1e12))
    finally:
        set_max_memory(None)
    message = str(err.value)
    sends = 2 * 16383 * 16384
    assert "\n" not in message and f"{sends:.3g} sends" in message
    assert "16384 ranks" in message and "1 GiB --max-memory" in message
    assert "fewer ranks," in message and "--max-memory SIZE" in message   # 1 chunk: no fewer
    # the estimate is one link per send at the measured cost
    need = float(message.split("would need about ")[1].split(" GiB")[0]) * 2**30
    assert need == pytest.approx(send_memory(sends, 1), rel=5e-3)


def test_the_estimate_scales_with_sends_and_links():
    assert send_memory(10, 0) == 10 * BYTES_PER_SEND
    assert send_memory(10, 3) - send_memory(10, 2) == 10 * BYTES_PER_INCIDENCE
    topo = parse_topology("torus:4x4")
    set_max_memory(int(send_memory(1e6, 1)))
    try:
        with pytest.raises(ResourceError, match="fewer ranks"):
            require_sends(1e6, topo, "x", hops=2, advice="fewer ranks")
        require_sends(1e6, topo, "x", hops=1)
        with pytest.raises(ResourceError):               # asked only when it matters
            require_sends(1e6, topo, "x", hops=lambda: 1.5)
        require_sends(10, topo, "x", hops=lambda: 1 / 0)
    finally:
        set_max_memory(None)


def test_the_cli_refuses_in_one_line_and_exits_2(capsys):
    try:
        with pytest.raises(SystemExit) as done:
            main(["--max-memory", "16MiB", "coll", "allreduce", "--topo", "torus:32x32",
                  "--algo", "direct"])
    finally:
        set_max_memory(None)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "would need about" in err and "16 MiB --max-memory" in err


def test_saving_per_op_times_that_cannot_fit_is_refused_in_one_line(capsys, tmp_path):
    # a 16,384-rank ring runs on its steps under 1 GiB, but --save-result needs its
    # 536,838,144 per-op times: one line, exit 2, no file
    out = tmp_path / "result.json"
    try:
        with pytest.raises(SystemExit) as done:
            main(["--max-memory", "1GiB", "coll", "allreduce", "--topo", "torus:128x128",
                  "--algo", "ring", "--size", "1GiB", "--save-result", str(out)])
    finally:
        set_max_memory(None)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "536,838,144 ops" in err and "1 GiB --max-memory" in err
    assert not out.exists()


def test_after_the_build_the_schedule_s_own_sends_and_links_are_counted():
    # The check before the build counts a ring's sends at one link each; the direct
    # all-reduce sends as many, but across the mesh (~10.7 links on 16x16), so it is
    # refused once built, before the engine; the ring itself (one link each) runs.
    ring_sends = 2 * 256 * 255
    set_max_memory(int(send_memory(ring_sends, 4)))
    try:
        assert run_collective("allreduce", "mesh:16x16", "ring", "1MiB").flows == ring_sends
        with pytest.raises(ResourceError, match="allreduce direct on 256 ranks"):
            run_collective("allreduce", "mesh:16x16", "direct", "1MiB")
    finally:
        set_max_memory(None)


def test_the_cli_s_memory_budget_ends_with_its_invocation(capsys):
    """A tiny --max-memory refuses that command only: the Python API called next in the
    same process has the machine's budget again."""
    with pytest.raises(SystemExit):
        main(["--max-memory", "1KiB", "coll", "allreduce", "--topo", "torus:32x32",
              "--algo", "ring"])
    assert run_collective("allreduce", "torus:4x4", "ring", "1MiB").time_s > 0


@pytest.mark.parametrize("algo", ["direct", "ring", "dbtree"])
def test_mean_links_from_a_sample_is_close_to_the_exact_mean(monkeypatch, algo):
    """Above MEAN_LINKS_SAMPLE sends the memory check's links per send come from a seeded
    sample: within 5% of the mean over every send (torus 8x8, every distinct pair
    routed)."""
    import netsim.run.checks as checks
    from netsim.routing import default_router

    topo = parse_topology("torus:8x8")
    schedule = build_schedule("allreduce", algo, 64, 2**20, AlgoOptions(chunks=4))
    placement = np.arange(64)
    router = default_router(topo)
    monkeypatch.setattr(checks, "MEAN_LINKS_SAMPLE", 10**9)
    exact = checks._mean_links(schedule, topo, placement, router)
    monkeypatch.setattr(checks, "MEAN_LINKS_SAMPLE", 512)
    assert schedule.num_sends > 512
    sampled = checks._mean_links(schedule, topo, placement, router)
    assert exact >= 1.0 and abs(sampled - exact) <= 0.05 * exact


def test_an_all_pairs_algorithm_that_cannot_fit_is_refused_before_it_is_built(monkeypatch):
    """direct's sends cross the mean distance, not a ring's one link: with a budget between
    the two estimates, --algo direct is refused before its builder runs, and auto picks
    among the rest without building it."""
    import netsim.algorithms.allreduce as allreduce
    from netsim.budget import _mean_hops

    topo = torus((16, 16))
    sends = 2 * 256 * 255
    low, high = send_memory(sends, 1), send_memory(sends, _mean_hops(topo))
    assert high > 1.4 * low
    built = []
    monkeypatch.setattr(allreduce, "direct_reduce_scatter",
                        lambda *a, **k: built.append(1) or pytest.fail("direct was built"))
    set_max_memory(int((low + high) / 2))
    try:
        with pytest.raises(ResourceError) as err:
            run_collective("allreduce", topo, "direct", 2**20)
        picked = run_collective("allreduce", topo, "auto", 2**20)
    finally:
        set_max_memory(None)
    message = str(err.value)
    assert "allreduce direct on 256 ranks" in message and f"{sends:.3g} sends" in message
    assert "\n" not in message and "fewer ranks," in message and not built
    assert picked.algorithm != "direct" and "direct" not in picked.candidates
    assert "direct" not in (picked.pruned or {}) and picked.time_s > 0
