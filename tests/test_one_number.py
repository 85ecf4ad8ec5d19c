"""One number per question: the same collective through every door gives the same time.

`coll`, `compare`, `place` (one group), a scenario file and the Python API share one runner
(or, for `place`, the same schedules), one default for the per-message overhead and the
reduction rate (the machine's calibration), one default rank order (auto: the physical
ring) and one fabric choice (tt_ring on the ring fabric of t3000's `fabric: auto`), so a
calibrated machine answers identically whichever way it is asked.
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
                                              ("mesh:4x4", "auto", "64KiB"),
                                              ("torus:4x4", "ring", "1MiB"),
                                              ("torus:8x8", "bidir_ring", "32MiB")])
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
    ranks = str(coll[0]["ranks"])
    place = _records(_json(capsys, "place", "--topo", topo, "--tp", ranks, "--tp-bytes", size,
                           "--algo", algo, "--strategies", "row_major", "--format", "json"))
    times = {"python": python, "coll": coll[0]["time_s"], "compare": compare[0]["time_s"],
             "scenario": run[0]["time_s"], "place": place[0]["step_s"]}
    assert len(set(times.values())) == 1, times


def test_one_axis_run_through_every_door(capsys, tmp_path):
    """Every line of a grid axis at once (--axis): the slowest line's time, and each line's
    times, are the same from coll, compare, a scenario and the Python API."""
    topo, size = "galaxy-wh", "1MiB"
    python = run_collective("allgather", topo, "tt_line", size, axis=1)
    coll = _records(_json(capsys, "coll", "allgather", "--topo", topo, "--algo", "tt_line",
                          "--axis", "1", "--size", size, "--format", "json"))
    compare = _records(_json(capsys, "compare", "allgather", "--topo", topo, "--algo",
                             "tt_line", "--axis", "1", "--size", size, "--format", "json"))
    scenario = tmp_path / "axis.yaml"
    scenario.write_text(f"name: axis\njobs:\n  - kind: collective\n    topology: {topo}\n"
                        f"    op: allgather\n    algorithm: tt_line\n    size: {size}\n"
                        f"    axis: 1\n")
    run = _records(_json(capsys, "run", str(scenario), "--format", "json"))
    for record in (coll[0], compare[0], run[0]):
        assert record["time_s"] == python.time_s
        assert record["group_times"] == python.record()["group_times"]
    assert python.time_s == max(python.group_times) and len(python.group_times) == 8


def test_the_calibrated_alpha_is_in_every_answer(capsys):
    # dgx-h100's calibration carries alpha = 3.4 us: no door may drop it.
    with_alpha = run_collective("allreduce", "dgx-h100", "ring", "1MiB").time_s
    without = run_collective("allreduce", "dgx-h100", "ring", "1MiB", alpha=0.0).time_s
    assert with_alpha > without + 14 * 3.4e-6 * 0.99     # 2 (p-1) = 14 steps of one alpha
    compare = _records(_json(capsys, "compare", "allreduce", "--topo", "dgx-h100", "--algo",
                             "ring", "--size", "1MiB", "--format", "json"))
    assert compare[0]["time_s"] == with_alpha
