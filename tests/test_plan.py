"""netsim plan: step schedules, memory, the 1F1B bubble, the search and the command."""

import json

import pytest
from click.testing import CliRunner

from netsim.cli import cli, main
from netsim.engine import simulate
from netsim.errors import InputError
from netsim.planning import ModelSpec, load_model
from netsim.planning.search import plan
from netsim.planning.step import (Chip, TrainLayout, breakdown, build_train_step,
                                  collective_times, memory_per_chip, parse_train_layout,
                                  step_phases)
from netsim.topology import parse_topology

TINY = ModelSpec(name="tiny", layers=8, hidden=1024, heads=8, ffn=4096, vocab=8,
                 seq_len=1024, sources=["test"])
CHIP = Chip("test chip", flops=1e14, memory=80e9, memory_bandwidth=1e15)


def test_memory_per_chip_by_hand():
    m = load_model("llama3-8b")
    lay = TrainLayout(tp=2, pp=2, dp=2, batch=8)            # 4 micro-batches of 1
    mem = memory_per_chip(m, lay)
    attn = 4096 * (2 * 4096 + 2 * 1024)                      # Q, O and 8 KV heads of 128
    mlp = 3 * 4096 * 14336                                   # SwiGLU
    per_chip = (32 * (attn + mlp) / 2 + 128256 * 4096) / 2   # half the layers, one embedding
    assert mem["weights"] == pytest.approx(2 * per_chip)
    assert mem["grads"] == pytest.approx(2 * per_chip)
    assert mem["optimizer"] == pytest.approx(12 * per_chip / 2)      # ZeRO 1 over dp=2
    # 1F1B: the first stage holds min(pp, m) = 2 micro-batches of 16 layers, 34 s h / t each
    assert mem["activations"] == pytest.approx(2 * 16 * 34 * 8192 * 4096 / 2)


def test_interleaving_holds_more_activations():
    m = load_model("llama3-8b")
    plain = memory_per_chip(m, TrainLayout(pp=4, dp=2, batch=16))["activations"]
    inter = memory_per_chip(m, TrainLayout(pp=4, dp=2, batch=16, virtual=2))["activations"]
    assert inter == pytest.approx(plain * ((3 * 2 + 1 * 4 + 1) / 2) / 4)


def test_zero_stages_shard_the_state():
    m = load_model("llama3-8b")
    total = [memory_per_chip(m, TrainLayout(dp=8, batch=8, zero=z))["total"] for z in range(4)]
    assert total[0] > total[1] > total[2] > total[3]


def test_bubble_of_one_f_one_b_comes_out_of_the_simulation():
    """p stages, m micro-batches, equal stages, (nearly) free network: the idle share of
    the step is (p - 1) / (m + p - 1)."""
    topo = parse_topology("ring:4,bw=1e15")
    for p, m in ((4, 8), (2, 6)):
        lay = TrainLayout(pp=p, dp=4 // p, batch=m * (4 // p))
        step = build_train_step(TINY, lay, topo, chip=CHIP)
        result = simulate(topo, step.schedule, step.placement)
        split = breakdown(step, result)
        assert split.bubble_s / split.step_s == pytest.approx((p - 1) / (m + p - 1), rel=0.02)


def test_interleaving_divides_the_bubble_by_the_chunks():
    """Interleaved 1F1B with v chunks per stage: the idle share is (p - 1) / (v m + p - 1)
    (Narayanan et al. 2021, section 2.2.2)."""
    topo = parse_topology("ring:4,bw=1e15")
    for p, m, v in ((4, 8, 2), (2, 4, 4)):
        lay = TrainLayout(pp=p, dp=4 // p, batch=m * (4 // p), virtual=v)
        step = build_train_step(TINY, lay, topo, chip=CHIP)
        split = breakdown(step, simulate(topo, step.schedule, step.placement))
        assert split.bubble_s / split.step_s == pytest.approx((p - 1) / (v * m + p - 1),
                                                              rel=0.02)
    assert parse_train_layout("pp=4,vp=2", batch=8, chips=4).describe() == \
        "pp=4 vp=2 mb=1 zero=1"
    with pytest.raises(InputError, match="vp=2 .* divisible by pp"):
        TrainLayout(pp=4, batch=6, virtual=2)


def test_timed_step_matches_the_full_schedule():
    m = load_model("llama3-8b")
    topo = parse_topology("dgx-h100")
    lay = TrainLayout(tp=2, pp=2, dp=2, batch=8)
    full = build_train_step(m, lay, topo)
    exact = simulate(topo, full.schedule, full.placement).makespan
    times = collective_times(topo, lay, step_phases(m, lay, topology=topo), range(8))
    fast = build_train_step(m, lay, topo, timed=times)
    assert simulate(topo, fast.schedule, fast.placement).makespan == pytest.approx(exact,
                                                                                  rel=1e-6)


def test_data_parallel_reduction_hides_behind_the_backward():
    m = load_model("llama3-8b")
    topo = parse_topology("dgx-h100")
    lay = TrainLayout(dp=8, batch=16, zero=1)
    step = build_train_step(m, lay, topo)
    split = breakdown(step, simulate(topo, step.schedule, step.placement))
    assert split.exposed.get("dp", 0.0) == 0.0
    assert split.step_s == pytest.approx(split.compute_s, rel=1e-9)


def test_layout_text_and_refusals():
    assert parse_train_layout("tp=8,pp=4", batch=64, chips=256).dp == 8
    with pytest.raises(InputError, match="does not divide the 8 chips"):
        parse_train_layout("tp=8,pp=3", batch=16, chips=8)
    with pytest.raises(InputError, match="fits no layout"):
        plan(load_model("llama3-70b"), parse_topology("dgx-h100"), batch=8)
    with pytest.raises(InputError, match="needs .* GiB per chip"):
        plan(load_model("llama3-8b"), parse_topology("dgx-h100"), batch=8,
             layout=TrainLayout(dp=8, batch=8, zero=0))


def test_cli_table_json_and_errors(capsys):
    runner = CliRunner()
    out = runner.invoke(cli, ["plan", "llama3-8b", "--topo", "dgx-h100", "--batch", "8",
                               "--top", "2"])
    assert out.exit_code == 0, out.output
    assert "MFU" in out.output and "tokens/s" in out.output
    out = runner.invoke(cli, ["plan", "llama3-8b", "--topo", "dgx-h100", "--batch", "8",
                               "--layout", "tp=2,pp=2", "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    row = doc["records"][0]
    assert row["layout"].startswith("tp=2 dp=2 pp=2")
    parts = row["compute_s"] + row["bubble_s"] + sum(row.get(f"{s}_s", 0.0)
                                                     for s in ("tp", "cp", "ep", "pp", "dp"))
    assert parts == pytest.approx(row["step_s"], rel=1e-9)
    assert 0 < row["mfu"] < 1
    for args, text in ((["--layout", "tp=3"], "does not divide"),
                       (["--topo", "tpu-v4-4x4x4"], "no chip: block")):
        argv = ["plan", "llama3-8b", "--topo", "dgx-h100", "--batch", "8", *args]
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and text in err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_expert_parallel_shards_experts_and_pays_all_to_all():
    moe = ModelSpec(name="tiny-moe", layers=4, hidden=1024, heads=8, ffn=2048, vocab=1000,
                    seq_len=1024, experts=8, top_k=2, sources=["test"])
    one = memory_per_chip(moe, TrainLayout(dp=8, batch=8))
    eight = memory_per_chip(moe, TrainLayout(ep=8, batch=8))
    assert eight["weights"] < one["weights"] / 4           # experts are most of the weights
    topo = parse_topology("dgx-h100")
    lay = TrainLayout(ep=8, batch=16)
    names = [p.name for p in step_phases(moe, lay)]
    assert names == ["ep-alltoall"]
    out = plan(moe, topo, batch=16, layout=lay)
    assert out.rows[0]["ep_s"] > 0


def test_explain_and_plot(tmp_path):
    figure = tmp_path / "plan.png"
    model = tmp_path / "small.yaml"
    model.write_text("name: small\nlayers: 8\nhidden: 2048\nheads: 16\nkv_heads: 4\n"
                     "ffn: 8192\nvocab: 32000\nseq_len: 2048\nsources: [test]\n")
    out = CliRunner().invoke(cli, ["plan", str(model), "--topo", "t3000", "--batch", "8",
                                   "--top", "2", "--explain", "--plot", str(figure)])
    assert out.exit_code == 0, out.output
    assert "runner-up" in out.output and "busiest link per collective" in out.output
    assert figure.stat().st_size > 1000


def test_an_executor_gives_the_same_ranking():
    from concurrent.futures import ThreadPoolExecutor

    model, topo = load_model("llama3-8b"), parse_topology("dgx-h100")
    serial = plan(model, topo, batch=16, top=3)
    with ThreadPoolExecutor(2) as pool:
        parallel = plan(model, topo, batch=16, top=3, executor=pool)
    assert [r["layout"] for r in parallel.rows] == [r["layout"] for r in serial.rows]
    assert [r["step_s"] for r in parallel.rows] == [r["step_s"] for r in serial.rows]
    # the bound that orders the layouts is a lower bound of what the simulation gives
    assert all(r["bound_s"] <= r["step_s"] * (1 + 1e-9) for r in serial.rows)


def test_exact_one_schedule_agrees_with_the_timed_form():
    model = ModelSpec(name="small", layers=4, hidden=1024, heads=8, kv_heads=4, ffn=4096,
                      vocab=8000, seq_len=1024, sources=["test"])
    topo = parse_topology("dgx-h100-cluster:nodes=2")
    lay = TrainLayout(tp=4, pp=2, dp=2, batch=8)
    timed = plan(model, topo, batch=8, layout=lay).rows[0]
    exact = plan(model, topo, batch=8, layout=lay, exact=True).rows[0]
    assert exact["step_s"] == pytest.approx(timed["step_s"], rel=1e-6)
    assert exact["bubble_s"] == pytest.approx(timed["bubble_s"], rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("strategies, message", [
    (["row_major", "search"], "'search' is netsim place's local search"),
    (["row_major", "zigzag"], "zigzag"),
])
def test_strategies_the_planner_cannot_score_are_refused_before_any_simulation(
        strategies, message, monkeypatch):
    """A name the planner cannot score stops the plan at once, in one line, before a
    layout is simulated (the check does not wait for the first layout to reach it)."""
    import netsim.planning.search as search

    def simulated(*args, **kwargs):
        raise AssertionError("a layout was simulated before the strategies were checked")

    monkeypatch.setattr(search, "evaluate_layout", simulated)
    with pytest.raises(InputError) as info:
        plan(load_model("llama3-8b"), parse_topology("dgx-h100"), batch=8,
             strategies=strategies)
    assert message in str(info.value) and "\n" not in str(info.value)
