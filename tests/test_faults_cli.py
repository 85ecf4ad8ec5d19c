"""Faulty machines from the command line and from scenario files, against hand counts.

``scenarios/dead-link.yaml`` is run here too: the 2-rank case is checked to the last digit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from netsim.cli import main
from netsim.run.scenarios.scenario import load_scenario, run_scenario
from netsim.topology import parse_topology

ROOT = Path(__file__).resolve().parent.parent

# a -> b directly (10 GB/s) or a -> c -> b (5 GB/s), 1 us per link.
DIAMOND = {"links": [
    {"id": "ab", "src": "a", "dst": "b", "bandwidth": "10GB/s", "latency": "1us"},
    {"id": "ac", "src": "a", "dst": "c", "bandwidth": "5GB/s", "latency": "1us"},
    {"id": "cb", "src": "c", "dst": "b", "bandwidth": "5GB/s", "latency": "1us"}],
    "flows": [{"id": "x", "src": "a", "dst": "b", "bytes": "1GB"}]}


def run_cli(capsys, *argv) -> str:
    capsys.readouterr()
    main(list(argv))
    return capsys.readouterr().out


def test_flows_fail_link_mid_run_moves_the_rest_the_long_way(tmp_path, capsys):
    path = tmp_path / "diamond.json"
    path.write_text(json.dumps(DIAMOND))
    doc = json.loads(run_cli(capsys, "flows", str(path), "--format", "json",
                             "--fail-link", "ab@40ms"))
    # drains at 10 GB/s from 1 us to 40 ms, then after 2 us more latency at 5 GB/s
    left = 1e9 - 10e9 * (0.04 - 1e-6)
    assert doc["makespan"] == pytest.approx(0.04 + 2e-6 + left / 5e9, rel=1e-12)
    assert doc["faults"] == [{"fault": "fail ab @40ms", "time_s": 0.04, "links": 1,
                              "rerouted_flows": 1}]
    links = {row["id"]: row["bytes"] for row in doc["links"]}
    assert links["ab"] == pytest.approx(1e9 - left) and links["cb"] == pytest.approx(left)


def test_flows_degrade_link_slows_it_from_the_start(tmp_path, capsys):
    path = tmp_path / "diamond.json"
    path.write_text(json.dumps(DIAMOND))
    doc = json.loads(run_cli(capsys, "flows", str(path), "--format", "json",
                             "--degrade-link", "ab=0.25"))
    assert doc["makespan"] == pytest.approx(1e-6 + 1e9 / 2.5e9, rel=1e-12)
    assert doc["faults"][0]["rerouted_flows"] == 0


def test_coll_records_show_the_faults_and_the_rerouted_flows(capsys):
    args = ["coll", "allreduce", "--topo", "ring:6,bw=10GB/s", "--algo", "ring",
            "--size", "6MB", "--format", "json"]
    healthy = json.loads(run_cli(capsys, *args))["records"][0]
    faulty = json.loads(run_cli(capsys, *args, "--fail-link", "n0<->n1",
                                "--degrade-link", "n3->n4=0.5@10us"))["records"][0]
    assert "faults" not in healthy
    assert faulty["faults"] == "fail n0<->n1; degrade n3->n4 x0.5 @10us"
    assert faulty["rerouted"] > 0
    assert faulty["time_s"] > healthy["time_s"]
    table = run_cli(capsys, *args[:-2], "--fail-link", "n0<->n1")
    assert "rerouted" in table and "fail n0<->n1" in table


def test_scenario_faults_in_the_header_apply_to_every_job_and_add_to_the_jobs(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("""name: faulty
topology: ring:4,bw=10GB/s
faults: [{link: "n0<->n1", at: 1us}]
jobs:
  - {kind: traffic, pattern: shift, size: 1MB, name: a}
  - kind: traffic
    pattern: shift
    size: 1MB
    name: b
    faults: [{degrade: "n2->n3", factor: 0.5}]
  - {kind: collective, op: allreduce, algorithm: ring, size: 4MB, name: c}
""")
    outcome = run_scenario(load_scenario(path))
    rows = {r["job"]: r for r in outcome.records}
    assert rows["a"]["faults"] == "fail n0<->n1 @1us"
    assert rows["b"]["faults"] == "fail n0<->n1 @1us; degrade n2->n3 x0.5"
    assert rows["c"]["faults"] == "fail n0<->n1 @1us" and rows["c"]["rerouted"] > 0
    # command-line faults come first and apply to every job as well
    more = run_scenario(load_scenario(path), faults=_cli_faults("n1->n2=0.5"))
    assert {r["faults"].split("; ")[0] for r in more.records} == {"degrade n1->n2 x0.5"}


def _cli_faults(text):
    from netsim.run.faultspec import parse_fault_option

    return [parse_fault_option(text, "degrade")]


def test_run_fail_link_option_reaches_every_job(capsys):
    scenario = ROOT / "tests" / "corpus" / "scenario" / "valid-mesh.yaml"
    rows = json.loads(run_cli(capsys, "run", str(scenario), "--format", "json",
                              "--fail-link", "1_1<->1_2@1us"))["records"]
    assert len(rows) == 2 and all(r["faults"] == "fail 1_1<->1_2 @1us" for r in rows)
    assert all(r["rerouted"] > 0 for r in rows)


def test_dead_link_scenario_against_a_hand_count():
    outcome = run_scenario(load_scenario(ROOT / "scenarios" / "dead-link.yaml"))
    rows = {r["job"]: r for r in outcome.records}
    twins = [("pair-healthy", "pair-dead-plane"), ("galaxy-healthy", "galaxy-dead-plane"),
             ("galaxy-healthy", "galaxy-dead-plane-mid-run"),
             ("galaxy-healthy", "galaxy-slow-chip"),
             ("fattree-healthy", "fattree-dead-uplink")]
    for healthy, faulty in twins:
        assert "faults" not in rows[healthy] and rows[faulty]["faults"]
        assert rows[faulty]["time_s"] > rows[healthy]["time_s"] * 1.05, (healthy, faulty)
    # 2 ranks on 0_0 and 0_1, S/2 each way per step over 4 planes of b bytes/s: S/(8b) a
    # step. With plane 0 dead its quarter spreads over planes 1-3 as the router spreads a
    # send over the planes of a healthy machine: S/(6b) a step, so 2 steps x S/(24b)
    # more, all else (latency, alpha, the reduction) equal. Plane 0 carries nothing; the
    # 2 steps x 2 directions re-route 4 sub-flows.
    galaxy = parse_topology("galaxy-wh")
    b = float(galaxy.bandwidth[galaxy.link("0_0->0_1")])
    size = 64 * 2**20
    extra = rows["pair-dead-plane"]["time_s"] - rows["pair-healthy"]["time_s"]
    assert extra == pytest.approx(size / (12 * b), rel=1e-9)
    assert rows["pair-dead-plane"]["rerouted"] == 4
    dead = outcome.jobs[1].results["pair-dead-plane 64MiB"]
    assert dead.link_bytes[galaxy.link("0_0->0_1")] == 0
    assert dead.link_bytes[galaxy.link("0_0->0_1#1")] == pytest.approx(size / 3)
    # failing later costs no more than failing from the start (here the same: the ring's
    # last steps through that cable set the end either way); slowing a chip re-routes nothing
    assert rows["galaxy-dead-plane-mid-run"]["time_s"] <= rows["galaxy-dead-plane"]["time_s"]
    assert rows["galaxy-slow-chip"]["rerouted"] == 0



def test_auto_with_a_dead_switch_skips_in_network_reduction_and_picks_among_the_rest(capsys):
    """A dead NVSwitch leaves in-network reduction no path to it (a routing error): ``auto``
    drops that candidate and picks the fastest of the others, with the time of running that
    one by name; named, innetwork still fails with the one-line routing error."""
    args = ["coll", "allreduce", "--topo", "dgx-h100", "--size", "64MiB",
            "--fail-link", "node:sw0", "--format", "json"]
    best = json.loads(run_cli(capsys, *args, "--algo", "auto"))["records"][0]
    assert best["algorithm"] != "innetwork"
    assert "innetwork" not in [c["algorithm"] for c in best["candidates"]]
    alone = json.loads(run_cli(capsys, *args, "--algo", best["algorithm"]))["records"][0]
    assert best["time_s"] == alone["time_s"]
    with pytest.raises(SystemExit) as exit_:
        run_cli(capsys, *args, "--algo", "innetwork")
    assert exit_.value.code == 1
    assert "the failed links disconnect gpu0 from sw0" in capsys.readouterr().err
