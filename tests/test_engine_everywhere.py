"""One engine configuration on every run: each command that simulates passes the
EngineConfig it builds from the command line (``--max-memory`` included) down to the
engine, ``Result.meta["engine"]`` reaches its JSON and ``-v``, and the memory budget never
changes an answer: the same input gives byte-identical JSON under 4 GiB and 24 GiB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_main
from netsim.engine import EngineConfig

ROOT = Path(__file__).resolve().parents[1]
INCAST = str(ROOT / "examples" / "flows" / "incast.json")
# the reference path: the numpy loop solving cold, no symmetry search. A run that gets
# this config says so in its meta; one that gets the defaults says "warm".
REFERENCE = EngineConfig(loop="reference")

# Three job kinds a scenario runs through three doors of the run layer (traffic, a
# collective sweep, a placement study), small enough for a fast test.
SCENARIO = """\
name: small
topology: mesh:2x4,bw=10GB/s,lat=1us
jobs:
  - kind: traffic
    name: shift
    pattern: shift
    size: 1MiB
  - kind: collective
    name: ring
    op: allreduce
    algorithm: ring
    sizes: [64KiB, 1MiB]
  - kind: placement
    name: tp-dp
    layout: {tp: 4, dp: 2}
    bytes: {tp: 4MB}
    strategies: row_major,snake
"""


def _scenario(tmp_path) -> str:
    path = tmp_path / "small.yaml"
    path.write_text(SCENARIO)
    return str(path)


COMMANDS = {
    "coll": lambda tmp: ["coll", "allreduce", "--topo", "mesh:2x4", "--size", "64KiB,1MiB",
                         "--algo", "ring"],
    "compare": lambda tmp: ["compare", "allgather", "--topo", "mesh:2x4", "--topo", "ring:8",
                            "--size", "1MiB", "--algo", "ring"],
    "place": lambda tmp: ["place", "--topo", "mesh:2x4,bw=10GB/s", "--tp", "4", "--dp", "2",
                          "--tp-bytes", "4MB", "--strategies", "row_major,interleaved"],
    "flows": lambda tmp: ["flows", INCAST],
    "run": lambda tmp: ["run", _scenario(tmp)],
}


def _engines(doc) -> list[dict]:
    """Every ``engine`` record anywhere in a JSON document."""
    if isinstance(doc, dict):
        return ([doc["engine"]] if isinstance(doc.get("engine"), dict) else []) + \
            [e for k, v in doc.items() if k != "engine" for e in _engines(v)]
    if isinstance(doc, list):
        return [e for v in doc for e in _engines(v)]
    return []


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_memory_budget_changes_no_byte_of_the_json(command, tmp_path, capsys):
    """The issue's Done-when: a machine with 4 GiB and one with 24 GiB give the same JSON
    (no command here writes a wall time into its JSON, so nothing is left out)."""
    argv = [*COMMANDS[command](tmp_path), "--format", "json"]
    outs = []
    for budget in ("4GiB", "24GiB"):
        code, out, err = run_main(["--max-memory", budget, *argv], capsys)
        assert code == 0, err
        outs.append(out)
    assert outs[0] == outs[1]
    engines = _engines(json.loads(outs[0]))
    assert engines and all(e["loop"] and e["solver"] for e in engines)


@pytest.mark.parametrize("command", ["place", "flows", "run", "plan"])
def test_verbose_names_the_engine_of_every_run(command, tmp_path, capsys):
    argv = (["plan", "llama3-8b", "--topo", "dgx-h100", "--batch", "8",
             "--layout", "tp=8,dp=1"] if command == "plan" else COMMANDS[command](tmp_path))
    code, out, err = run_main(["-v", *argv], capsys)
    assert code == 0, err
    lines = [line for line in err.splitlines() if "engine: loop" in line]
    expected = {"place": 2, "flows": 1, "run": 1 + 2 + 2, "plan": 1}[command]
    assert len(lines) == expected
    if command == "place":
        assert lines[0].startswith("netsim: INFO: row_major: engine: loop")
    assert "'loop'" not in out          # tables leave the record to -v, JSON and CSV


def _solvers(records) -> set:
    return {r["engine"]["solver"] for r in records}


def test_flows_and_scenarios_take_the_config_given(tmp_path):
    from netsim.run import load_scenario, run_scenario, simulate_flows
    from netsim.schedule import load_flow_file

    flowset = load_flow_file(INCAST)
    assert simulate_flows(flowset).meta["engine"]["solver"] == "warm"
    assert simulate_flows(flowset, engine=REFERENCE).meta["engine"]["solver"] == "cold"
    scenario = load_scenario(_scenario(tmp_path))
    records = run_scenario(scenario, engine=REFERENCE).records
    assert {r["job"] for r in records} == {"shift", "ring", "tp-dp"}
    assert _solvers(records) == {"cold"}
    assert _solvers(run_scenario(scenario).records) == {"warm"}


def test_placement_studies_and_chip_placements_take_the_config_given():
    from netsim.placement.noc import Operator, tensix_grid
    from netsim.run import PlacementStudy, compare_chip_placements, run_placement_study

    study = PlacementStudy(topology="mesh:2x4,bw=10GB/s", layout={"tp": 4, "dp": 2},
                           bytes={"tp": "4MB"}, strategies="row_major,interleaved")
    default = run_placement_study(study).records()
    reference = run_placement_study(study, engine=REFERENCE).records()
    assert _solvers(default) == {"warm"} and _solvers(reference) == {"cold"}
    # the same times whatever the path (the reference is what every path is tested against)
    assert [r["step_s"] for r in default] == pytest.approx([r["step_s"] for r in reference],
                                                           rel=1e-12)
    grid = tensix_grid(4, 4)
    ops = [Operator("a", 2, 2, 1e6, ("b",)), Operator("b", 2, 2)]
    scores = compare_chip_placements(grid, ops, ["adjacent"], engine=REFERENCE)
    assert _solvers([s.record() for s in scores]) == {"cold"}


def test_plan_takes_the_config_given():
    from netsim.planning import load_model
    from netsim.planning.search import plan
    from netsim.planning.step import TrainLayout
    from netsim.topology import parse_topology

    topo = parse_topology("dgx-h100")
    lay = TrainLayout(tp=8, batch=8)
    model = load_model("llama3-8b")
    assert plan(model, topo, batch=8, layout=lay).rows[0]["engine"]["solver"] == "warm"
    rows = plan(model, topo, batch=8, layout=lay, engine=REFERENCE).rows
    assert rows[0]["engine"]["solver"] == "cold"
    # layouts evaluated on an executor's workers get the same configuration
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        rows = plan(model, topo, batch=8, top=2, executor=pool, engine=REFERENCE).rows
    assert len(rows) == 2 and _solvers(rows) == {"cold"}


def test_synth_refuses_axis_and_nodes_in_one_line(capsys):
    for extra in (["--axis", "0"], ["--nodes", "0_0,0_1"]):
        code, out, err = run_main(["coll", "allgather", "--topo", "mesh:2x4", "--size", "1MiB",
                                   "--algo", "synth", *extra], capsys)
        assert code != 0 and "Traceback" not in err
        assert f"--algo synth synthesises for one group of ranks: {extra[0]} does not " \
               f"apply" in err and len(err.strip().splitlines()) == 1


def test_a_collective_runs_memory_checks_take_the_budget_from_its_engine_config():
    """check_scale and check_built read the request's EngineConfig, not process state: a
    Python caller's budget refuses the run before anything is built."""
    from netsim.budget import memory_budget
    from netsim.errors import ResourceError
    from netsim.run import run_collective

    assert memory_budget() > 2**20          # no --max-memory in this process
    with pytest.raises(ResourceError, match=r"allreduce ring on 1024 ranks .* would need "
                                            r"about .* above the 1 MiB memory budget"):
        run_collective("allreduce", "torus:32x32", "ring", "1MiB",
                       engine=EngineConfig(memory_budget=2**20))
    small = run_collective("allreduce", "ring:8", "ring", "1MiB",
                           engine=EngineConfig(memory_budget=2**30))
    assert small.time_s > 0


def test_a_sweep_point_checks_memory_against_the_callers_budget():
    """A worker process has none of the caller's state: the budget comes with the point,
    for the checks of the engine and of everything before it."""
    from netsim.budget import memory_budget
    from netsim.run.sweep.runner import run_point

    doc = {"name": "s", "topology": "ring:4,bw=1GB/s",
           "jobs": [{"kind": "traffic", "size": "1MB"}]}
    assert run_point(doc, "s.yaml")["records"][0]["time_s"] == pytest.approx(0.002)
    refused = run_point(doc, "s.yaml", EngineConfig(memory_budget=1024))
    assert "would need about" in refused["error"] and "1 KiB --max-memory" in refused["error"]
    assert memory_budget() > 2**20          # the caller's budget again after the point


def test_a_workload_takes_the_config_given_and_every_row_names_it(tmp_path, capsys):
    from netsim.interop import CHAKRA_MISSING, have_chakra, write_workload
    from netsim.run import run_workload
    from netsim.schedule.traffic import shift

    if not have_chakra():
        pytest.skip(CHAKRA_MISSING)
    pattern = str(tmp_path / "shift.%d.et")
    write_workload(shift(4, 1e6), pattern)
    run = run_workload(pattern, "ring:4,bw=10GB/s", engine=REFERENCE)
    assert _solvers(run.rows) == {"cold"} and len(run.rows) == 4
    code, out, err = run_main(["-v", "run", "--workload", pattern, "--topo",
                               "ring:4,bw=10GB/s", "--format", "json"], capsys)
    assert code == 0, err
    assert _solvers(json.loads(out)["records"]) == {"warm"}
    assert sum("engine: loop" in line for line in err.splitlines()) == 1


@pytest.mark.parametrize("command", ["coll", "flows"])
def test_the_packet_model_names_its_engine_too(command, tmp_path, capsys):
    """A packet-model run is a run: its record names what ran (the packet loop, its
    switching mode, the packet hops it simulated) in the JSON and on -v."""
    argv = ([*COMMANDS["coll"](tmp_path)[:-2], "--algo", "ring", "--model", "packet",
             "--packet", "switching=cut-through"] if command == "coll"
            else ["flows", INCAST, "--model", "packet"])
    code, out, err = run_main(["-v", *argv, "--format", "json"], capsys)
    assert code == 0, err
    engines = _engines(json.loads(out))
    assert engines and all(e["loop"] == "packet" for e in engines)
    if command == "coll":
        assert all(e["solver"] == "cut-through packets (SimPy)" for e in engines)
    assert all(e["events"] > 0 and e["symmetry"]["flows"] > 0 for e in engines)
    lines = [line for line in err.splitlines() if "engine: packet model" in line]
    assert len(lines) == len(engines)
    assert f"{engines[0]['events']:,} packet hops" in lines[0]
