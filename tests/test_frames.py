"""DataFrames and Parquet: Result.to_pandas against the record lists, run-layer results
through netsim.run.to_pandas, and --format parquet against --format json."""

from __future__ import annotations

import json

import numpy as np
import pytest

from netsim.engine import Result, simulate
from netsim.run import run_sweep, to_pandas
from netsim.schedule import make_pattern
from netsim.topology import parse_topology

from cli_helpers import run_main

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


def _result():
    topo = parse_topology("mesh:3x3,bw=10GB/s,lat=1us")
    return simulate(topo, make_pattern("alltoall", 9, 1e6))


def test_link_frame_matches_link_records():
    result = _result()
    frame = result.to_pandas("links")
    assert frame.to_dict("records") == result.link_records()
    assert frame["bytes"].sum() == pytest.approx(result.link_bytes.sum())


def test_op_frame_matches_flow_records():
    result = _result()
    frame = result.to_pandas("ops")
    records = result.flow_records()
    assert list(frame["start_s"]) == [r["start_s"] for r in records]
    assert list(frame["finish_s"]) == [r["finish_s"] for r in records]
    assert (frame["finish_s"] >= frame["release_s"]).all()


def test_op_frame_with_its_schedule_says_who_sent_what():
    topo = parse_topology("mesh:3x3,bw=10GB/s,lat=1us")
    schedule = make_pattern("alltoall", 9, 1e6)
    frame = simulate(topo, schedule).to_pandas("ops", schedule=schedule)
    assert list(frame["src"]) == list(schedule.src) and list(frame["dst"]) == list(schedule.dst)
    # a send's time on the wire is at least its bytes over one link's 10 GB/s
    sends = frame[frame["bytes"] > 0]
    assert ((sends["finish_s"] - sends["start_s"]) >= sends["bytes"] / 10e9 * (1 - 1e-12)).all()
    with pytest.raises(ValueError, match="not the schedule that was run"):
        simulate(topo, schedule).to_pandas("ops", schedule=make_pattern("alltoall", 4, 1e6))


def test_a_large_result_converts_column_by_column():
    n = 100_000
    rng = np.random.default_rng(0)
    result = Result("synthetic", 2.0, np.zeros(1), np.zeros(1), np.ones(1),
                    tuple(f"l{i}" for i in range(n)), np.full(n, 4.0), rng.random(n),
                    np.zeros(n), np.ones(n, dtype=np.int64), 1, 1,
                    link_ends=tuple((f"a{i}", f"b{i}") for i in range(n)))
    frame = result.to_pandas()
    assert len(frame) == n and frame["dst"].iloc[-1] == f"b{n - 1}"
    np.testing.assert_array_equal(frame["utilization"], result.link_bytes / 8.0)


def test_collective_runs_and_sweeps_become_frames():
    runs = run_sweep("allreduce", "ring:4,bw=1GB/s", "ring", [1e6, 2e6], alpha=0.0)
    frame = to_pandas(runs)
    assert list(frame["size_bytes"]) == [1e6, 2e6]
    # ring all-reduce: 2 (p-1)/p S / B with p = 4, B = 1 GB/s
    np.testing.assert_allclose(frame["time_s"], [1.5e-3, 3e-3], rtol=1e-12)
    with pytest.raises(TypeError):
        to_pandas(object())


def test_parquet_output_holds_the_json_records(tmp_path, capsys):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\ntopology: 'ring:4,bw=1GB/s'\njobs:\n"
                        "  - {kind: traffic, pattern: shift, size: 1MB}\n"
                        "  - {kind: collective, op: allreduce, algorithm: ring, "
                        "sizes: [1MB, 2MB]}\n")
    code, out, err = run_main(["run", str(scenario), "--format", "json"], capsys)
    assert code == 0, err
    records = json.loads(out)["records"]
    target = tmp_path / "run.parquet"
    code, _, err = run_main(["run", str(scenario), "--format", "parquet", "-o", str(target)],
                            capsys)
    assert code == 0, err
    frame = pd.read_parquet(target)
    assert len(frame) == len(records)
    assert list(frame["time_s"]) == [r["time_s"] for r in records]


def test_auto_candidates_become_one_row_each():
    runs = run_sweep("allreduce", "torus:3x3,bw=1GB/s", "auto", [1e5, 1e7])
    frame = to_pandas(runs, "candidates")
    for run in runs:
        mine = frame[frame["size_bytes"] == run.size_bytes]
        assert len(mine) == len(run.candidates) + len(run.pruned or {})
        chosen = mine[mine["chosen"]]
        assert list(chosen["candidate"]) == [run.algorithm]
        assert chosen["time_s"].iloc[0] == run.time_s == mine["time_s"].min()
        # a candidate left unsimulated was ruled out by a bound above the winner's time
        assert (mine.loc[~mine["simulated"], "bound_s"] >= run.time_s).all()
