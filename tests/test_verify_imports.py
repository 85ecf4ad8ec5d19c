"""Imported schedules (JSON schedule files, MSCCL XML) are checked at load for the
collective they are used as, through every door (coll, compare, scenarios, synth --schedule).

Before the check, a one-send file answered an all-reduce in 2.6 us at 700 % of the bound,
and an MSCCL file without threadblocks in 0 s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import run_main
from netsim.algorithms import OPS, AlgoOptions, algorithms_for
from netsim.algorithms.verify import check_import, flow_problems
from netsim.errors import ScheduleError
from netsim.schedule import ScheduleBuilder
from netsim.topology import parse_topology

CORPUS = Path(__file__).parent / "corpus"
COLLECTIVES = Path(__file__).parent.parent / "collectives"

#: (argv, substrings of the one error line); every case exits 2.
REFUSED = [
    (["coll", "allreduce", "--topo", "mesh:2x4", "--size", "1MiB", "--algo",
      "{corpus}/schedule/one-send-allreduce.json"],
     ["one-send-allreduce.json: not an allreduce on 8 ranks", "rank 0 never receives the data "
      "of ranks 1, 2, 3, 4, ... (7 ranks)"]),
    (["coll", "allreduce", "--topo", "mesh:2x2", "--size", "1MiB", "--algo",
      "{corpus}/schedule/msccl-no-threadblocks.xml"],
     ["msccl-no-threadblocks.xml: not an allreduce on 4 ranks", "rank 0 never receives"]),
    (["coll", "allreduce", "--topo", "mesh:2x4", "--size", "1MiB", "--algo",
      "{corpus}/schedule/msccl-nchunks-1e20.xml"],
     ["msccl-nchunks-1e20.xml: algo: nchunksperloop=100000000000000000000",
      "limit of 1048576"]),
    (["coll", "allreduce", "--topo", "mesh:2x4", "--size", "1MiB", "--algo",
      "{corpus}/schedule/msccl-nchunks-too-many.xml"],
     ["msccl-nchunks-too-many.xml: not an allreduce on 8 ranks", "rank 0 ends without piece 8"]),
    (["coll", "allreduce", "--topo", "mesh:2x3", "--size", "1MiB", "--algo",
      str(COLLECTIVES / "allgather-bruck-6.json")],
     ["allgather-bruck-6.json: not an allreduce on 6 ranks", "rank 0 receives 873813 bytes",
      "at least 1.04858e+06"]),
    (["run", "{corpus}/scenario/schedule-not-an-allreduce.yaml"],
     ["schedule-not-an-allreduce.yaml: jobs[0]", "one-send-allreduce.json: not an allreduce",
      "line 4"]),
    (["synth", "allreduce", "--topo", "mesh:2x4", "--size", "1MiB", "--schedule",
      "{corpus}/schedule/one-send-allreduce.json"],
     ["one-send-allreduce.json: not an allreduce on 8 ranks"]),
]


@pytest.mark.parametrize("argv, expect", REFUSED, ids=[Path(a[-1]).name for a, _ in REFUSED])
def test_a_schedule_that_does_not_perform_the_collective_is_refused(argv, expect, tmp_path,
                                                                   capsys):
    out = tmp_path / "out.txt"
    argv = [a.replace("{corpus}", str(CORPUS)) for a in argv]
    argv += [] if argv[0] == "synth" else ["-o", str(out)]      # synth's -o writes a schedule
    code, _, err = run_main(argv, capsys)
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("netsim: error: "), err
    assert not [text for text in expect if text not in lines[0]], lines[0]
    assert code == 2 and not out.exists()


def test_compare_shows_the_refusal_instead_of_a_time(capsys):
    code, out, _ = run_main(["compare", "allreduce", "--topo", "mesh:2x4", "--size", "1MiB",
                             "--algo", "ring", "--algo",
                             str(CORPUS / "schedule" / "one-send-allreduce.json"),
                             "--format", "csv"], capsys)
    assert code == 0
    row = out.splitlines()[2]
    assert "not an allreduce" in row and ",,,," in row       # no time, no bandwidth


@pytest.mark.parametrize("path, op, topo", [
    ("allreduce-ring-8.json", "allreduce", "mesh:2x4"),
    ("allreduce-halving_doubling-8.json", "allreduce", "mesh:2x4"),
    ("allgather-bruck-6.json", "allgather", "mesh:2x3"),
    ("msccl-ring-allreduce-8.xml", "allreduce", "mesh:2x4"),
    ("msccl-allpairs-allreduce-8.xml", "allreduce", "mesh:2x4"),
    ("msccl-hierarchical-allgather-8.xml", "allgather", "mesh:2x4"),
])
def test_the_catalogue_files_pass_and_stay_above_their_bound(path, op, topo, capsys):
    code, out, err = run_main(["coll", op, "--topo", topo, "--sizes", "1KiB,1MiB", "--algo",
                               str(COLLECTIVES / path), "--format", "csv"], capsys)
    assert code == 0, err
    for row in out.splitlines()[1:]:
        efficiency = float(row.split(",")[10])
        assert 0 < efficiency <= 1 + 1e-9


def _built(topo: str, n: int):
    """Every built-in schedule on n ranks of ``topo``: (op, name, schedule, root)."""
    machine = parse_topology(topo)
    for op in OPS:
        for algo in algorithms_for(op):
            options = AlgoOptions(topology=machine, root=1 % n)
            if not algo.applies(n, options):
                continue
            try:
                schedule = algo.build(n, 3e6, options)
            except Exception:       # noqa: BLE001 - needs what this machine lacks
                continue
            yield op, algo.name, schedule, 1 % n


@pytest.mark.parametrize("topo, n", [("mesh:2x4", 2), ("mesh:2x4", 3), ("mesh:2x4", 8),
                                     ("torus:4x4", 16)])
def test_the_flow_check_never_refuses_a_built_in_algorithm(topo, n):
    """Its conditions are necessary ones: every correct schedule meets them."""
    checked = 0
    for op, name, schedule, root in _built(topo, n):
        schedule.meta.setdefault("size", 3e6)
        assert flow_problems(schedule, op, n, root=root) == [], (op, name)
        checked += 1
    assert checked >= 10


def _star(n: int, op: str, size: float, skip: int | None = None):
    """Everyone sends its whole buffer to everyone (a valid all-reduce/all-gather)."""
    b = ScheduleBuilder(n, meta={"size": size})
    for a in range(n):
        for c in range(n):
            if a != c and (a, c) != (skip, 0):
                b.send(a, c, size if op == "allreduce" else size / n)
    return b.build()


@pytest.mark.parametrize("op", ["allreduce", "allgather"])
def test_a_missing_rank_pair_is_named(op):
    check_import(_star(4, op, 4e6), op, 4, source="star.json")
    with pytest.raises(ScheduleError, match=r"^star\.json: .*rank 0 never receives the data "
                                            r"of rank 2 "):
        check_import(_star(4, op, 4e6, skip=2), op, 4, source="star.json")


def test_data_must_arrive_before_it_is_forwarded():
    """0 -> 1 and 1 -> 2 in parallel carry nothing of rank 0 to rank 2; in a chain they do."""
    for chained in (False, True):
        b = ScheduleBuilder(3, meta={"size": 1e6})
        first = b.send(0, 1, 1e6)
        b.send(1, 2, 1e6, [first] if chained else [])
        found = flow_problems(b.build(), "broadcast", 3)
        assert found == ([] if chained else
                         ["rank 2 never receives the data of rank 0 (no chain of sends "
                          "brings it)"])


def test_too_few_bytes_are_refused_with_the_floor():
    b = ScheduleBuilder(2, meta={"size": 1e6})
    b.send(0, 1, 0.5e6)
    b.send(1, 0, 1e6)
    assert flow_problems(b.build(), "allreduce", 2) == [
        "rank 1 receives 500000 bytes, but an allreduce of 1e+06 bytes on 2 ranks must bring "
        "it at least 1e+06"]
