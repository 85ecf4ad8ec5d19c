"""The default algorithm is what the machine's own library runs (presets' ``library:``).

Every door (coll, compare, a scenario, the Python API) resolves ``default`` the same way;
generic specs have no library and run ``auto``; a bad ``library:`` block is one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from netsim.algorithms import OPS, algorithms_for
from netsim.run import library_of, resolve_default, run_collective
from netsim.topology import parse_topology

from cli_helpers import run_main

PRESETS = sorted(p.stem for p in (Path(__file__).parent.parent / "topologies").glob("*.yaml"))


@pytest.mark.parametrize("preset", PRESETS)
def test_every_library_names_algorithms_netsim_has(preset):
    topo = parse_topology(preset)
    library = library_of(topo)
    if library is None:
        pytest.skip(f"{preset} has no library block")
    assert library["name"] and library["source"]
    for op, name in library["algorithms"].items():
        assert op in OPS, f"{preset}: library names unknown op {op!r}"
        assert name in [a.name for a in algorithms_for(op)]
        assert resolve_default(op, topo, "default").algorithm == name


def test_nvidia_presets_default_to_nccl_and_generic_specs_to_auto():
    for preset in ("dgx-a100", "dgx-h100", "dgx-b200", "gb200-nvl72"):
        assert resolve_default("allreduce", parse_topology(preset), "default").algorithm == "nccl"
    assert resolve_default("allreduce", parse_topology("torus:4x4"), "default").algorithm == "auto"
    # a named algorithm is never replaced
    assert resolve_default("allreduce", parse_topology("dgx-h100"), "ring").algorithm == "ring"


def test_default_run_is_the_library_run_and_says_so():
    default = run_collective("allreduce", "dgx-h100", "default", "1MiB")
    named = run_collective("allreduce", "dgx-h100", "nccl", "1MiB")
    assert default.time_s == named.time_s
    assert default.record()["library"].startswith("NCCL")
    assert "library" not in named.record()
    # no library: the fastest candidate, and its record lists the candidates
    generic = run_collective("allreduce", "ring:4,bw=1GB/s", "default", "1MB")
    assert generic.time_s == run_collective("allreduce", "ring:4,bw=1GB/s", "auto", "1MB").time_s
    assert generic.record().get("candidates")


def test_coll_without_algo_runs_the_library_and_names_it(capsys):
    code, out, err = run_main(["coll", "allreduce", "--topo", "dgx-h100", "--size", "1GiB",
                               "--format", "json"], capsys)
    assert code == 0, err
    record = json.loads(out)["records"][0]
    assert record["algorithm"] == "nccl" and record["nccl"].startswith("nvls/")
    assert record["library"].startswith("NCCL")
    code, out, err = run_main(["coll", "allreduce", "--topo", "dgx-h100", "--size", "1GiB"],
                              capsys)
    assert code == 0 and "NCCL" in out.splitlines()[0]


def test_generic_spec_titles_say_ideal_links(capsys):
    code, out, _ = run_main(["coll", "allreduce", "--topo", "mesh:4x4", "--size", "1MiB"], capsys)
    assert code == 0 and "ideal links" in out.splitlines()[0]
    code, out, _ = run_main(["coll", "allreduce", "--topo", "mesh:4x4,lat=500ns", "--size",
                             "1MiB"], capsys)
    assert code == 0 and "ideal links" not in out.splitlines()[0]
    code, out, _ = run_main(["coll", "allreduce", "--topo", "mesh:4x4", "--size", "1MiB",
                             "--alpha", "1us"], capsys)
    assert code == 0 and "ideal links" not in out.splitlines()[0]


def test_compare_records_what_ran_and_marks_ideal_links(capsys, tmp_path):
    code, out, err = run_main(["compare", "allreduce", "--topo", "dgx-h100", "--topo",
                               "torus:4x4", "--sizes", "1KiB:1MiB:1024", "--format", "json",
                               "--plot", str(tmp_path / "c.png")], capsys)
    assert code == 0, err
    records = json.loads(out)["records"]
    dgx = [r for r in records if r["topology"] == "dgx-h100"]
    torus = [r for r in records if r["topology"] == "torus:4x4"]
    assert all(r["algorithm"] == "nccl" and r["nccl"] for r in dgx)
    assert all(r["algorithm"] != "auto" and r["ideal_links"] for r in torus)
    assert not any(r.get("ideal_links") for r in dgx)
    assert (tmp_path / "c.png").stat().st_size > 0


def test_library_options_go_to_the_algorithm_under_the_users(tmp_path):
    from netsim.algorithms import AlgoOptions

    path = tmp_path / "m.yaml"
    path.write_text("generator: 'dgx-h100'\n"
                    "library: {name: test, source: here, algorithms: {allreduce: nccl},\n"
                    "          options: {gpus_per_thread: 0}}\n")
    topo = parse_topology(str(path))
    mine = run_collective("allreduce", topo, "default", "8KiB")
    assert mine.record()["gpus_per_thread"] == 0
    theirs = run_collective("allreduce", topo, "default", "8KiB",
                            options=AlgoOptions(extra={"gpus_per_thread": 8}))
    assert theirs.record()["gpus_per_thread"] == 8


@pytest.mark.parametrize("block, expected", [
    ("{name: x, source: y, algorithms: {allreduce: nosuch}}", "library.algorithms.allreduce"),
    ("{name: x, source: y, algorithms: {allreduce: ring}, colour: red}", "library.colour"),
    ("{name: x, algorithms: {allreduce: ring}}", "library.source"),
])
def test_a_bad_library_block_is_one_line(block, expected, tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(f"generator: 'ring:4'\nlibrary: {block}\n")
    code, out, err = run_main(["coll", "allreduce", "--topo", str(path), "--size", "1MiB"],
                              capsys)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0] and str(path) in lines[0]


def test_scenario_collective_jobs_default_to_the_library(tmp_path, capsys):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\njobs:\n  - kind: collective\n    topology: dgx-h100\n"
                        "    op: allreduce\n    size: 1MiB\n")
    code, out, err = run_main(["run", str(scenario), "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    record = doc["records"][0]
    assert record["algorithm"] == "nccl"
    assert record["time_s"] == run_collective("allreduce", "dgx-h100", "nccl", "1MiB").time_s
