"""Workloads: transformer-derived sizes by hand, phases as one schedule, repeats, streams."""

import math

import numpy as np
import pytest

from netsim.errors import InputError
from netsim.placement import (ParallelLayout, Phase, Transformer, Workload, build_step,
                              bytes_workload, place)
from netsim.run.placements.evaluate import StepModel
from netsim.schedule import SEND
from netsim.topology import mesh

MiB = 2 ** 20


def test_transformer_training_phases_by_hand():
    lay = ParallelLayout(tp=2, cp=2, ep=2, dp=2, pp=2)
    model = Transformer(hidden=1024, seq_len=2048, micro_batch=2, layers=8, params=1e9,
                        kv_hidden=256, experts=8, top_k=2, micro_batches=4, mode="train")
    phases = {p.name: p for p in model.workload(lay).phases}
    assert list(phases) == ["tp-allreduce", "cp-allgather", "cp-reducescatter", "ep-dispatch",
                            "ep-combine", "pp-sendrecv", "dp-allreduce"]
    tokens = 2 * 2048 / 2                       # b * s / cp
    act = tokens * 1024 * 2                     # b s/cp h e = 4 MiB
    assert (phases["tp-allreduce"].size, phases["tp-allreduce"].repeat) == (act, 2 * 4 * 4 * 2)
    kv = 2 * 2048 * 2 * 256 / 2 * 2             # whole sequence, K and V, heads / tp, e
    assert (phases["cp-allgather"].size, phases["cp-allgather"].repeat) == (kv, 4 * 4)
    assert phases["cp-reducescatter"].size == kv
    routed = tokens * 2 * 1024 * 2              # tokens x top_k x h x e
    assert (phases["ep-dispatch"].size, phases["ep-dispatch"].repeat) == (routed, 4 * 4 * 2)
    assert phases["ep-dispatch"].op == "alltoall" and phases["ep-combine"].op == "alltoall"
    pp = phases["pp-sendrecv"]
    assert (pp.size, pp.repeat, pp.both_ways) == (act / 2, 4, True)
    assert (phases["dp-allreduce"].size, phases["dp-allreduce"].repeat) == (1e9 / 4 * 2, 1)


def test_decode_has_one_token_per_sequence_and_no_gradients():
    lay = ParallelLayout(tp=8, dp=4)
    w = Transformer(hidden=8192, seq_len=4096, micro_batch=32, layers=80,
                    mode="decode").workload(lay)
    assert [(p.name, p.size, p.repeat) for p in w.phases] == [("tp-allreduce", 512 * 1024,
                                                               160)]
    rs_ag = Transformer(hidden=8192, seq_len=1, micro_batch=32, layers=80, mode="decode",
                        tp_comm="rs_ag").workload(lay)
    assert [(p.op, p.repeat) for p in rs_ag.phases] == [("reducescatter", 160),
                                                        ("allgather", 160)]
    # default parameter count 12 L h^2, the dp all-reduce in its own stream with overlap
    train = Transformer(hidden=64, seq_len=8, layers=2).workload(ParallelLayout(tp=2, dp=2),
                                                                 overlap=True)
    dp = train.phases[-1]
    assert dp.size == 12 * 2 * 64 ** 2 / 2 * 2 and train.streams().keys() == {"main", "grad"}


def test_bad_transformers_fail_in_one_line():
    with pytest.raises(InputError, match=r"layers \(3\) must divide by pp \(2\)"):
        Transformer(hidden=8, seq_len=8, layers=3).workload(ParallelLayout(tp=2, pp=2))
    with pytest.raises(InputError, match="unknown transformer mode 'decoding'"):
        Transformer(hidden=8, seq_len=8, layers=2, mode="decoding")
    with pytest.raises(InputError, match="phase 'x': repeat must be an integer >= 1"):
        Phase("x", "tp", "allreduce", 1e6, repeat=0)
    with pytest.raises(InputError, match="phase name 'a' is used twice"):
        Workload((Phase("a", "tp", "allreduce", 1), Phase("a", "dp", "allreduce", 1)))


def test_every_group_runs_in_one_schedule_tagged_by_phase():
    topo, lay = mesh((2, 4)), ParallelLayout(tp=4, dp=2)
    work = bytes_workload(tp_bytes=4e6, dp_bytes=2e6, pp_bytes=1e6)   # pp has degree 1
    step = build_step(topo, lay, work, place("row_major", topo, lay))
    sends = step.schedule.kind == SEND
    tags = np.asarray(step.schedule.tags)[step.schedule.tag[sends]]
    # ring all-reduce: 2 (p-1) p sends per group; tp: 2 groups of 4, dp: 4 groups of 2
    assert (tags == "tp-allreduce").sum() == 2 * (2 * 3 * 4)
    assert (tags == "dp-allreduce").sum() == 4 * (2 * 1 * 2)
    assert step.sequential and [p.name for p in step.phases] == ["tp-allreduce",
                                                                   "dp-allreduce"]
    # a ring all-reduce of S over p ranks moves 2 (p-1) S bytes in all
    assert math.isclose(step.schedule.nbytes[sends].sum(), 2 * (2 * 3 * 4e6) + 4 * (2 * 1 * 2e6))


def _model(spec_dims, lay, work):
    return StepModel(mesh(spec_dims, bandwidth=1e9), lay, work)


def test_two_collectives_on_disjoint_links_take_the_time_of_one():
    # 1x4 line, two tp groups of 2. Ring all-reduce of S on 2 ranks: 2 steps of S/2 at B.
    lay, S, B = ParallelLayout(tp=2, dp=2), 1e6, 1e9
    apart = _model((1, 4), lay, bytes_workload(tp_bytes=S)).evaluate([0, 1, 2, 3])  # {0,1} {2,3}
    alone = _model((1, 2), ParallelLayout(tp=2), bytes_workload(tp_bytes=S)).evaluate([0, 1])
    assert alone.step_s == pytest.approx(S / B, rel=1e-12)
    assert apart.step_s == pytest.approx(alone.step_s, rel=1e-12)


def test_groups_sharing_a_link_take_the_time_of_both():
    lay, S, B = ParallelLayout(tp=2, dp=2), 1e6, 1e9
    model = _model((1, 4), lay, bytes_workload(tp_bytes=S))
    # groups {0,2} and {1,3} on the line: 0->2 and 1->3 both cross link 1->2, and the
    # replies cross 2->1: max-min gives each half the link, so both take 2 S / B.
    shared = model.evaluate([0, 2, 1, 3])
    assert shared.step_s == pytest.approx(2 * S / B, rel=1e-12)
    assert shared.max_util == pytest.approx(1.0)
    # the same two collectives one after the other, each alone on its nodes, add up to it
    sequential = Workload((Phase("g0", "tp", "allreduce", S), ), name="g0")
    one = StepModel(mesh((1, 4), bandwidth=B), ParallelLayout(tp=2, dp=2), sequential)
    assert one.evaluate([0, 2, 1, 3]).step_s == pytest.approx(2 * S / B)


def test_repeat_is_exactly_that_many_copies_in_sequence():
    topo, lay = mesh((2, 4), bandwidth=1e9, latency=1e-6), ParallelLayout(tp=4, dp=2)
    placement = place("interleaved", topo, lay)
    repeated = StepModel(topo, lay, Workload((Phase("tp", "tp", "allreduce", 3e6, repeat=3),
                                              Phase("dp", "dp", "allreduce", 1e6))))
    spelled = StepModel(topo, lay, Workload(tuple(
        [Phase(f"tp{i}", "tp", "allreduce", 3e6) for i in range(3)]
        + [Phase("dp", "dp", "allreduce", 1e6)])))
    a, b = repeated.evaluate(placement), spelled.evaluate(placement)
    assert a.step_s == pytest.approx(b.step_s, rel=1e-12)
    assert a.phase_s["tp"] == pytest.approx(sum(b.phase_s[f"tp{i}"] for i in range(3)))
    assert a.link_bytes == pytest.approx(b.link_bytes)
    assert a.hop_bytes == pytest.approx(b.hop_bytes)


def test_overlap_runs_phases_at_once():
    # tp on rows, dp on columns of a 2x4 mesh: disjoint links, so overlapped = the longer
    topo, lay = mesh((2, 4), bandwidth=1e9), ParallelLayout(tp=4, dp=2)
    placement = place("row_major", topo, lay)
    seq = StepModel(topo, lay, bytes_workload(tp_bytes=4e6, dp_bytes=8e6)).evaluate(placement)
    ovl = StepModel(topo, lay, bytes_workload(tp_bytes=4e6, dp_bytes=8e6,
                                              overlap=True)).evaluate(placement)
    tp, dp = 2 * 3 / 4 * 4e6 / 1e9, 2 * 1 / 2 * 8e6 / 1e9
    assert seq.phase_s == pytest.approx({"tp-allreduce": tp, "dp-allreduce": dp})
    assert seq.step_s == pytest.approx(tp + dp)
    assert ovl.step_s == pytest.approx(max(tp, dp))
    assert ovl.link_bound_s == pytest.approx(max(tp, dp))


def test_pipeline_sends_go_stage_to_stage():
    topo, lay = mesh((1, 4), bandwidth=1e9), ParallelLayout(pp=4)
    work = Workload((Phase("pp", "pp", "sendrecv", 1e6, both_ways=True),))
    step = build_step(topo, lay, work, [0, 1, 2, 3])
    pairs = sorted(zip(step.schedule.src.tolist(), step.schedule.dst.tolist()))
    assert pairs == [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)]
    assert StepModel(topo, lay, work).evaluate([0, 1, 2, 3]).step_s == pytest.approx(1e-3)


def test_nothing_to_move_is_an_error():
    with pytest.raises(InputError, match="no phase of the workload moves data"):
        StepModel(mesh((2, 2)), ParallelLayout(tp=4), bytes_workload(dp_bytes=1e6))
