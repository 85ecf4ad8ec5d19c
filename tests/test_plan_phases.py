"""The planner's collective times: groups simulated apart or once per class of alike groups
give exactly what simulating every group at once gives; scores match netsim place's."""

import numpy as np
import pytest

from netsim.engine import simulate
from netsim.placement.layout import ParallelLayout
from netsim.placement.strategies import place
from netsim.placement.workload import Phase, Workload, phase_schedule
from netsim.planning import TrainLayout, load_model
from netsim.planning.phases import PhaseTimes
from netsim.planning.search import evaluate_layout
from netsim.planning.step import chip_of, step_phases
from netsim.routing import default_router
from netsim.run import StepModel, compare_strategies
from netsim.topology import parse_topology


def _whole(topo, phase, par, placement):
    """Every group of the phase at once, in one simulation."""
    sched, extra = phase_schedule(phase, topo, par, placement)
    full = np.concatenate([placement, np.asarray(extra, dtype=np.int64)])
    return simulate(topo, sched, full, router=default_router(topo)).makespan


@pytest.mark.parametrize("algorithm", ["ring", "nccl"])
def test_alike_groups_apart_give_the_whole_phase(algorithm):
    # 4 nodes of 8 GPUs, one NIC per GPU: the data-parallel groups of tp=2 are on
    # disjoint rails; row-major puts them alike, random does not
    topo = parse_topology("dgx-h100-cluster:nodes=4")
    par = ParallelLayout(tp=2, dp=16)
    phase = Phase("dp-reducescatter", "dp", "reducescatter", 256e6, algorithm)
    timer = PhaseTimes(topo)
    rows = np.arange(32)
    t = timer.time(phase, par, rows)
    assert timer.stats["groups_simulated"] == 1 and timer.stats["groups_alike"] == 1
    assert t == pytest.approx(_whole(topo, phase, par, rows), rel=1e-9)
    # the same groups on the same nodes: the cache answers
    assert timer.time(phase, par, rows) == t and timer.stats["cached"] == 1
    assert timer.bound(phase, par, rows) <= t


def test_a_phases_link_loads_are_the_bytes_its_simulation_moves():
    # hash ECMP puts each send of a pair on a path of its own (its key): the loads the
    # bound is taken from must be the simulation's, not one path per pair
    from netsim.routing.updown import UpDownRouter

    topo = parse_topology("fattree:k=4")
    router = UpDownRouter(ecmp="hash")
    par = ParallelLayout(tp=2, dp=8)
    phase = Phase("dp-allreduce", "dp", "allreduce", 64e6, "ring", chunks=4)
    placement = np.random.default_rng(3).permutation(topo.endpoints)
    timer = PhaseTimes(topo, router=router)
    sched, extra = phase_schedule(phase, topo, par, placement)
    full = np.concatenate([placement, np.asarray(extra, dtype=np.int64)])
    run = simulate(topo, sched, full, router=router)
    assert np.allclose(timer.loads(phase, par, placement), run.link_bytes, rtol=1e-12)
    assert timer.bound(phase, par, placement) <= timer.time(phase, par, placement)


def test_groups_that_share_links_are_simulated_together():
    # a 4x8 mesh: the column groups of a row-major tp=8 layout cross the same rows' links
    topo = parse_topology("galaxy-wh")
    par = ParallelLayout(tp=8, dp=4)
    phase = Phase("dp-allgather", "dp", "allgather", 64e6, "ring")
    timer = PhaseTimes(topo)
    placement = place("row_major", topo, par)
    t = timer.time(phase, par, placement)
    assert t == pytest.approx(_whole(topo, phase, par, placement), rel=1e-9)
    assert timer.stats["phases_simulated"] == 1 and timer.stats["groups_simulated"] == 0


def test_scores_are_netsim_place_scores():
    """The planner's score of each placement is the step time netsim place gives it."""
    model = load_model("llama3-8b").model_copy(update={"layers": 4, "seq_len": 1024})
    topo = parse_topology("dgx-h100-cluster:nodes=2")
    lay = TrainLayout(tp=4, dp=4, batch=8)
    phases = step_phases(model, lay, "default", topo)
    names = ["row_major", "column_major", "snake", "random"]
    # one StepModel per strategy: it reuses a step's schedule across placements when two
    # trial placements build the same one, which NCCL's topology-aware model breaks
    theirs = {}
    for name in names:
        smodel = StepModel(topo, lay.parallel(), Workload(tuple(phases)))
        if name == "random":            # netsim place skips it, as the planner does
            why = {}
            assert compare_strategies(smodel, [name], unrunnable=why)[0] == []
            assert "same number of ranks per node" in why[name]
            continue
        theirs.update({s.strategy: s.step_s for s in compare_strategies(smodel, [name])[0]})
    _, detail = evaluate_layout(model, lay, topo, chip=chip_of(topo), strategies=names)
    ours = {s.strategy: s.step_s for s in detail["scores"]}
    assert set(ours) | set(detail["skipped"]) == set(names)
    for name, step_s in ours.items():
        assert step_s == pytest.approx(theirs[name], rel=1e-9)
    # a placement not simulated had a bound above the best score
    best = min(ours.values())
    assert min(theirs.values()) == pytest.approx(best, rel=1e-9)
    for name, why in detail["skipped"].items():
        # NCCL's model across nodes cannot take a random map; the rest cannot win
        assert ("same number of ranks per node" in why if name == "random"
                else "link-load bound" in why and theirs[name] >= best)


def test_batches_keep_layouts_that_share_collectives_together():
    from netsim.planning.search import _batches

    lays = [TrainLayout(tp=t, dp=16 // t, batch=16, zero=z, recompute=r)
            for t in (2, 4, 8) for z in (1, 3) for r in (False, True)]
    for workers in (1, 2, 3):
        batches = _batches(lays, workers)
        assert len(batches) == workers
        assert sorted(map(repr, sum(batches, []))) == sorted(map(repr, lays))
        # each degree set lies in one batch
        assert all(len({(l.tp, l.dp) for l in b}) == len(b) // 4 for b in batches)
    split = _batches(lays[:4], 2)        # one degree set, two workers: split in halves
    assert [len(b) for b in split] == [2, 2]


def test_four_galaxies_are_one_8x16_mesh():
    quad, one = parse_topology("galaxy-wh-quad"), parse_topology("galaxy-wh")
    assert quad.params["dims"] == (8, 16) and quad.num_endpoints == 4 * one.num_endpoints
    # 4 links per neighbour pair and direction, the seams between Galaxies included
    assert quad.num_links == (7 * 16 + 8 * 15) * 2 * 4
    assert quad.meta["chip"] == one.meta["chip"]
    assert quad.meta["library"] == one.meta["library"]


def test_explain_lists_the_placements_skipped_and_why():
    from netsim.cli.plan import _explain
    from netsim.planning import PlanResult

    model = load_model("llama3-8b").model_copy(update={"layers": 4, "seq_len": 1024})
    topo = parse_topology("dgx-h100-cluster:nodes=2")
    chip = chip_of(topo)
    rows, details = [], []
    for lay in (TrainLayout(tp=4, dp=4, batch=8), TrainLayout(tp=8, dp=2, batch=8)):
        row, detail = evaluate_layout(model, lay, topo, chip=chip,
                                      strategies=["row_major", "random"])
        rows.append(row)
        details.append(detail)
    text = _explain(PlanResult(rows, 2, 2, chip, details), topo)
    # NCCL's model across nodes cannot run a random map: skipped, not a failed search
    assert "winner: placement random skipped: nccl across nodes needs the same number" in text
    assert "busiest link per collective" in text and "groups simulated alone" in text
