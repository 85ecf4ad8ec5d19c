"""The same point gives the same bits alone, inside a size sweep, and in a resumed sweep.

The symmetry search runs on numpy or compiled (by its size); the quotient run visits
classes in id order, so both must number their classes alike for the last bit of a time
not to depend on which ran.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from netsim.engine import EngineConfig, kernel, simulate

CASES = [
    ("allreduce", "galaxy-wh", "direct", "1MiB"),
    ("allreduce", "galaxy-wh", "auto", "3MiB"),
    ("allgather", "galaxy-wh", "ring", "1MiB"),
    ("allreduce", "torus:4x4,bw=50GB/s,lat=1us", "halving_doubling", "16MiB"),
    ("allreduce", "dgx-h100", "default", "64MiB"),
]
#: Schedules whose symmetry search both ways must give the same bits.
SEARCHED = [
    ("allreduce", "galaxy-wh", "direct", 2**20),
    ("allgather", "galaxy-wh", "ring", 2**20),
    ("allreduce", "torus:4x4,bw=50GB/s,lat=1us", "halving_doubling", 16 * 2**20),
    ("alltoall", "mesh:4x4", "direct", 2**20),
]


@pytest.mark.skipif(not kernel.AVAILABLE, reason="needs numba (the fast extra)")
@pytest.mark.parametrize("case", SEARCHED, ids=lambda c: f"{c[0]}-{c[1].split(',')[0]}-{c[2]}")
def test_numpy_and_compiled_symmetry_searches_give_the_same_bits(case):
    from netsim.algorithms import build_schedule
    from netsim.algorithms.options import AlgoOptions
    from netsim.topology import parse_topology

    op, spec, algo, size = case
    topo = parse_topology(spec)
    nodes = np.asarray(topo.endpoints)
    schedule = build_schedule(op, algo, nodes.size, size,
                              AlgoOptions(topology=topo, placement=nodes))
    runs = [simulate(topo, schedule, nodes, config=EngineConfig(symmetry_compiled_from=at,
                                                               symmetry_min_subflows=0))
            for at in (None, 0)]
    assert runs[0].meta["engine"]["symmetry"]["classes"]
    assert runs[0].makespan.hex() == runs[1].makespan.hex()
    assert runs[0].op_finish.tobytes() == runs[1].op_finish.tobytes()


_ALONE = """
import json, sys
from netsim.run.collective import run_collective, run_sweep
op, topo, algo, sizes = json.loads(sys.argv[1])
if len(sizes) == 1:
    print(json.dumps([run_collective(op, topo, algo, sizes[0]).time_s.hex()]))
else:
    print(json.dumps([run.time_s.hex() for run in run_sweep(op, topo, algo, sizes)]))
"""


def _fresh(op, topo, algo, sizes) -> list[str]:
    """Times (hex) from a fresh process: nothing imported or cached before."""
    out = subprocess.run([sys.executable, "-c", _ALONE, json.dumps([op, topo, algo, sizes])],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("case", CASES[:3], ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_a_size_alone_equals_the_same_size_in_a_sweep_bit_for_bit(case):
    op, topo, algo, size = case
    sweep = _fresh(op, topo, algo, ["64KiB", "256KiB", size, "4MiB"])
    assert _fresh(op, topo, algo, [size]) == [sweep[2]]


def test_a_resumed_sweep_gives_the_bits_of_a_fresh_one(tmp_path):
    from netsim.run import load_sweep, run_sweep_points

    (tmp_path / "s.yaml").write_text(
        "name: s\njobs:\n  - kind: collective\n    op: allreduce\n    topology: galaxy-wh\n"
        "    algorithm: direct\n    size: 1MiB\nsweep:\n  grid:\n"
        "    jobs[0].size: [64KiB, 1MiB, 3MiB]\n")
    fresh = run_sweep_points(load_sweep(tmp_path / "s.yaml"), tmp_path / "a")
    out = tmp_path / "b"
    run_sweep_points(load_sweep(tmp_path / "s.yaml"), out)
    stored = sorted((out / "points").glob("*.json"))
    stored[0].unlink()                      # as if the sweep was stopped before it
    resumed = run_sweep_points(load_sweep(tmp_path / "s.yaml"), out)
    assert (resumed.computed, resumed.reused) == (1, 2)
    assert [r["time_s"].hex() for r in resumed.rows] == [r["time_s"].hex() for r in fresh.rows]
    alone = _fresh("allreduce", "galaxy-wh", "direct", ["1MiB"])
    assert fresh.rows[1]["time_s"].hex() == alone[0]
