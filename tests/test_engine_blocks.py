"""Block schedules (netsim.schedule.blocks) and their runs on one send per block
(netsim.engine.blocks): the same schedule as the rings' full build, op for op, and the same
result as the engine on that full build, member by member, or no block run at all."""

from __future__ import annotations

import itertools
import pickle
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsim.algorithms.options import AlgoOptions
from netsim.algorithms.registry import get_algorithm
from netsim.algorithms.rings import bidir_ring_schedule, ring_blocks, ring_schedule
from netsim.budget import set_max_memory
from netsim.engine import EngineConfig, simulate
from netsim.engine.blocks import simulate_blocks
from netsim.errors import ResourceError, ScheduleError
from netsim.run import run_collective
from netsim.schedule import BlockSchedule
from netsim.topology import parse_topology, ring

PHASES = {"allreduce": (True, True), "reducescatter": (True, False),
          "allgather": (False, True)}


def _blocks(op, n, options, bidirectional):
    rs, ag = PHASES[op]
    return ring_blocks(op, n, 6e6, options, reduce_scatter=rs, all_gather=ag,
                       bidirectional=bidirectional)


@pytest.mark.parametrize("op,n,chunks,bidirectional",
                         list(itertools.product(PHASES, [3, 4, 7], [1, 3], [False, True])))
def test_expanded_blocks_are_the_rings_schedule_op_for_op(op, n, chunks, bidirectional):
    options = AlgoOptions(chunks=chunks, extra={"annotate": False})
    rs, ag = PHASES[op]
    build = bidir_ring_schedule if bidirectional else ring_schedule
    full = build(op, n, 6e6, options, reduce_scatter=rs, all_gather=ag)
    expanded = _blocks(op, n, options, bidirectional).expand()
    for name in ("kind", "src", "dst", "nbytes", "seconds", "dep_ptr", "dep_idx", "tag"):
        assert np.array_equal(getattr(expanded, name), getattr(full, name)), name
    assert (expanded.tags, expanded.meta, expanded.num_ranks) == \
        (full.tags, full.meta, full.num_ranks)


def test_no_block_form_with_timed_reductions_annotations_or_a_single_step():
    assert _blocks("allreduce", 4, AlgoOptions(chunks=1, gamma=1e9,
                                               extra={"annotate": False}), False) is None
    assert _blocks("allreduce", 4, AlgoOptions(chunks=1, extra={"annotate": True}),
                   False) is None
    assert _blocks("allgather", 2, AlgoOptions(chunks=1, extra={"annotate": False}),
                   False) is None


def _same_run(topo, blocks, nodes, overhead):
    """The block run, checked member by member against the reference engine (no symmetry
    classes, no compiled loop, the reference max-min solver) on the full schedule."""
    fast = simulate_blocks(topo, blocks, nodes, overhead=overhead)
    full = simulate(topo, blocks.expand(), nodes, overhead=overhead,
                    config=EngineConfig(loop="reference"))
    if fast is None:
        return None
    scale = full.makespan
    for name in ("op_release", "op_start", "op_finish"):
        np.testing.assert_allclose(getattr(fast, name), getattr(full, name), rtol=0,
                                   atol=1e-12 * scale, err_msg=name)
    np.testing.assert_allclose(fast.link_bytes, full.link_bytes, rtol=1e-12)
    np.testing.assert_allclose(fast.link_busy, full.link_busy, rtol=0, atol=1e-12 * scale)
    assert np.array_equal(fast.link_peak_flows, full.link_peak_flows)
    assert (fast.events, fast.num_flows) == (full.events, full.num_flows)
    assert fast.meta["symmetry_classes"]["ops"] == blocks.blocks
    return fast


TOPOLOGIES = ["ring:6", "torus:4x4", "mesh:2x4", "mesh:3x3", "dgx-h100", "t3000",
              "torus:2x3x2", "fattree:4"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=st.sampled_from(TOPOLOGIES), op=st.sampled_from(list(PHASES)),
       chunks=st.integers(1, 3), bidirectional=st.booleans(),
       overhead=st.sampled_from([0.0, 1e-6, 3.3e-5]), seed=st.integers(0, 2**16),
       shuffle=st.booleans(), order=st.sampled_from(["auto", "natural"]))
def test_a_block_run_is_the_full_run_or_none(spec, op, chunks, bidirectional, overhead,
                                              seed, shuffle, order):
    """Random rings (the default embedding or a random rank order, which lays hops over
    paths of different lengths) on symmetric and asymmetric machines: whenever the block
    run answers, every op's times and every link's load equal the full run's."""
    topo = parse_topology(spec)
    nodes = topo.first_endpoints(min(len(topo.endpoints), 8))
    if shuffle:
        nodes = np.random.default_rng(seed).permutation(nodes)
    options = AlgoOptions(chunks=chunks, topology=topo, placement=nodes, order=order,
                          extra={"annotate": False})
    blocks = _blocks(op, nodes.size, options, bidirectional)
    _same_run(topo, blocks, nodes, overhead)


def test_rings_on_their_machines_ring_run_as_blocks():
    for spec, n in [("torus:4x4", 16), ("dgx-h100", 8), ("mesh:2x4", 8)]:
        topo = parse_topology(spec)
        nodes = topo.first_endpoints(n)
        options = AlgoOptions(chunks=2, topology=topo, placement=nodes,
                              extra={"annotate": False})
        assert _same_run(topo, _blocks("allreduce", n, options, True), nodes, 1e-6) \
            is not None, spec


def test_hops_of_unequal_length_or_capacity_are_not_one_class():
    # natural order on a 3x3 mesh: hop 2 -> 3 crosses 3 links, the others 1
    topo = parse_topology("mesh:3x3")
    nodes = topo.first_endpoints(9)
    options = AlgoOptions(chunks=1, topology=topo, placement=nodes, order="natural",
                          extra={"annotate": False})
    blocks = _blocks("allreduce", 9, options, False)
    assert simulate_blocks(topo, blocks, nodes) is None
    # one slow link on a ring: its hop cannot be told apart no more
    ring = parse_topology("ring:6")
    slow = replace(ring, bandwidth=np.where(np.arange(ring.num_links) == 0,
                                            ring.bandwidth / 2, ring.bandwidth))
    options = AlgoOptions(chunks=1, topology=slow, extra={"annotate": False})
    assert simulate_blocks(slow, _blocks("allreduce", 6, options, False),
                           slow.first_endpoints(6)) is None


@pytest.mark.parametrize("spec,op,order", [("torus:4x4", "allreduce", "auto"),
                                           ("mesh:3x3", "allgather", "natural"),
                                           ("t3000", "reducescatter", "auto")])
def test_collective_runs_give_the_full_builds_numbers(spec, op, order):
    """run_collective with and without the block form: the same record, to the last bit
    of the time (the natural-order mesh falls back to the full build)."""
    algo = get_algorithm(op, "bidir_ring")
    options = AlgoOptions(order=order)
    fast = run_collective(op, spec, algo, "64MiB", options=options)
    full = run_collective(op, spec, replace(algo, blocks=None), "64MiB", options=options)
    # the same numbers; the engine's record says how each was reduced
    engines = fast.record().pop("engine"), full.record().pop("engine")
    assert {**fast.record(), "engine": None} == {**full.record(), "engine": None}
    assert "blocks" in engines[0]["symmetry"] or engines[0] == engines[1]
    assert np.array_equal(fast.result.link_bytes, full.result.link_bytes) or \
        np.allclose(fast.result.link_bytes, full.result.link_bytes, rtol=1e-12)


def test_a_block_run_keeps_its_per_op_times_per_block_until_they_are_read():
    # 16,384 ranks, 536,838,144 sends: the run needs memory per block (about 200 MB in
    # all), the per-op arrays 4.3 GB each, so under 1 GiB the run and its makespan and
    # links are there, and reading a per-op array is refused in one line
    set_max_memory(2**30)
    try:
        run = run_collective("allreduce", "torus:128x128", "ring", "1GiB")
        result = run.result
        assert result.meta["blocks"] == {"blocks": 32766, "sends_per_block": 16384}
        # nccl-tests' bus bandwidth of a ring, 2 (n-1)/n x size / time, is the bandwidth
        # of the one 50 GB/s link each rank sends on
        assert run.busbw_GBps == pytest.approx(50.0, rel=1e-3)
        assert "ops=536838144" in repr(result)
        with pytest.raises(ResourceError) as err:
            result.op_finish
    finally:
        set_max_memory(None)
    message = str(err.value)
    assert "\n" not in message and "op_finish of a run of 536,838,144 ops" in message
    assert "1 GiB --max-memory" in message


def test_a_ring_past_two_billion_sends_runs_on_its_steps():
    # 65,536 ranks: 8.6e9 sends, more than the cap on typos (counted in sends for a full
    # build), but 131,070 ring steps for the block run; its time is the ring's bandwidth
    # term, 2 (n-1)/n x 1 GiB over the one 50 GB/s link each rank sends on (no latency)
    n = 65536
    run = run_collective("allreduce", "torus:256x256", "ring", "1GiB")
    assert run.flows == 2 * (n - 1) * n
    assert run.time_s == pytest.approx(2 * (n - 1) / n * 2**30 / 50e9, rel=1e-9)


def test_per_block_arrays_expand_to_the_full_schedule_s_and_survive_pickling():
    topo = ring(8, bandwidth=1e9)
    options = AlgoOptions(chunks=2, topology=topo, extra={"annotate": False})
    blocks = ring_blocks("allreduce", 8, 8e9, options, reduce_scatter=True, all_gather=True)
    result = simulate_blocks(topo, blocks, topo.endpoints)
    assert "op_finish" not in vars(result)                 # not expanded yet
    again = pickle.loads(pickle.dumps(result))
    full = simulate(topo, blocks.expand(), topo.endpoints)
    for name in ("op_release", "op_start", "op_finish"):
        np.testing.assert_allclose(getattr(result, name), getattr(full, name), rtol=1e-12)
        np.testing.assert_array_equal(getattr(again, name), getattr(result, name))
    assert "op_finish" in vars(result)                     # expanded once, then kept
    with pytest.raises(AttributeError, match="no attribute 'op_nothing'"):
        result.op_nothing


def test_block_schedules_check_their_dependencies():
    ok = dict(num_ranks=2, src=np.array([0, 1]), dst=np.array([1, 0]), nbytes=1.0, blocks=2,
              dep_ptr=np.array([0, 0, 1]), dep_idx=np.array([0]), dep_perm=np.array([0]))
    BlockSchedule(**ok, perms=(np.array([1, 0]),))
    with pytest.raises(ScheduleError, match="permutations"):
        BlockSchedule(**ok, perms=(np.array([0, 0]),))
    with pytest.raises(ScheduleError, match="earlier blocks"):
        BlockSchedule(**{**ok, "dep_idx": np.array([1])}, perms=(np.array([1, 0]),))
