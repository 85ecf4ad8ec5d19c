"""One number per question: the same collective through every door gives the same time.

`coll`, `compare`, a scenario file and the Python API share one runner and one default for
the per-message overhead (the machine's calibration), so a calibrated machine (dgx-h100,
alpha 3.4 us; t3000 with its fitted alpha) answers identically whichever way it is asked.
"""

from __future__ import annotations

import json

import pytest

from netsim.cli import main
from netsim.run import run_collective


def _json(capsys, *argv) -> dict | list:
    capsys.readouterr()
    try:
        main(list(argv))
    except SystemExit as exit_:
        assert exit_.code in (0, None)
    return json.loads(capsys.readouterr().out)


def _records(doc):
    return doc["records"] if isinstance(doc, dict) else doc


@pytest.mark.parametrize("topo, algo, size", [("dgx-h100", "ring", "1MiB"),
                                              ("t3000,links=1", "tt_ring", "4MiB"),
                                              ("mesh:4x4", "auto", "64KiB")])
def test_coll_compare_scenario_and_python_agree(topo, algo, size, capsys, tmp_path):
    python = run_collective("allreduce", topo, algo, size).time_s
    coll = _records(_json(capsys, "coll", "allreduce", "--topo", topo, "--algo", algo,
                          "--size", size, "--format", "json"))
    compare = _records(_json(capsys, "compare", "allreduce", "--topo", topo, "--algo", algo,
                             "--size", size, "--format", "json"))
    scenario = tmp_path / "one.yaml"
    scenario.write_text(f"name: one\njobs:\n  - kind: collective\n    topology: '{topo}'\n"
                        f"    op: allreduce\n    algorithm: {algo}\n    size: {size}\n")
    run = _records(_json(capsys, "run", str(scenario), "--format", "json"))
    times = {"python": python, "coll": coll[0]["time_s"], "compare": compare[0]["time_s"],
             "scenario": run[0]["time_s"]}
    assert len(set(times.values())) == 1, times


def test_the_calibrated_alpha_is_in_every_answer(capsys):
    # dgx-h100's calibration carries alpha = 3.4 us: no door may drop it.
    with_alpha = run_collective("allreduce", "dgx-h100", "ring", "1MiB").time_s
    without = run_collective("allreduce", "dgx-h100", "ring", "1MiB", alpha=0.0).time_s
    assert with_alpha > without + 14 * 3.4e-6 * 0.99     # 2 (p-1) = 14 steps of one alpha
    compare = _records(_json(capsys, "compare", "allreduce", "--topo", "dgx-h100", "--algo",
                             "ring", "--size", "1MiB", "--format", "json"))
    assert compare[0]["time_s"] == with_alpha
