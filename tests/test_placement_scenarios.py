"""The placement scenarios in scenarios/: each runs, and shows what it is there to show."""

from pathlib import Path

import pytest

from netsim.run.scenarios.scenario import load_scenario, run_scenario

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"


def _run(name):
    outcome = run_scenario(load_scenario(SCENARIOS / name))
    return {job.name: {r["strategy"]: r for r in job.records} for job in outcome.jobs}


def _search_never_worse(rows, key="step_s"):
    fixed = [r[key] for name, r in rows.items() if name != "search"]
    assert rows["search"][key] <= min(fixed)


def test_llama70b_decode_on_galaxy():
    rows = _run("placement-llama70b-decode-galaxy.yaml")["llama70b-decode"]
    step = {name: r["step_s"] for name, r in rows.items()}
    # latency-bound rings: 1-hop rings (snake, 4x2 tiles, and row-major's 2x4 blocks, whose
    # rings the default order lays on their snake cycle) < a 7-hop closing hop
    # (column-major: a line of 8 on the mesh has no ring)
    assert step["snake"] == pytest.approx(step["tiles"], rel=1e-9)
    assert step["snake"] == pytest.approx(step["row_major"], rel=1e-9)
    assert step["snake"] < step["column_major"]
    assert rows["column_major"]["vs_row_major_pct"] > 20
    _search_never_worse(rows)
    # 160 all-reduces per token: the step is 160 x one all-reduce
    assert rows["snake"]["tp-allreduce_s"] == pytest.approx(step["snake"])


def test_training_on_t3000_and_one_dgx():
    jobs = _run("placement-training-t3000.yaml")
    t3k, dgx = jobs["train-8b-t3000"], jobs["train-8b-dgx-h100"]
    # tp on rows, dp pairs on the columns: disjoint links, the best fixed map here
    assert t3k["row_major"]["step_s"] < min(t3k[s]["step_s"] for s in
                                             ("column_major", "snake", "tiles"))
    _search_never_worse(t3k)
    _search_never_worse(dgx)
    # one hop through a switch for every pair: the placement does not matter on the DGX
    times = [r["step_s"] for r in dgx.values()]
    assert max(times) == pytest.approx(min(times), rel=1e-9)
    assert dgx["row_major"]["step_s"] < t3k["row_major"]["step_s"] / 5


def test_training_on_galaxy_and_four_dgx_nodes():
    jobs = _run("placement-training-galaxy.yaml")
    galaxy, dgx = jobs["train-70b-galaxy"], jobs["train-70b-dgx-h100-cluster"]
    # tp on columns, dp on rows: the two dimensions use disjoint links
    assert galaxy["column_major"]["step_s"] < 0.7 * galaxy["row_major"]["step_s"]
    _search_never_worse(galaxy)
    # on the cluster (NCCL, the default) row-major and tiles keep tp inside a server and
    # leave the dp all-reduce one NIC per server: it sets their step; column-major puts dp
    # inside the servers and gives each tp group two NICs per server
    assert dgx["tiles"]["step_s"] == pytest.approx(dgx["row_major"]["step_s"], rel=1e-9)
    assert dgx["row_major"]["step_s"] == pytest.approx(dgx["row_major"]["dp-allreduce_s"])
    assert dgx["column_major"]["dp-allreduce_s"] < 0.2 * dgx["row_major"]["dp-allreduce_s"]
    assert dgx["column_major"]["step_s"] < dgx["row_major"]["step_s"]
    _search_never_worse(dgx)


def test_operators_on_the_wormhole_noc():
    jobs = _run("placement-noc-wormhole.yaml")
    for rows in jobs.values():
        _search_never_worse(rows, "time_s")
        assert rows["search"]["time_s"] < rows["adjacent"]["time_s"]
    shortest = jobs["chain-shortest-noc"]
    assert shortest["scattered"]["time_s"] > shortest["adjacent"]["time_s"]


def test_a_job_with_explicit_phases_and_a_map_file(tmp_path):
    (tmp_path / "map.csv").write_text("rank,node\n" + "".join(
        f"{r},{n}\n" for r, n in enumerate(["0_0", "0_2", "1_0", "1_2", "0_1", "0_3", "1_1",
                                            "1_3"])))
    (tmp_path / "s.yaml").write_text(
        "name: s\ntopology: mesh:2x4,bw=10GB/s\njobs:\n"
        "  - kind: placement\n    layout: tp=4,dp=2\n    map: map.csv\n"
        "    strategies: [explicit, row_major]\n"
        "    phases:\n      - {name: tp-ar, dim: tp, op: allreduce, size: 4MB, repeat: 2}\n")
    rows = {r["strategy"]: r for r in run_scenario(load_scenario(tmp_path / "s.yaml")).records}
    # the interleaved map of the closed form: 2 x 3 S / B against 2 x 1.5 S / B
    assert rows["explicit"]["step_s"] == pytest.approx(2 * 1.2e-3)
    assert rows["row_major"]["step_s"] == pytest.approx(2 * 0.6e-3)
    assert rows["explicit"]["vs_row_major_pct"] == pytest.approx(100.0)


@pytest.mark.parametrize("job, message", [
    ("layout: tp=4,dp=2\n    bytes: {tp: 1MB}\n    model: {hidden: 8, seq_len: 8, layers: 2}",
     "give exactly one of model, bytes or phases (got model, bytes)"),
    ("layout: tq=8\n    bytes: {tp: 1MB}", "unknown parallel dimension 'tq'"),
    ("layout: tp=8\n    bytes: {tp: 1MB}\n    strategies: [snak]",
     "unknown placement strategy 'snak': did you mean 'snake'?"),
])
def test_bad_jobs_are_one_line_errors(tmp_path, job, message):
    from netsim.errors import InputError

    (tmp_path / "s.yaml").write_text(
        f"name: s\ntopology: mesh:2x4\njobs:\n  - kind: placement\n    {job}\n")
    with pytest.raises(InputError) as err:
        load_scenario(tmp_path / "s.yaml")
    assert message in str(err.value) and "\n" not in str(err.value)
