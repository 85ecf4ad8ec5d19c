"""The same point gives the same bits alone, inside a size sweep, and in a resumed sweep.

What made them differ: the symmetry search runs on numpy or compiled depending on what the
process did before (numba imported yet or not), and the two numbered their classes
differently; the quotient run visits classes in id order, so the last bit of a time could
change (allreduce direct 1MiB on galaxy-wh: 0x1.b86968bf1bf19p-14 s alone, ...18p-14 after
a 64KiB run in the same process).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from netsim.engine import kernel, symmetry
from netsim.run.collective import run_collective

CASES = [
    ("allreduce", "galaxy-wh", "direct", "1MiB"),
    ("allreduce", "galaxy-wh", "auto", "3MiB"),
    ("allgather", "galaxy-wh", "ring", "1MiB"),
    ("allreduce", "torus:4x4,bw=50GB/s,lat=1us", "halving_doubling", "16MiB"),
    ("allreduce", "dgx-h100", "default", "64MiB"),
]


def _time(case, search, monkeypatch) -> float:
    op, topo, algo, size = case
    monkeypatch.setattr(symmetry, "_recalled", [])       # searched, not recalled
    if search == "numpy":
        monkeypatch.setattr(symmetry, "_compiled", lambda work: None)
    else:
        monkeypatch.setattr(symmetry, "COMPILED_AFTER", 0)
    return run_collective(op, topo, algo, size).time_s


@pytest.mark.skipif(not kernel.AVAILABLE, reason="needs numba (the fast extra)")
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1].split(',')[0]}-{c[2]}")
def test_numpy_and_compiled_symmetry_searches_give_the_same_bits(case, monkeypatch):
    with monkeypatch.context() as patch:
        compiled = _time(case, "compiled", patch)
    with monkeypatch.context() as patch:
        numpy = _time(case, "numpy", patch)
    assert numpy.hex() == compiled.hex()


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
