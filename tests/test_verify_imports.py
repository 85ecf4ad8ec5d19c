"""Imported schedules (JSON schedule files, MSCCL XML) are checked at load for the
collective they are used as, through every door (coll, compare, scenarios, synth --schedule).

Before the check, a one-send file answered an all-reduce in 2.6 us at 700 % of the bound,
and an MSCCL file without threadblocks in 0 s.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    (["coll", "allreduce", "--topo", "mesh:2x4", "--size", "1MiB", "--schedule",
      "{corpus}/schedule/one-send-allreduce.json"],
     ["one-send-allreduce.json: not an allreduce on 8 ranks"]),
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


@pytest.mark.parametrize("argv, expect", REFUSED,
                         ids=[f"{a[0]}-{a[-2]}-{Path(a[-1]).name}" for a, _ in REFUSED])
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


# -- no result below its bound -------------------------------------

def test_a_run_below_its_bound_is_an_internal_error_not_an_answer():
    """An algorithm object is not checked like a file: if it cheats (one send for an
    all-reduce), the record is refused at build time instead of printing 700 %."""
    from netsim.algorithms import Algorithm
    from netsim.errors import SimulationError
    from netsim.run import run_collective

    def build(n, size, options):
        b = ScheduleBuilder(n, meta={"size": size})
        b.send(0, 1, size / n)
        return b.build()

    cheat = Algorithm("allreduce", "cheat", "one send", build)
    with pytest.raises(SimulationError, match=r"^internal error: allreduce cheat on 8 ranks "
                                              r"of 'mesh-2x4' took 2\.621 us, below its lower "
                                              r"bound of 14\.68 us \(injection\)"):
        run_collective("allreduce", "mesh:2x4", cheat, "1MiB")


def test_the_bound_check_allows_rounding_only():
    from netsim.algorithms.bounds import Bound
    from netsim.errors import SimulationError
    from netsim.run.collective import check_above_bound

    bound = Bound(1.0, "injection", "")
    check_above_bound("x", 1.0 - 1e-7, bound)               # rounding: within 1e-6
    check_above_bound("x", 1.0 - 1e-5, bound, steps=1e4)    # 2e-9 per event and flow
    for time in (1.0 - 1e-5, float("nan")):
        with pytest.raises(SimulationError, match="internal error: x took"):
            check_above_bound("x", time, bound)


# -- parameters checked up front -----------------------------------

@pytest.mark.parametrize("kwargs, message", [
    ({"overhead": float("nan")}, "overhead must be a finite time >= 0 s, got nan"),
    ({"overhead": float("inf")}, "overhead must be a finite time >= 0 s, got inf"),
    ({"overhead": -1e-6}, "overhead must be a finite time >= 0 s, got -1e-06"),
    ({"overhead": True}, "overhead must be a finite time >= 0 s, got True"),
    ({"overhead": [0.0, float("nan")]}, r"overhead\[1\] must be a finite time >= 0 s, got nan"),
    ({"not_before": [0.0, float("inf")]}, r"not_before\[1\] must be a finite time >= 0 s, "
                                          r"got inf"),
    ({"tolerance": float("nan")}, r"tolerance must be a number in \[0, 1\), got nan"),
])
def test_simulate_refuses_times_that_would_never_complete(kwargs, message):
    """overhead=nan would loop forever and inf would end in 'its dependencies never
    completed': both are refused up front, naming the value."""
    from netsim.engine import simulate
    from netsim.errors import InputError

    b = ScheduleBuilder(4)
    first = b.send(0, 1, 1e6)
    b.send(1, 2, 1e6, [first])
    with pytest.raises(InputError, match=f"^{message}$"):
        simulate(parse_topology("mesh:2x2"), b.build(), **kwargs)


@pytest.mark.parametrize("kwargs", [{"alpha": float("nan")}, {"alpha": float("inf")},
                                    {"alpha": True}, {"tolerance": float("nan")},
                                    {"tolerance": 1.0}, {"gamma": True},
                                    {"gamma": float("nan")}])
def test_run_collective_refuses_nan_inf_and_boolean_parameters(kwargs):
    """alpha=True ran with 1 s per message, gamma=True reduced at 1 B/s."""
    from netsim.errors import InputError
    from netsim.run import run_collective

    name = next(iter(kwargs))
    if name == "gamma":
        kwargs = {"options": AlgoOptions(gamma=kwargs["gamma"])}
    with pytest.raises(InputError, match=name):
        run_collective("allreduce", "mesh:2x2", "ring", "1MiB", **kwargs)


# -- booleans are not numbers --------------------------------------

@pytest.mark.parametrize("argv, expect", [
    (["run", "{corpus}/scenario/ranks-yes.yaml"],
     ["ranks-yes.yaml: jobs[0].ranks: expected a number, not a boolean", "got True", "line 5"]),
    (["topo", "{corpus}/topology/bandwidth-yes.yaml"],
     ["bandwidth-yes.yaml: links[0].bandwidth: expected a number, not a boolean", "got True",
      "line 5"]),
    (["run", "{corpus}/scenario/schedule-fraction-bool.yaml"],
     ["fraction-bool.json: ops[0].fraction: expected a number, not a boolean"]),
])
def test_a_boolean_where_a_number_is_due_is_refused(argv, expect, tmp_path, capsys):
    """``ranks: yes`` ran one rank; ``bandwidth: yes`` made a 1 B/s link."""
    out = tmp_path / "out.txt"
    argv = [a.replace("{corpus}", str(CORPUS)) for a in argv] + ["-o", str(out)]
    code, _, err = run_main(argv, capsys)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("netsim: error: "), err
    assert not [text for text in expect if text not in lines[0]], lines[0]
    assert code == 2 and not out.exists()


def test_boolean_fields_still_take_booleans():
    from netsim._inputs.schema import NoBoolNumbers

    class Model(NoBoolNumbers):
        flag: bool = False
        either: int | bool = 0
        count: int | None = None

    assert Model(flag=True, either=True).flag is True
    assert Model(count=3).count == 3
    with pytest.raises(ValueError, match="expected a number, not a boolean"):
        Model(count=False)


@pytest.mark.parametrize("value", [1e20, 2**70, float("nan"), float("inf"), -1, True])
def test_a_chakra_comm_size_out_of_range_is_refused(value):
    """A trace's comm_size of 1e20 bytes (or nan, inf, negative, a bool) is refused, not
    built as a collective of that size."""
    from netsim.interop.chakra import _size

    with pytest.raises(ScheduleError, match=r"^rank0\.et: node 3: comm_size=.* must be a "
                                            r"number of bytes from 0 to 1 EiB$"):
        _size({"comm_size": value}, "rank0.et: node 3", True)
    assert _size({"comm_size": 2**60}, "rank0.et: node 3", True) == 2.0**60


def _without(schedule, drop: set[int], cut: set[int]):
    """``schedule`` without the ops in ``drop`` (their dependants wait for their
    dependencies instead) and with the dependencies of the ops in ``cut`` removed."""
    b = ScheduleBuilder(schedule.num_ranks, meta=schedule.meta)
    new: dict[int, list[int]] = {}            # old op -> the new ops it stands for
    for i in range(schedule.num_ops):
        deps = sorted({d for old in schedule.deps(i).tolist() for d in new[old]})
        if i in cut:
            deps = []
        if i in drop:
            new[i] = deps
            continue
        kind = int(schedule.kind[i])
        if kind == 0:
            op = b.send(int(schedule.src[i]), int(schedule.dst[i]), float(schedule.nbytes[i]),
                        deps, data=schedule.data.get(i))
        elif kind == 1:
            op = b.compute(int(schedule.src[i]), float(schedule.seconds[i]), deps)
        else:
            op = b.barrier(deps)
        new[i] = [op]
    return b.build()


@pytest.mark.parametrize("op, algorithm, n", [("allreduce", "ring", 5),
                                               ("allreduce", "recursive_doubling", 8),
                                               ("allgather", "ring", 4),
                                               ("broadcast", "binomial", 6),
                                               ("reducescatter", "ring", 4)])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_the_flow_check_refuses_only_what_the_full_check_refuses(op, algorithm, n, data):
    """Soundness on mutants of annotated schedules (sends dropped, dependencies cut): when
    the flow check finds a problem, the symbolic check (which sees the data) finds one
    too; a correct schedule is never refused for want of annotations."""
    from netsim.algorithms import build_schedule, problems

    schedule = build_schedule(op, algorithm, n, 1e6, AlgoOptions(extra={"annotate": True}))
    ops = st.integers(0, schedule.num_ops - 1)
    drop = set(data.draw(st.lists(ops, max_size=2)))
    cut = set(data.draw(st.lists(ops, max_size=2)))
    mutant = _without(schedule, drop, cut)
    if flow_problems(mutant, op, n):
        assert problems(mutant, op, n, first_only=True)


def test_a_library_that_replaces_alpha_is_bounded_by_what_it_paid():
    """NCCL's model replaces alpha by its step latency: at alpha = 1 ms its all-reduce took
    130 us against a 'bound' of 1 ms; the bound is now that of the cost it paid."""
    from netsim.run import run_collective

    options = AlgoOptions(extra={"nccl_algorithm": "ring", "nccl_protocol": "LL"})
    run = run_collective("allreduce", "nvswitch:4,bw=100GB/s", "nccl", 4e6, options=options,
                         alpha=1e-3)
    assert run.time_s < 1e-3 and run.bound_s <= run.time_s
    same = run_collective("allreduce", "nvswitch:4,bw=100GB/s", "ring", 4e6, alpha=1e-3)
    assert same.bound_s >= 1e-3            # a run that pays alpha keeps alpha's bound
