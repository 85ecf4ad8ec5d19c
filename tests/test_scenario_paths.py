"""Every path inside a scenario or topology file is relative to that file, whatever the
working directory: ``flows:``/``schedule:`` always were; ``topology:``, ``algorithm:`` (a
schedule file) and a topology file's ``generator:`` naming another file now are too."""

from __future__ import annotations

import json

from netsim.run import run_collective

from cli_helpers import run_main


def test_scenario_topology_algorithm_and_generator_are_relative_to_their_files(
        tmp_path, monkeypatch, capsys):
    folder = tmp_path / "study"
    (folder / "machines").mkdir(parents=True)
    (folder / "machines" / "base.yaml").write_text("generator: 'ring:4,bw=2GB/s'\n")
    # a file whose generator names another file beside it
    (folder / "machines" / "mine.yaml").write_text("generator: 'base.yaml,links=2'\n")
    code, out, err = run_main(["export", "msccl", "allreduce", "--topo", "ring:4",
                               "--algo", "ring", "--size", "1MiB",
                               "-o", str(folder / "ar.xml")], capsys)
    assert code == 0, err
    (folder / "s.yaml").write_text(
        "name: s\njobs:\n  - kind: collective\n    topology: machines/mine.yaml\n"
        "    op: allreduce\n    algorithm: ar.xml\n    size: 1MB\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, err = run_main(["run", str(folder / "s.yaml"), "--format", "json"], capsys)
    assert code == 0, err
    record = json.loads(out)["records"][0]
    # the scenario ran the exported ring on ring:4 with 2 links of 2 GB/s per neighbour
    expected = run_collective("allreduce", "ring:4,bw=2GB/s,links=2", "ring", "1MB").time_s
    assert record["time_s"] == expected
