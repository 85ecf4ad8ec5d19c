"""Chakra execution traces made by mlc-chakra's own generator run in netsim like netsim's
native runs; export -> import round trips; bad traces and a missing package get one line."""

from __future__ import annotations

import sys

import pytest

from netsim.algorithms import build_schedule
from netsim.engine import simulate
from netsim.errors import InputError, ScheduleError
from netsim.interop import CHAKRA_MISSING, have_chakra, write_workload
from netsim.run import run_collective, run_workload
from netsim.topology import parse_topology

from cli_helpers import run_main

pytestmark = pytest.mark.skipif(not have_chakra(), reason=CHAKRA_MISSING)

RING = "ring:8,bw=10GB/s,lat=1us"


@pytest.fixture
def gen(tmp_path, monkeypatch):
    """mlc-chakra's trace generator, writing into tmp_path."""
    from chakra.src.generator import generator

    monkeypatch.chdir(tmp_path)
    return generator


def _write(gen, name: str, per_rank) -> str:
    """Traces ``name.%d.et`` whose nodes ``per_rank(rank)`` builds with the generator's
    own helpers (get_node, attributes, encode_message)."""
    from chakra.schema.protobuf.et_def_pb2 import GlobalMetadata

    for rank in range(8):
        with open(f"{name}.{rank}.et", "wb") as et:
            gen.encode_message(et, GlobalMetadata(version="1.0.0"))
            for node in per_rank(rank):
                gen.encode_message(et, node)
    return f"{name}.%d.et"


def _comp(gen, micros: int, deps=()):
    node = gen.get_node("COMP_NODE", gen.COMP_NODE)
    node.duration_micros = micros
    node.data_deps.extend(n.id for n in deps)
    return node


def _allreduce(gen, size: int, deps=()):
    node = gen.get_node("ALL_REDUCE", gen.COMM_COLL_NODE)
    node.attr.extend([gen.get_comm_type_attr(gen.ALL_REDUCE),
                      gen.ChakraAttr(name="comm_size", int64_val=size)])
    node.data_deps.extend(n.id for n in deps)
    return node


@pytest.mark.parametrize("spec, algorithm", [(RING, "ring"), (RING, "auto")])
def test_one_allreduce_node_matches_the_native_run(gen, spec, algorithm):
    gen.one_comm_coll_node_allreduce(8, 8_000_000)
    run = run_workload("ALL_REDUCE.%d.et", spec, algorithm=algorithm)
    native = run_collective("allreduce", spec, algorithm, 8e6)
    assert run.time_s == pytest.approx(native.time_s, rel=1e-12)
    assert run.collectives == 1
    for row in run.rows:
        assert row["compute_s"] == 0.0
        assert row["exposed_comm_s"] == pytest.approx(native.time_s, rel=1e-12)


def test_a_chain_of_compute_and_communication(gen):
    size, first, second = 8_000_000, 30, 50           # bytes, us, us

    def rank_nodes(rank):
        a = _comp(gen, first)
        b = _allreduce(gen, size, [a])
        c = _comp(gen, second, [b])
        idle = _comp(gen, 20)          # independent: runs during the first compute
        return [a, b, c, idle]

    pattern = _write(gen, "chain", rank_nodes)
    run = run_workload(pattern, RING, algorithm="ring")
    t_ar = run_collective("allreduce", RING, "ring", size).time_s
    total = (first + second) * 1e-6 + t_ar
    assert run.time_s == pytest.approx(total, rel=1e-12)
    for row in run.rows:
        assert row["compute_s"] == pytest.approx((first + second) * 1e-6)   # union
        assert row["total_s"] == pytest.approx(total, rel=1e-12)
        assert row["exposed_comm_s"] == pytest.approx(t_ar, rel=1e-9)


def test_one_algorithm_per_op(gen):
    gen.one_comm_coll_node_allreduce(8, 8_000_000)
    run = run_workload("ALL_REDUCE.%d.et", RING, algorithm="allreduce=bidir_ring")
    assert set(run.algorithms.values()) == {"bidir_ring"}
    assert run.time_s == pytest.approx(
        run_collective("allreduce", RING, "bidir_ring", 8e6).time_s, rel=1e-12)
    with pytest.raises(InputError, match="did you mean 'allreduce'"):
        run_workload("ALL_REDUCE.%d.et", RING, algorithm="allreduc=ring")


def test_process_groups_run_side_by_side(gen, tmp_path):
    def rank_nodes(rank):
        node = _allreduce(gen, 4_000_000)
        node.attr.append(gen.ChakraAttr(name="pg_name", string_val=str(1 + rank // 4)))
        return [node]

    pattern = _write(gen, "groups", rank_nodes)
    # on the 8-ring the two 4-rank rings use disjoint links: each takes its time alone
    alone = run_collective("allreduce", RING, "ring", 4e6, placement=[0, 1, 2, 3]).time_s
    inferred = run_workload(pattern, RING, algorithm="ring")
    assert inferred.collectives == 2
    assert inferred.time_s == pytest.approx(alone, rel=1e-12)
    groups = tmp_path / "groups.json"
    groups.write_text('{"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]}')
    given = run_workload(pattern, RING, algorithm="ring", comm_groups=str(groups))
    assert given.time_s == pytest.approx(alone, rel=1e-12)
    groups.write_text('{"1": [0, 1], "2": [4, 5, 6, 7]}')
    with pytest.raises(ScheduleError, match="do not include rank 2"):
        run_workload(pattern, RING, algorithm="ring", comm_groups=str(groups))


def test_send_and_receive_nodes_are_flows(gen):
    nbytes = 4_000_000

    def rank_nodes(rank):
        if rank == 0:
            c = _comp(gen, 10)
            s = gen.get_node("SEND", gen.COMM_SEND_NODE)
            s.attr.extend([gen.ChakraAttr(name="comm_dst", int64_val=1),
                           gen.ChakraAttr(name="comm_tag", int64_val=7),
                           gen.ChakraAttr(name="comm_size", int64_val=nbytes)])
            s.data_deps.append(c.id)
            return [c, s]
        if rank == 1:
            r = gen.get_node("RECV", gen.COMM_RECV_NODE)
            r.attr.extend([gen.ChakraAttr(name="comm_src", int64_val=0),
                           gen.ChakraAttr(name="comm_tag", int64_val=7),
                           gen.ChakraAttr(name="comm_size", int64_val=nbytes)])
            return [r, _comp(gen, 5, [r])]
        return []

    run = run_workload(_write(gen, "p2p", rank_nodes), RING, alpha=0.0)
    # 10 us compute, one hop of 1 us latency, 4 MB at 10 GB/s, then 5 us compute
    assert run.rows[1]["total_s"] == pytest.approx(10e-6 + 1e-6 + nbytes / 10e9 + 5e-6)
    assert run.rows[0]["total_s"] == pytest.approx(10e-6 + 1e-6 + nbytes / 10e9)


def test_export_then_import_simulates_identically(tmp_path):
    topo = parse_topology(RING)
    native = build_schedule("allreduce", "halving_doubling", 8, 8e6)
    write_workload(native, str(tmp_path / "hd.%d.et"))
    run = run_workload(str(tmp_path / "hd.%d.et"), topo, alpha=2e-6)
    expected = simulate(topo, native, topo.first_endpoints(8), overhead=2e-6).makespan
    assert run.time_s == pytest.approx(expected, rel=1e-12)


def test_cli_export_then_run(tmp_path, capsys):
    pattern = str(tmp_path / "ring.%d.et")
    code, _, err = run_main(["export", "chakra", "allreduce", "--topo", RING, "--algo",
                             "ring", "--size", "8MB", "-o", pattern], capsys)
    assert code == 0, err
    code, out, err = run_main(["run", "--workload", pattern, "--topo", RING, "--format",
                               "json"], capsys)
    assert code == 0, err
    import json

    rows = json.loads(out)["records"]
    native = run_collective("allreduce", RING, "ring", 8e6)
    assert len(rows) == 8
    assert max(r["total_s"] for r in rows) == pytest.approx(native.time_s, rel=1e-12)


def test_a_scenario_job_runs_a_workload(gen, tmp_path):
    from netsim.run import load_scenario, run_scenario

    gen.one_comm_coll_node_allreduce(8, 8_000_000)
    path = tmp_path / "s.yaml"
    path.write_text(f"name: w\ntopology: '{RING}'\njobs:\n  - kind: workload\n"
                    f"    trace: ALL_REDUCE.%d.et\n    algorithm: ring\n")
    outcome = run_scenario(load_scenario(path))
    native = run_collective("allreduce", RING, "ring", 8e6)
    assert [r["rank"] for r in outcome.records] == list(range(8))
    assert outcome.records[0]["total_s"] == pytest.approx(native.time_s, rel=1e-12)


def test_bad_traces_get_one_line_errors(gen, tmp_path, capsys):
    gen.one_comm_coll_node_allreduce(8, 1000)
    data = (tmp_path / "ALL_REDUCE.3.et").read_bytes()
    (tmp_path / "ALL_REDUCE.3.et").write_bytes(data[:-3])
    with pytest.raises(ScheduleError, match=r"ALL_REDUCE\.3\.et: message 2"):
        run_workload("ALL_REDUCE.%d.et", RING)
    code, out, err = run_main(["run", "--workload", "ALL_REDUCE.%d.et", "--topo", RING],
                              capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "ALL_REDUCE.3.et" in err and "Traceback" not in err

    def missing_dep(rank):
        return [_comp(gen, 1, [_comp(gen, 1)])][-1:]     # the parent is not written

    with pytest.raises(ScheduleError, match=r"depends on node \d+, which is not in the file"):
        run_workload(_write(gen, "dep", missing_dep), RING)

    def lonely(rank):                                    # only rank 0 reaches the all-reduce
        return [_allreduce(gen, 1000)] if rank == 0 else [_comp(gen, 1)]

    with pytest.raises(ScheduleError, match="never starts: rank 1 does not reach it"):
        run_workload(_write(gen, "lonely", lonely), RING)
    with pytest.raises(InputError, match="does not exist"):
        run_workload("nothing.%d.et", RING)


def test_without_the_package_one_line_says_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "chakra.schema.protobuf", None)
    assert not have_chakra()
    code, out, err = run_main(["run", "--workload", str(tmp_path / "t.%d.et"), "--topo",
                               RING], capsys)
    assert code == 2 and "pip install 'netsim[chakra]'" in err
    assert len(err.strip().splitlines()) == 1


def test_a_workload_gives_the_collective_runs_number_on_a_fabric_auto_preset(gen):
    # t3000 runs tt_ring on its ring fabric (calibration fabric: auto); a workload of one
    # all-reduce must give what `netsim coll` gives, on the same fabric.
    gen.one_comm_coll_node_allreduce(8, 8_000_000)
    for algorithm in ("tt_ring", "ring"):
        run = run_workload("ALL_REDUCE.%d.et", "t3000,links=1", algorithm=algorithm)
        native = run_collective("allreduce", "t3000,links=1", algorithm, 8e6)
        assert run.time_s == pytest.approx(native.time_s, rel=1e-12)


@pytest.mark.parametrize("size", [8_000, 64_000_000])
def test_nccl_in_a_workload_gives_the_collective_runs_number(gen, size):
    # nccl sets its own per-message cost (its protocol's step latency) and wire bytes: in a
    # workload they apply to its collective's ops alone, as in `netsim coll --algo nccl`.
    gen.one_comm_coll_node_allreduce(8, size)
    run = run_workload("ALL_REDUCE.%d.et", "dgx-h100", algorithm="nccl")
    native = run_collective("allreduce", "dgx-h100", "nccl", float(size))
    assert run.time_s == pytest.approx(native.time_s, rel=1e-12)
