"""``--packet payload=..,header=..,buffers=..,switching=..`` on flows, coll and compare."""

from __future__ import annotations

import json

import pytest

from cli_helpers import run_main
from netsim.errors import InputError
from netsim.packet.options import PacketOptions, parse_packet_options

MACHINE = "mesh:1x3,bw=1GB/s,lat=1us"
C, L = 1e9, 1e-6


def _flow_file(tmp_path, nbytes):
    path = tmp_path / "flows.json"
    path.write_text(json.dumps({"topology": MACHINE, "flows": [
        {"id": "x", "src": "0_0", "dst": "0_2", "bytes": nbytes}]}))
    return str(path)


def test_parse_reads_units_and_every_key():
    assert parse_packet_options("payload=2KiB,header=48B,buffers=3,switching=cut-through") \
        == PacketOptions(payload=2048.0, header=48.0, buffer=3, switching="cut-through")
    assert parse_packet_options(None) is None


@pytest.mark.parametrize("text,key", [("payload=4QiB", "payload"), ("bufers=2", "bufers"),
                                      ("buffers=0", "buffers"), ("buffers=1.5", "buffers"),
                                      ("switching=wormhole", "wormhole"), ("header", "header"),
                                      ("header=-1B", "header")])
def test_parse_errors_name_the_key(text, key):
    with pytest.raises(InputError) as info:
        parse_packet_options(text)
    message = str(info.value)
    assert message.startswith("--packet") and key in message and "\n" not in message


@pytest.mark.parametrize("switching", ["store-and-forward", "cut-through"])
def test_flows_packet_option_sets_payload_header_and_switching(tmp_path, capsys, switching):
    # 4 packets of P = 2000 B + H = 100 B over 2 hops (the mesh has no calibrated packet,
    # so its bandwidth is the wire rate): the closed forms of tests/test_packet_model.py.
    P, H, n, h = 2000.0, 100.0, 4, 2
    S = P + H
    expected = (h * S / C + (n - 1) * S / C + h * L if switching == "store-and-forward"
                else n * S / C + (h - 1) * H / C + h * L)
    code, out, err = run_main(["flows", _flow_file(tmp_path, n * P), "--model", "packet",
                               "--packet", f"payload=2000B,header=100B,switching={switching}",
                               "--format", "json"], capsys)
    assert code == 0, err
    (row,) = json.loads(out)["records"]
    assert row["finish_s"] == pytest.approx(expected, rel=1e-12)


def test_one_packet_buffers_slow_a_stream_to_the_credit_round_trip(tmp_path, capsys):
    # buffers=1 on the 2-hop chain: the first packet takes 2 (S/C + L), the others follow
    # one per credit round trip 2 S/C + 2 L (derived in test_packet_model.py), no header.
    n, P = 6, 1000.0
    code, out, err = run_main(["flows", _flow_file(tmp_path, n * P), "--model", "packet",
                               "--packet", "payload=1000B,buffers=1", "--format", "json"],
                              capsys)
    assert code == 0, err
    (row,) = json.loads(out)["records"]
    assert row["finish_s"] == pytest.approx(2 * (P / C + L) + (n - 1) * (2 * P / C + 2 * L),
                                          rel=1e-12)


@pytest.mark.parametrize("command", [
    ["coll", "allreduce", "--topo", "ring:4", "--algo", "ring", "--size", "64KiB"],
    ["compare", "allreduce", "--topo", "ring:4", "--size", "64KiB"]])
def test_packet_option_with_the_fluid_model_is_refused(capsys, command):
    code, out, err = run_main(command + ["--packet", "payload=1KiB"], capsys)
    assert code != 0 and "--packet" in err and "fluid" in err and "Traceback" not in err
    assert out == ""


def test_coll_and_compare_pass_the_packet_options(capsys):
    # Ring all-reduce on ring:4 (no latency, no calibrated packet: the bandwidth is the
    # wire rate): 6 steps of one-hop 16 KiB pieces, 4 packets of P = 4 KiB + H each, so
    # the packet time is 6 x 4 (P + H) / C: a 1 KiB header makes it 5/4 of no header.
    base = ["--topo", "ring:4", "--size", "64KiB", "--model", "both", "--format", "json"]
    times = {}
    for header in ("0B", "1KiB"):
        code, out, err = run_main(["coll", "allreduce", "--algo", "ring", *base,
                                   "--packet", f"header={header}"], capsys)
        assert code == 0, err
        (rec,) = json.loads(out)["records"]
        times[header] = rec["packet_time_s"]
        code, out, err = run_main(["compare", "allreduce", "--algo", "ring", *base,
                                   "--packet", f"header={header}"], capsys)
        assert code == 0, err
        (row,) = json.loads(out)["records"]
        assert row["packet_time_s"] == pytest.approx(rec["packet_time_s"], rel=1e-12)
    assert times["1KiB"] == pytest.approx(1.25 * times["0B"], rel=1e-9)


def test_axis_runs_the_packet_model_on_every_line():
    # The lines of a 2x4 mesh along axis 1 share no link, so each line's packet time is
    # that of the line run alone (nodes=...), and the slowest is the run's time.
    from netsim.run import run_collective

    spec, packet = "mesh:2x4,bw=1GB/s,lat=1us", PacketOptions(payload=1000.0)
    both = run_collective("allgather", spec, "ring", "16KiB", axis=1, model="both",
                          packet=packet)
    lines = [",".join(f"{r}_{c}" for c in range(4)) for r in range(2)]
    alone = [run_collective("allgather", spec, "ring", "16KiB", nodes=line, model="packet",
                            packet=packet).time_s for line in lines]
    assert both.model["packet_time_s"] == pytest.approx(max(alone), rel=1e-12)
    fluid = run_collective("allgather", spec, "ring", "16KiB", axis=1)
    assert both.time_s == pytest.approx(fluid.time_s, rel=1e-12)
    assert both.model["makespan_error"] == pytest.approx(
        (fluid.time_s - max(alone)) / max(alone), rel=1e-9)


def test_synth_refuses_the_packet_model_in_one_line(capsys):
    code, out, err = run_main(["coll", "allreduce", "--topo", "mesh:2x2", "--algo", "synth",
                               "--size", "64KiB", "--model", "packet"], capsys)
    assert code != 0 and "synth" in err and "--model fluid" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
