"""Sweeps: grid and zip expansion, results against closed forms, resume after an
interruption, failed points, and the same table from every executor (this process, local
processes, a Dask LocalCluster on loopback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from netsim.run import load_sweep, run_sweep_points
from netsim.run.sweep import SerialExecutor, SweepSpec, expand, point_seed, rows_to_parquet

from cli_helpers import run_main

# A shift by one on a ring: every message has a link of its own, so a message of S bytes on
# links of bandwidth B takes S / B (no latency), whatever the machine's size.
SWEEP = """\
name: shift-sweep
seed: 3
jobs:
  - kind: traffic
    topology: "ring:4,bw=1GB/s"
    pattern: shift
    size: 1MB
sweep:
  grid:
    jobs[0].size: [1MB, 2MB, 4MB]
  zip:
    - jobs[0].topology: ["ring:4,bw=1GB/s", "ring:6,bw=2GB/s"]
      jobs[0].ranks: [4, 6]
"""


def _write(tmp_path: Path, text: str = SWEEP, name: str = "sweep.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_grid_times_zip_gives_every_combination_in_order():
    spec = SweepSpec(grid={"a": [1, 2, 3], "b": ["x", "y"]},
                     zip=[{"c": [1, 2], "d": [3, 4]}])
    points = expand(spec)
    assert len(points) == 3 * 2 * 2
    assert len({json.dumps(p, sort_keys=True) for p in points}) == len(points)
    assert points[0] == {"a": 1, "b": "x", "c": 1, "d": 3}
    assert points[1] == {"a": 1, "b": "x", "c": 2, "d": 4}     # zipped: c and d together
    assert [p["a"] for p in points] == sorted(p["a"] for p in points)   # first key slowest
    with pytest.raises(ValueError, match="same length"):
        SweepSpec(zip=[{"c": [1, 2], "d": [3]}])


def test_seed_is_the_points_own_and_independent_of_its_position():
    assert point_seed(0, {"seed": 11}) == 11
    assert point_seed(0, {"x": 1, "y": 2}) == point_seed(0, {"y": 2, "x": 1})
    assert point_seed(0, {"x": 1}) != point_seed(1, {"x": 1})
    assert point_seed(0, {"x": 1}) != point_seed(0, {"x": 2})


def test_results_match_the_closed_form(tmp_path):
    sweep = load_sweep(_write(tmp_path))
    result = run_sweep_points(sweep, tmp_path / "out")
    assert result.computed == 6 and result.failed == 0
    for row in result.rows:
        bandwidth = 1e9 if row["jobs[0].ranks"] == 4 else 2e9
        size = {"1MB": 1e6, "2MB": 2e6, "4MB": 4e6}[row["jobs[0].size"]]
        assert row["time_s"] == pytest.approx(size / bandwidth, rel=1e-12)
        assert row["ranks"] == row["jobs[0].ranks"]
        assert row["seed"] == point_seed(3, sweep.points[row["point"]])


def test_an_interrupted_sweep_resumes_with_only_the_missing_points(tmp_path):
    sweep = load_sweep(_write(tmp_path))
    out = tmp_path / "out"

    class Crash(Exception):
        """Stands for a crash or Ctrl-C half-way (the runner treats every exception so)."""

    def stop_after_two(done, failed, total):
        if done == 2:
            raise Crash
    with pytest.raises(Crash):
        run_sweep_points(sweep, out, progress=stop_after_two)
    assert len(list((out / "points").glob("*.json"))) == 2
    (out / "points" / "junk.json.tmp").write_text("{")       # a crash's leftover: ignored
    resumed = run_sweep_points(sweep, out)
    assert (resumed.computed, resumed.reused) == (4, 2)
    fresh = run_sweep_points(sweep, tmp_path / "fresh")
    assert resumed.rows == fresh.rows
    assert rows_to_parquet(resumed.rows) == rows_to_parquet(fresh.rows)


def test_an_edited_scenario_is_computed_again(tmp_path):
    out = tmp_path / "out"
    run_sweep_points(load_sweep(_write(tmp_path)), out)
    edited = load_sweep(_write(tmp_path, SWEEP.replace("pattern: shift",
                                                       "pattern: shift\n    offset: 1")))
    assert run_sweep_points(edited, out).computed == 6


def test_a_failing_point_is_recorded_and_the_others_run(tmp_path):
    text = SWEEP.replace("[1MB, 2MB, 4MB]", "[1MB, 2MB]").replace("[4, 6]", "[4, 9]")
    sweep = load_sweep(_write(tmp_path, text))              # 9 ranks on a ring of 6
    result = run_sweep_points(sweep, tmp_path / "out")
    failed = [row for row in result.rows if row["error"] is not None]
    assert len(failed) == 2 and all(row["jobs[0].ranks"] == 9 for row in failed)
    assert all("\n" not in row["error"] and "9" in row["error"] for row in failed)
    again = run_sweep_points(sweep, tmp_path / "out")
    assert again.computed == 0
    assert run_sweep_points(sweep, tmp_path / "out", retry_failed=True).computed == 2


def test_every_executor_writes_the_same_table(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    path = _write(tmp_path)
    outputs = {}
    code, _, err = run_main(["sweep", str(path), "--out", str(tmp_path / "serial"),
                             "--workers", "1", "--format", "parquet", "-o",
                             str(tmp_path / "serial.parquet")], capsys)
    assert code == 0, err
    outputs["serial"] = tmp_path / "serial"
    code, _, err = run_main(["sweep", str(path), "--out", str(tmp_path / "processes"),
                             "--workers", "2"], capsys)
    assert code == 0, err
    outputs["processes"] = tmp_path / "processes"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        code, _, err = run_main(["sweep", str(path), "--out", str(tmp_path / "dask"),
                                 "--scheduler", cluster.scheduler_address], capsys)
    assert code == 0, err
    outputs["dask"] = tmp_path / "dask"
    for name in ("results.csv", "results.json"):
        texts = {kind: (folder / name).read_bytes() for kind, folder in outputs.items()}
        assert texts["serial"] == texts["processes"] == texts["dask"], name
    doc = json.loads((outputs["dask"] / "results.json").read_text())
    assert doc["command"] == "sweep" and doc["points"] == 6 and len(doc["records"]) == 6
    pd = pytest.importorskip("pandas")
    frame = pd.read_parquet(tmp_path / "serial.parquet")
    assert list(frame["time_s"]) == [row["time_s"] for row in doc["records"]]


@pytest.mark.parametrize("sweep, message", [
    ('{grid: {"jobs[0].sise": [1MB]}}', "has no field 'sise'"),
    ('{grid: {"jobs[3].size": [1MB]}}', "has 1 jobs"),
    ("{grid: {topolgy: [ring]}}", "not a scenario field"),
    ('{grid: {"jobs[0].size": []}}', "empty list"),
    ("{grid: {size: [1MB]}, zip: {size: [1MB]}}", "not a scenario field"),
    ("{grids: {}}", "unknown field"),
])
def test_bad_sweeps_are_one_line_errors(tmp_path, capsys, sweep, message):
    text = SWEEP.split("sweep:\n")[0] + f"sweep: {sweep}\n"
    code, out, err = run_main(["sweep", str(_write(tmp_path, text)), "--out",
                               str(tmp_path / "out")], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert str(tmp_path / "sweep.yaml") in err
    assert not (tmp_path / "out").exists()


def test_netsim_run_points_a_sweep_to_netsim_sweep(tmp_path, capsys):
    code, _, err = run_main(["run", str(_write(tmp_path))], capsys)
    assert code == 2 and "netsim sweep" in err


def test_the_shipped_sweep_is_valid():
    from netsim.run import default_scenario_path

    sweep = load_sweep(default_scenario_path().parent / "sweep-allreduce.yaml")
    assert len(sweep.points) == 36


def test_verbose_logs_the_sweep_to_stderr(tmp_path, capsys):
    path = _write(tmp_path)
    code, out, err = run_main(["-vv", "sweep", str(path), "--out", str(tmp_path / "o"),
                               "--workers", "1", "--format", "csv"], capsys)
    assert code == 0, err
    assert "netsim: INFO: sweep shift-sweep: 6 points, 0 stored" in err
    assert err.count("netsim: DEBUG: point ") == 6
    code, out, err = run_main(["-q", "sweep", str(path), "--out", str(tmp_path / "o"),
                               "--workers", "1", "--format", "csv"], capsys)
    assert code == 0 and "INFO" not in err and "DEBUG" not in err
    assert out.count("\n") == 7                        # header + 6 points


def test_plot_draws_busbw_curves_of_collective_points(tmp_path, capsys):
    text = ("name: plot\njobs:\n  - {kind: collective, op: allreduce, topology: 'ring:4', "
            "algorithm: ring, size: 1MB, alpha: 0}\nsweep:\n  grid:\n"
            "    jobs[0].algorithm: [ring, direct]\n    jobs[0].size: [1MB, 2MB, 4MB]\n")
    figure = tmp_path / "busbw.svg"
    code, _, err = run_main(["sweep", str(_write(tmp_path, text)), "--out",
                             str(tmp_path / "o"), "--workers", "1", "--plot", str(figure)],
                            capsys)
    assert code == 0, err
    assert f"wrote {figure}" in err and figure.read_text().startswith("<?xml")
    code, _, err = run_main(["sweep", str(_write(tmp_path)), "--out", str(tmp_path / "t"),
                             "--workers", "1", "--plot", str(tmp_path / "none.png")], capsys)
    assert code == 2 and "no point has a size and a busbw" in err   # traffic jobs only


@pytest.mark.slow
def test_a_killed_sweep_process_resumes(tmp_path, capsys):
    """SIGKILL a real `netsim sweep` once it has stored a few points; the same command
    then computes only the rest and gives the table of an uninterrupted run."""
    import os
    import signal
    import subprocess
    import sys
    import time

    sizes = ", ".join(f"{k}MB" for k in range(1, 41))            # 40 points
    text = SWEEP.split("sweep:\n")[0] + f"sweep:\n  grid:\n    jobs[0].size: [{sizes}]\n"
    path, out = _write(tmp_path, text), tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    child = subprocess.Popen([sys.executable, "-m", "netsim", "sweep", str(path), "--out",
                              str(out), "--workers", "1", "--format", "csv"],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(list(out.glob("points/*.json"))) < 3 and child.poll() is None \
            and time.monotonic() < deadline:
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait()
    stored = len(list(out.glob("points/*.json")))
    assert 3 <= stored < 40, stored
    code, _, err = run_main(["sweep", str(path), "--out", str(out), "--workers", "1",
                             "--format", "csv"], capsys)
    assert code == 0 and f"{40 - stored} computed, {stored} from" in err, err
    fresh = run_sweep_points(load_sweep(path), tmp_path / "fresh")
    from netsim.cli.options import records_csv

    assert (out / "results.csv").read_bytes() == records_csv(fresh.rows).encode()


def test_a_missing_optional_package_names_its_extra():
    from netsim._inputs.extras import MissingExtraError, require

    with pytest.raises(MissingExtraError, match=r"pip install 'netsim\[sweep\]'") as err:
        require("netsim_no_such_package.sub", "sweep", "--scheduler (a Dask cluster)")
    assert "'netsim_no_such_package'" in str(err.value) and err.value.exit_code == 2
