"""MSCCL XML: imported algorithms run like native ones, verify, round-trip, and bad files
get one-line errors naming gpu, threadblock and step."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from netsim.algorithms import build_schedule, verify
from netsim.engine import simulate
from netsim.errors import ScheduleError
from netsim.interop import (algo_xml, load_msccl, ring_allreduce_xml, schedule_from_msccl,
                            schedule_to_msccl)
from netsim.run import run_collective
from netsim.topology import parse_topology

from cli_helpers import run_main

COLLECTIVES = Path(__file__).resolve().parent.parent / "collectives"
XMLS = sorted(COLLECTIVES.glob("*.xml"))


@pytest.mark.parametrize("n", [4, 8])
@pytest.mark.parametrize("spec", ["ring:{n},bw=10GB/s,lat=1us", "fat_tree:4,bw=10GB/s"])
def test_msccl_ring_allreduce_times_like_the_native_ring(n, spec):
    topo = parse_topology(spec.format(n=n))
    nodes = topo.first_endpoints(n)
    size = 3.0e6 * n
    imported = schedule_from_msccl(ring_allreduce_xml(n), size)
    native = build_schedule("allreduce", "ring", n, size)
    a = simulate(topo, imported, nodes, overhead=2e-6)
    b = simulate(topo, native, nodes, overhead=2e-6)
    assert a.makespan == pytest.approx(b.makespan, rel=1e-12)
    assert a.num_flows == b.num_flows
    assert a.link_bytes.sum() == pytest.approx(b.link_bytes.sum(), rel=1e-12)


def test_msccl_ring_on_a_ring_meets_the_closed_form():
    # one-way ring all-reduce: 2 (n-1) steps of S/n over links of B: 2 (n-1)/n S / B
    n, size, bw = 8, 8e6, 10e9
    run = run_collective("allreduce", f"ring:{n},bw=10GB/s", str(COLLECTIVES /
                         "msccl-ring-allreduce-8.xml"), size, alpha=0.0)
    assert run.time_s == pytest.approx(2 * (n - 1) / n * size / bw, rel=1e-12)
    assert run.algorithm == "msccl-ring-allreduce-8.xml"


@pytest.mark.parametrize("path", XMLS, ids=lambda p: p.name)
def test_every_catalogue_xml_delivers_its_collective(path):
    schedule = load_msccl(path, 64e6)
    verify(schedule, schedule.meta["op"], schedule.num_ranks)


@pytest.mark.parametrize("n", [3, 4, 8])
def test_generated_ring_verifies(n):
    verify(schedule_from_msccl(ring_allreduce_xml(n), 1e6), "allreduce", n)


def test_the_verifier_catches_a_broken_ring():
    # drop the reduction of one received chunk: rank 2 then forwards only its own part
    xml = ring_allreduce_xml(4).replace('<step s="1" type="rrs" srcbuf="i" srcoff="1"',
                                        '<step s="1" type="rcs" srcbuf="i" srcoff="1"', 1)
    assert xml != ring_allreduce_xml(4)
    with pytest.raises(ScheduleError):
        verify(schedule_from_msccl(xml, 1e6), "allreduce", 4)


@pytest.mark.parametrize("algorithm", ["ring", "halving_doubling"])
def test_export_then_import_simulates_identically(algorithm):
    # dimension-order routing (no ECMP hash of op ids), sends to one peer already ordered
    topo = parse_topology("torus:2x4,bw=10GB/s,lat=1us")
    native = build_schedule("allreduce", algorithm, 8, 8e6)
    back = schedule_from_msccl(schedule_to_msccl(native), 8e6)
    verify(back, "allreduce", 8)
    nodes = topo.first_endpoints(8)
    assert simulate(topo, back, nodes, overhead=1e-6).makespan == pytest.approx(
        simulate(topo, native, nodes, overhead=1e-6).makespan, rel=1e-12)


def test_a_pipelined_tree_exports_and_verifies():
    # MSCCL runs one connection's sends in order, which the netsim tree does not require,
    # so only the data (not the time) is checked here
    native = build_schedule("allreduce", "dbtree", 8, 8e6)
    back = schedule_from_msccl(schedule_to_msccl(native), 8e6)
    verify(back, "allreduce", 8)
    assert back.num_sends == native.num_sends and back.total_bytes == native.total_bytes


@pytest.mark.parametrize("op", ["allgather", "reducescatter"])
def test_export_of_gathers_and_scatters_verifies(op):
    back = schedule_from_msccl(schedule_to_msccl(build_schedule(op, "ring", 4, 4e6)), 4e6)
    verify(back, op, 4)


def test_export_refuses_what_msccl_cannot_say():
    with pytest.raises(ScheduleError, match="not 'alltoall'"):
        schedule_to_msccl(build_schedule("alltoall", "direct", 4, 4e6))
    from netsim.algorithms import AlgoOptions

    with_gamma = build_schedule("allreduce", "ring", 4, 4e6, AlgoOptions(gamma=1e9))
    with pytest.raises(ScheduleError, match="compute op"):
        schedule_to_msccl(with_gamma)


def test_gamma_adds_one_reduction_per_reducing_step():
    n, size, gamma = 4, 4e6, 1e9
    plain = schedule_from_msccl(ring_allreduce_xml(n), size)
    slow = schedule_from_msccl(ring_allreduce_xml(n), size, gamma=gamma)
    computes = slow.seconds[slow.kind == 1]
    assert computes.size == n * (n - 1)            # n-2 rrs and one rrcs per GPU
    assert computes.sum() == pytest.approx(n * (n - 1) * size / n / gamma)
    assert plain.num_sends == slow.num_sends


def _small(steps_gpu0, steps_gpu1, chunks=(2, 2, 0)):
    gpus = [{"id": 0, "chunks": chunks,
             "tbs": [{"id": 0, "send": 1, "recv": 1, "chan": 0, "steps": steps_gpu0}]},
            {"id": 1, "chunks": chunks,
             "tbs": [{"id": 0, "send": 0, "recv": 0, "chan": 0, "steps": steps_gpu1}]}]
    return algo_xml(name="t", coll="allgather", ngpus=2, nchunksperloop=2, inplace=True,
                    gpus=gpus)


GOOD = ([("s", ("i", 0), None), ("r", None, ("o", 1))],
        [("s", ("i", 0), None), ("r", None, ("o", 0))])


def test_a_small_allgather_is_correct():
    schedule = schedule_from_msccl(_small(*GOOD, chunks=(1, 2, 0)), 2e6)
    verify(schedule, "allgather", 2)
    assert schedule.num_sends == 2


@pytest.mark.parametrize("change, message", [
    (lambda x: x.replace('type="r"', 'type="rx"', 1),
     r"gpu 0 tb 0 step 1: unknown step type 'rx'"),
    (lambda x: x.replace('depid="-1" deps="-1"', 'depid="3" deps="0"', 1),
     r"gpu 0 tb 0 step 0: depends on a missing step \(depid=3 deps=0\)"),
    (lambda x: x.replace('srcoff="0"', 'srcoff="5"', 1),
     r"gpu 0 tb 0 step 0: buffer index out of range: i\[5:6\]"),
    (lambda x: x.replace('type="r"', 'type="nop"', 1),
     r"gpu 1 tb 0 step 0: this send has no matching receive"),
    (lambda x: x.replace("<algo", "<!DOCTYPE algo><algo"), "DTD"),
])
def test_malformed_xml_gets_one_line_errors(change, message, tmp_path, capsys):
    bad = change(_small(*GOOD, chunks=(1, 2, 0)))
    with pytest.raises(ScheduleError, match=message):
        schedule_from_msccl(bad, 1e6)
    path = tmp_path / "bad.xml"
    path.write_text(bad)
    code, out, err = run_main(["coll", "allgather", "--topo", "ring:2", "--algo", str(path)],
                              capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert re.search(message, err)


def test_a_deadlocked_algorithm_is_named():
    # both GPUs receive first: each waits for the other's send
    xml = _small([("r", None, ("o", 1)), ("s", ("i", 0), None)],
                 [("r", None, ("o", 0)), ("s", ("i", 0), None)], chunks=(1, 2, 0))
    with pytest.raises(ScheduleError, match="gpu 0 tb 0 step 0: waits in a cycle"):
        schedule_from_msccl(xml, 1e6)


def test_coll_cli_runs_an_xml_and_refuses_the_wrong_rank_count(capsys):
    path = str(COLLECTIVES / "msccl-hierarchical-allgather-8.xml")
    code, out, err = run_main(["coll", "allgather", "--topo", "ring:8,bw=10GB/s", "--algo",
                               path, "--size", "8MB", "--format", "json"], capsys)
    assert code == 0, err
    code, out, err = run_main(["coll", "allgather", "--topo", "ring:4", "--algo", path],
                              capsys)
    assert code == 2 and "written for 8 GPUs, not 4" in err
    code, out, err = run_main(["coll", "allreduce", "--topo", "ring:8", "--algo", path],
                              capsys)
    assert code == 2 and "is not a allreduce algorithm" in err


def test_export_msccl_cli_writes_a_file_coll_runs(tmp_path, capsys):
    out = tmp_path / "ring.xml"
    code, _, err = run_main(["export", "msccl", "allreduce", "--topo", "ring:4,bw=10GB/s",
                             "--algo", "ring", "-o", str(out)], capsys)
    assert code == 0, err
    ours = run_collective("allreduce", "ring:4,bw=10GB/s", str(out), 4e6, alpha=0.0)
    native = run_collective("allreduce", "ring:4,bw=10GB/s", "ring", 4e6, alpha=0.0)
    assert ours.time_s == pytest.approx(native.time_s, rel=1e-12)
    code, _, err = run_main(["export", "msccl", "alltoall", "--topo", "ring:4", "-o",
                             str(tmp_path / "a.xml")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "a.xml").exists()


def test_an_all_pairs_alltoall_verifies_and_times_like_direct():
    n = 4
    gpus = []
    for g in range(n):
        peers = [p for p in range(n) if p != g]
        tbs = [{"id": j, "send": p, "recv": p, "chan": 0,
                "steps": [("s", ("i", p), None), ("r", None, ("o", p))]}
               for j, p in enumerate(peers)]
        tbs.append({"id": n - 1, "send": -1, "recv": -1, "chan": 0,
                    "steps": [("cpy", ("i", g), ("o", g))]})
        gpus.append({"id": g, "chunks": (n, n, 0), "tbs": tbs})
    xml = algo_xml(name="a2a", coll="alltoall", ngpus=n, nchunksperloop=n, inplace=False,
                   gpus=gpus)
    size = 4e6                                  # one rank's send buffer
    schedule = schedule_from_msccl(xml, size)
    verify(schedule, "alltoall", n)
    assert schedule.total_bytes == pytest.approx(n * (n - 1) * size / n)
    # every GPU sends S/n to each peer at once: the native direct all-to-all
    topo = parse_topology("full_mesh:4,bw=10GB/s")
    nodes = topo.first_endpoints(n)
    native = build_schedule("alltoall", "direct", n, size)
    assert simulate(topo, schedule, nodes).makespan == pytest.approx(
        simulate(topo, native, nodes).makespan, rel=1e-12)


def test_coll_schedule_option_runs_a_file_like_algo(capsys, tmp_path):
    # `coll --schedule FILE` is `--algo FILE`: an MSCCL ring gives the native ring's time.
    import json as _json

    from cli_helpers import run_main

    xml = "collectives/msccl-ring-allreduce-8.xml"
    args = ["coll", "allreduce", "--topo", "ring:8", "--size", "8MiB", "--format", "json"]
    code, out, _ = run_main(args + ["--schedule", xml], capsys)
    assert code == 0
    by_file = _json.loads(out)["records"][0]["time_s"]
    code, out, _ = run_main(args + ["--algo", "ring"], capsys)
    assert by_file == _json.loads(out)["records"][0]["time_s"]
    code, _, err = run_main(args + ["--schedule", xml, "--algo", "ring"], capsys)
    assert code == 2 and "not both" in err


def _inplace_ring_allgather(n: int) -> str:
    """A ring all-gather as msccl-tools writes it in place: ``i_chunks="0"``, each GPU's
    input already in its block of the output (o[r]); thread block 0 sends, 1 receives,
    and each forward waits for the receive before it."""
    gpus = []
    for r in range(n):
        send = [f'<step s="{k}" type="s" srcbuf="o" srcoff="{(r - k) % n}" dstbuf="o" '
                f'dstoff="{(r - k) % n}" cnt="1" '
                + (f'depid="1" deps="{k - 1}"' if k else 'depid="-1" deps="-1"')
                + ' hasdep="0"/>' for k in range(n - 1)]
        recv = [f'<step s="{k}" type="r" srcbuf="o" srcoff="{(r - 1 - k) % n}" dstbuf="o" '
                f'dstoff="{(r - 1 - k) % n}" cnt="1" depid="-1" deps="-1" '
                f'hasdep="{int(k < n - 2)}"/>' for k in range(n - 1)]
        gpus.append(f'<gpu id="{r}" i_chunks="0" o_chunks="{n}" s_chunks="0">'
                    f'<tb id="0" send="{(r + 1) % n}" recv="-1" chan="0">{"".join(send)}</tb>'
                    f'<tb id="1" send="-1" recv="{(r - 1) % n}" chan="0">{"".join(recv)}</tb>'
                    f'</gpu>')
    return (f'<algo name="allgather_ring_inplace" proto="Simple" nchannels="1" '
            f'nchunksperloop="{n}" ngpus="{n}" coll="allgather" inplace="1" outofplace="0" '
            f'minBytes="0" maxBytes="0">{"".join(gpus)}</algo>')


def test_msccl_tools_in_place_allgather_runs_like_the_ring(tmp_path):
    """msccl-tools' own in-place convention (input chunks 0, data in the output): it was
    refused ("reads o[7], which holds no data yet"); it delivers the all-gather and takes
    the native ring's time."""
    n = 8
    schedule = schedule_from_msccl(_inplace_ring_allgather(n), 64e6)
    verify(schedule, "allgather", n)
    path = tmp_path / "allgather_ring_inplace.xml"
    path.write_text(_inplace_ring_allgather(n))
    topo = parse_topology("ring:8,bw=10GB/s")
    xml = run_collective("allgather", topo, str(path), 64e6, alpha=0.0)
    native = run_collective("allgather", topo, "ring", 64e6, alpha=0.0)
    assert xml.time_s == pytest.approx(native.time_s, rel=1e-9)
