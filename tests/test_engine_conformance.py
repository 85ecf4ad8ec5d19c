"""Every path of the engine gives the reference's answer.

The reference (``EngineConfig(loop="reference")``) runs the numpy loop, solves the max-min
rates cold over every draining flow at every event and simulates every flow (no symmetry
classes). Each other path is forced by its own :class:`EngineConfig` and run on the same
random cases:

* machines: symmetric (rings, meshes with parallel links, tori, a fat-tree) and asymmetric
  (random connected graphs with links of 1-10 GB/s and 0-1 us);
* schedules: random DAGs (dependencies, computes, barriers, empty and self sends, release
  floors), collectives built by the algorithms (dependency chains that symmetry shrinks),
  and flows between random pairs with Poisson arrivals and log-normal or Pareto sizes;
* per-op overheads and link faults (failures and slow-downs, at time 0 and later: the
  compiled loop stops before each fault, the numpy loop applies it, reroutes and hands
  back).

Per-op release, start and finish times must agree with the reference within 1e-12
relative, plus the engine's merge window: completions within 1e-9 of an event's time join
it (``executor._REL_TOL``), so a path whose rounding puts a completion on the other side
of that window may move it, and through the ops it releases their times, by up to 1e-9
relative to the makespan. Link bytes agree within 1e-12 relative, peak flow counts and
the number of events exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_helpers import placed_ranks, random_graph
from netsim.algorithms import build_schedule
from netsim.algorithms.options import AlgoOptions
from netsim.engine import EngineConfig, Fault, execute, route_schedule
from netsim.schedule import SEND, ScheduleBuilder, sends_from_arrays
from netsim.topology import fat_tree, mesh, ring, torus

REFERENCE = EngineConfig(loop="reference")
#: One configuration per path; symmetry searched at every size where the path allows it.
PATHS = {
    "auto": EngineConfig(),
    # the warm start at every solve, however few flows drain
    "numpy": EngineConfig(loop="numpy", symmetry_min_subflows=0, warm_min_incidences=0),
    "numpy-cold-numpy-search": EngineConfig(loop="numpy", warm=False, symmetry_min_subflows=0,
                                            symmetry_compiled_from=None),
    "kernel": EngineConfig(loop="kernel", symmetry_min_subflows=0, symmetry_compiled_from=0),
    "kernel-by-link": EngineConfig(loop="kernel", link_scan_factor=1e18, symmetry=False),
    "kernel-by-pass": EngineConfig(loop="kernel", link_scan_factor=0.0, symmetry=False),
    "classes": EngineConfig(loop="classes", symmetry=False),
    "classes-symmetry": EngineConfig(loop="classes", symmetry_min_subflows=0),
    "hand-over": EngineConfig(numpy_work=20, event_work=1, incremental_min_subflows=0,
                              symmetry=False),
}
COMPILED = {"kernel", "kernel-by-link", "kernel-by-pass", "classes", "classes-symmetry",
            "hand-over"}
MERGE_WINDOW = 1e-9
SETTINGS = dict(deadline=None, max_examples=80,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -- machines ---------------------------------------------------------------------------

symmetric_machines = st.one_of(
    st.builds(lambda n, lat: ring(n, bandwidth=1e9, latency=lat), st.integers(3, 8),
              st.sampled_from([0.0, 1e-7])),
    st.builds(lambda d, links: mesh(d, bandwidth=1e9, latency=1e-7, links=links),
              st.sampled_from([(2, 3), (3, 3), (2, 4)]), st.sampled_from([1, 2])),
    st.builds(lambda d, lat: torus(d, bandwidth=2e9, latency=lat),
              st.sampled_from([(3, 3), (2, 4), (4, 4)]), st.sampled_from([0.0, 1e-6])),
    st.just(fat_tree(4, bandwidth=1e9, latency=1e-7)),
)
machines = st.one_of(symmetric_machines, random_graph((3, 8), [1e9, 2.5e9, 4e9, 1e10]))


# -- schedules --------------------------------------------------------------------------

def _sizes(rng, kind: str, n: int) -> np.ndarray:
    """``n`` message sizes (B): equal, log-normal around 100 kB, or Pareto (shape 1.5,
    from 10 kB: heavy-tailed)."""
    if kind == "equal":
        return np.full(n, 1e5)
    if kind == "lognormal":
        return np.rint(rng.lognormal(np.log(1e5), 1.0, n))
    return np.rint(1e4 * (1.0 + rng.pareto(1.5, n)))


@st.composite
def random_dags(draw, ranks: int):
    """Up to 24 ops, each depending on up to 3 earlier ones; sends (some empty, some to
    self), computes and barriers."""
    b = ScheduleBuilder(ranks)
    for op in range(draw(st.integers(1, 24))):
        deps = draw(st.lists(st.integers(0, op - 1), max_size=3, unique=True)) if op else []
        kind = draw(st.sampled_from(["send"] * 6 + ["compute", "barrier"]))
        if kind == "send":
            b.send(draw(st.integers(0, ranks - 1)), draw(st.integers(0, ranks - 1)),
                   draw(st.sampled_from([0.0, 1e3, 1e5, 3e5, 1e6])), deps)
        elif kind == "compute":
            b.compute(draw(st.integers(0, ranks - 1)), draw(st.sampled_from([0.0, 1e-6, 1e-4])),
                      deps)
        else:
            b.barrier(deps)
    return b.build()


@st.composite
def poisson_flows(draw, ranks: int):
    """Flows between random pairs, arriving as a Poisson process (not_before), sizes
    equal, log-normal or Pareto; returns (schedule, not_before)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(2, 60))
    src = rng.integers(0, ranks, n)
    dst = (src + rng.integers(1, ranks, n)) % ranks
    nbytes = _sizes(rng, draw(st.sampled_from(["equal", "lognormal", "pareto"])), n)
    mean_gap = draw(st.sampled_from([1e-6, 2e-5]))       # 1 flow per us: many at once
    return sends_from_arrays(ranks, src, dst, nbytes), np.cumsum(rng.exponential(mean_gap, n))


@st.composite
def collectives(draw, ranks: int):
    op, algo = draw(st.sampled_from([("allreduce", "ring"), ("allgather", "ring"),
                                     ("alltoall", "direct"), ("reducescatter", "ring")]))
    return build_schedule(op, algo, ranks, draw(st.sampled_from([1e4, 1e6])),
                          AlgoOptions(chunks=draw(st.integers(1, 2))))


@st.composite
def faults(draw, topo):
    """Up to 2 faults: slow-downs, and failures of links whose loss keeps the machine
    strongly connected (flows are rerouted around them)."""
    import networkx as nx

    out, failed = [], set()
    for _ in range(draw(st.integers(1, 2))):
        link = draw(st.integers(0, topo.num_links - 1))
        time = draw(st.sampled_from([0.0, 1e-6, 5e-5, 2e-4]))
        graph = nx.DiGraph()
        graph.add_nodes_from(range(topo.num_nodes))
        graph.add_edges_from((int(topo.link_src[k]), int(topo.link_dst[k]))
                             for k in range(topo.num_links) if k not in failed | {link})
        if draw(st.booleans()) and nx.is_strongly_connected(graph):
            failed.add(link)
            out.append(Fault((link,), time, 0.0))
        else:
            out.append(Fault((link,), time, draw(st.sampled_from([0.25, 0.5, 0.9]))))
    return out


@st.composite
def cases(draw):
    topo, placement = placed_ranks(draw, machines, 2, 9)
    ranks = placement.size
    kind = draw(st.sampled_from(["dag", "flows", "collective"]))
    not_before = None
    if kind == "dag":
        schedule = draw(random_dags(ranks))
        if draw(st.booleans()):
            not_before = np.where(np.arange(schedule.num_ops) % 3 == 0,
                                  draw(st.sampled_from([1e-6, 1e-4])), 0.0)
    elif kind == "flows":
        schedule, not_before = draw(poisson_flows(ranks))
    else:
        schedule = draw(collectives(ranks))
        placement = np.asarray(topo.endpoints[:ranks])  # in order: symmetry to find
    overhead = draw(st.sampled_from([0.0, 1e-6, "per op"]))
    if overhead == "per op":
        overhead = np.where(np.arange(schedule.num_ops) % 2 == 0, 1e-6, 3e-6)
    chosen = draw(faults(topo)) if draw(st.integers(0, 3)) == 0 else []
    return topo, schedule, placement, not_before, overhead, chosen


# -- the check --------------------------------------------------------------------------

def _run(case, config):
    topo, schedule, placement, not_before, overhead, chosen = case
    routes = route_schedule(topo, schedule, placement)
    return execute(topo, schedule, routes, not_before=not_before, overhead=overhead,
                   faults=chosen, config=config)


def assert_conforms(case, config):
    ref = _run(case, REFERENCE)
    got = _run(case, config)
    scale = max(float(ref.makespan), 1e-30)
    for name in ("op_release", "op_start", "op_finish"):
        np.testing.assert_allclose(getattr(got, name), getattr(ref, name), rtol=1e-12,
                                   atol=MERGE_WINDOW * scale, err_msg=name)
    np.testing.assert_allclose(got.link_bytes, ref.link_bytes, rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(got.link_peak_flows, ref.link_peak_flows)
    assert got.events == ref.events
    return got


@pytest.mark.parametrize("path", list(PATHS))
@settings(**SETTINGS)
@given(case=cases())
def test_every_path_gives_the_reference_answer(path, case):
    if path in COMPILED:
        pytest.importorskip("numba")
    got = assert_conforms(case, PATHS[path])
    engine = got.meta["engine"]
    if not (case[1].kind == SEND).any():          # nothing to drain: no loop is needed
        pass
    elif path in COMPILED - {"hand-over"}:
        assert engine["loop"] == PATHS[path].loop


@pytest.mark.parametrize("path", ["auto", "kernel", "classes"])
@pytest.mark.parametrize("shape,latency", [((3, 4), 1e-6), ((4, 4), 0.0)])
def test_imbalanced_alltoalls_give_the_reference_answer(path, shape, latency):
    """Log-normal all-to-alls: nearly every event ends one flow and changes a few rates,
    the classes loop's own case (classes split, rise, freeze, merge)."""
    if path != "auto":
        pytest.importorskip("numba")
    n = shape[0] * shape[1]
    src, dst = np.divmod(np.arange(n * n), n)
    src, dst = src[src != dst], dst[src != dst]
    nbytes = _sizes(np.random.default_rng(7), "lognormal", src.size)
    topo = mesh(shape, bandwidth=1e9, latency=latency)
    case = (topo, sends_from_arrays(n, src, dst, nbytes), np.asarray(topo.endpoints),
            None, 0.0, [])
    assert_conforms(case, PATHS[path])


@pytest.mark.parametrize("path", ["kernel", "hand-over", "auto"])
@settings(**{**SETTINGS, "max_examples": 40})
@given(case=cases())
def test_a_timeline_recorded_by_the_compiled_loop_is_the_references(path, case):
    """A recorded timeline runs on engine.kernel's compiled loop (it keeps every flow's
    rate): the same intervals, the same links in each, loads within 1e-12 relative."""
    if path != "auto":
        pytest.importorskip("numba")
    topo, schedule, placement, not_before, overhead, chosen = case
    routes = route_schedule(topo, schedule, placement)

    def run(config):
        return execute(topo, schedule, routes, not_before=not_before, overhead=overhead,
                       faults=chosen, config=config, record_timeline=True)

    ref, got = run(REFERENCE), run(PATHS[path])
    assert len(got.timeline) == len(ref.timeline)
    for (t0, t1, links, load), (r0, r1, r_links, r_load) in zip(got.timeline, ref.timeline):
        assert (t0, t1) == pytest.approx((r0, r1), rel=1e-12, abs=MERGE_WINDOW * ref.makespan)
        np.testing.assert_array_equal(links, r_links)
        np.testing.assert_allclose(load, r_load, rtol=1e-12)
    if path == "kernel" and (schedule.kind == SEND).any() and got.events > 1:
        assert got.meta["engine"]["loop"] == "kernel"
