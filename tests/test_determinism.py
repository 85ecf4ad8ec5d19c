"""Same inputs and seed -> byte-identical JSON, run after run, process after process, whatever
PYTHONHASHSEED is (0, 1, random).

The inputs are chosen to exercise what could break it: ECMP hashing on a fat-tree, an
auto-selected algorithm (ties broken by registry order), a seeded random permutation, faults
that re-route flows mid-run, flow dependencies and release times.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from netsim.cli import main

SCENARIO = """name: determinism
topology: fattree:k=4,bw=10GB/s,lat=1us
seed: 7
jobs:
  - kind: traffic
    pattern: permutation
    size: 1MB
    faults: [{link: "edge0_0<->agg0_0", at: 50us}]
  - kind: collective
    op: allreduce
    ranks: 8
    size: 256KiB
    faults: [{degrade: "agg1_0->core0", factor: 0.5}, {node: "core3", at: 20us}]
  - {kind: collective, op: alltoall, algorithm: direct, size: 64KiB, topology: "torus:4x4"}
"""
FLOWS = """{"topology": "fattree:k=4,bw=10GB/s,lat=1us",
 "flows": [{"id": "a", "src": "h0", "dst": "h15", "bytes": "8MB"},
           {"id": "b", "src": "h1", "dst": "h14", "bytes": "8MB"},
           {"id": "c", "src": "h2", "dst": "h9", "bytes": "4MB", "deps": ["a"]},
           {"id": "d", "src": "h3", "dst": "h12", "bytes": "2MB", "start": "10us"}]}
"""
SEEDS = ("0", "1", "random")


@pytest.fixture(scope="module")
def commands(tmp_path_factory):
    folder = tmp_path_factory.mktemp("determinism")
    (folder / "scenario.yaml").write_text(SCENARIO)
    (folder / "flows.json").write_text(FLOWS)
    return {
        "coll": ["coll", "allreduce", "--topo", "fattree:k=4,bw=10GB/s,lat=1us", "--ranks", "8",
                 "--sizes", "64KiB:1MiB:16", "--fail-link", "edge1_0<->agg1_1@5us",
                 "--degrade-link", "agg0_0->core0=0.5", "--format", "json"],
        "run": ["run", str(folder / "scenario.yaml"), "--format", "json"],
        "flows": ["flows", str(folder / "flows.json"), "--fail-link", "agg0_1->core3@100us",
                  "--format", "json"],
    }


def in_process(argv: list[str], out: Path) -> bytes:
    main([*argv, "-o", str(out)])
    return out.read_bytes()


# Runs each command line through the console script's main(), in a fresh interpreter.
CHILD = """
import json, sys
from netsim.cli import main
for argv in json.loads(sys.argv[1]):
    main(argv)
"""


def in_children(commands: dict[str, list[str]], folder: Path) -> dict[tuple[str, str], bytes]:
    """Every command in one child process per PYTHONHASHSEED, 3 processes at a time."""
    def child(seed: str) -> None:
        argvs = [[*argv, "-o", str(folder / f"{name}-{seed}.json")]
                 for name, argv in commands.items()]
        done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(argvs)],
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stderr

    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(child, SEEDS))
    return {(name, seed): (folder / f"{name}-{seed}.json").read_bytes()
            for seed in SEEDS for name in commands}


@pytest.mark.slow
def test_json_is_byte_identical_across_runs_hash_seeds_and_processes(commands, tmp_path):
    here = {name: in_process(argv, tmp_path / f"{name}-a.json")
            for name, argv in commands.items()}
    again = {name: in_process(argv, tmp_path / f"{name}-b.json")
             for name, argv in commands.items()}
    assert again == here
    for (name, seed), output in in_children(commands, tmp_path).items():
        assert output == here[name], f"netsim {name} differs with PYTHONHASHSEED={seed}"
    # the outputs hold what they should: faults applied, flows re-routed
    coll, run, flows = (json.loads(here[name]) for name in ("coll", "run", "flows"))
    assert all(row["rerouted"] > 0 and row["candidates"] for row in coll["records"])
    assert [row.get("rerouted", 0) > 0 for row in run["records"]] == [True, True, False]
    assert flows["faults"][0]["rerouted_flows"] > 0
