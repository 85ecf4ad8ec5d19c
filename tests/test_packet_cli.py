"""``--model fluid|packet|both`` on flows, coll and compare, and ``model:`` in scenarios."""

from __future__ import annotations

import json

import pytest

from cli_helpers import run_main

MACHINE = "mesh:1x3,bw=1GB/s,lat=1us"


def _flow_file(tmp_path):
    path = tmp_path / "flows.json"
    path.write_text(json.dumps({"topology": MACHINE, "flows": [
        {"id": "x", "src": "0_0", "dst": "0_2", "bytes": 8 * 4096}]}))
    return str(path)


def test_flows_both_reports_the_packet_time_and_the_error(tmp_path, capsys):
    code, out, err = run_main(["flows", _flow_file(tmp_path), "--model", "both",
                               "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    # Store-and-forward over 2 hops of 4096 B packets, no header: one packet time more
    # than the fluid model's 2 L + B / C.
    packet = 2 * (4096 / 1e9 + 1e-6) + 7 * 4096 / 1e9
    fluid = 2e-6 + 8 * 4096 / 1e9
    assert doc["model_error"]["packet_time_s"] == pytest.approx(packet, rel=1e-12)
    assert doc["model_error"]["makespan_error"] == pytest.approx((fluid - packet) / packet)
    (row,) = doc["records"]
    assert row["packet_finish_s"] == pytest.approx(packet, rel=1e-12)
    assert row["error"] == pytest.approx((fluid - packet) / packet)
    # the middle node buffers each packet for one packet time out of the packet makespan
    middle = [link for link in doc["links"] if link["id"] == "0_0->0_1"][0]
    assert middle["queue_peak"] in (1, 2)   # 2: a tail arrives as the one before leaves
    assert middle["queue_mean"] == pytest.approx(8 * 4096 / 1e9 / packet, rel=1e-9)


def test_coll_and_compare_take_the_model(capsys):
    code, out, err = run_main(["coll", "allreduce", "--topo", "ring:4,bw=1GB/s", "--algo",
                               "ring", "--size", "64KiB", "--model", "packet", "--format",
                               "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["records"][0]["model"] == "packet"
    code, out, err = run_main(["compare", "allreduce", "--topo", "ring:4,bw=1GB/s",
                               "--algo", "ring", "--size", "64KiB", "--model", "both"],
                              capsys)
    assert code == 0, err
    assert "fluid err" in out


def test_scenario_model_key(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(f"name: s\ntopology: {MACHINE}\nmodel: both\njobs:\n"
                    f"  - kind: traffic\n    pattern: shift\n    size: 16KiB\n")
    code, out, err = run_main(["run", str(path), "--format", "json"], capsys)
    assert code == 0, err
    assert "makespan_error" in json.loads(out)["records"][0]


def test_packet_model_refuses_faults_and_large_runs_in_one_line(tmp_path, capsys):
    code, _, err = run_main(["flows", _flow_file(tmp_path), "--model", "packet",
                             "--fail-link", "0_0<->0_1@1us"], capsys)
    assert code != 0 and "does not model faults" in err and "Traceback" not in err
    code, _, err = run_main(["coll", "alltoall", "--topo", "mesh:4x4", "--size", "4GiB",
                             "--algo", "direct", "--model", "packet"], capsys)
    assert code != 0 and "packets, above its limit" in err
    assert len(err.strip().splitlines()) == 1


def test_scenario_model_is_refused_for_fluid_only_job_kinds(tmp_path, capsys):
    from pathlib import Path

    source = Path(__file__).parent.parent / "scenarios" / "placement-training-t3000.yaml"
    path = tmp_path / "p.yaml"
    path.write_text("model: packet\n" + source.read_text())
    code, _, err = run_main(["run", str(path)], capsys)
    assert code != 0 and "runs on the fluid model only" in err and "Traceback" not in err


def test_scenario_packet_options_are_those_of_the_cli(tmp_path, capsys):
    # `packet:` in a scenario is `--packet` on the command line: same packet time; and it
    # is refused in one line with the fluid model.
    path = tmp_path / "s.yaml"
    head = f"name: s\ntopology: ring:4,bw=1GB/s\nmodel: packet\n"
    job = ("jobs:\n  - kind: collective\n    op: allreduce\n    algorithm: ring\n"
           "    size: 64KiB\n")
    path.write_text(head + "packet: {payload: 1KiB, header: 64B}\n" + job)
    code, out, err = run_main(["run", str(path), "--format", "json"], capsys)
    assert code == 0, err
    by_scenario = json.loads(out)["records"][0]["time_s"]
    code, out, err = run_main(["coll", "allreduce", "--topo", "ring:4,bw=1GB/s", "--algo",
                               "ring", "--size", "64KiB", "--model", "packet", "--packet",
                               "payload=1KiB,header=64B", "--format", "json"], capsys)
    assert code == 0, err
    assert by_scenario == json.loads(out)["records"][0]["time_s"]
    path.write_text(head.replace("packet\n", "fluid\n") + "packet: {payload: 1KiB}\n" + job)
    code, _, err = run_main(["run", str(path)], capsys)
    assert code == 2 and "model: packet" in err and len(err.strip().splitlines()) == 1
    path.write_text(head + "packet: {paylod: 1KiB}\n" + job)
    code, _, err = run_main(["run", str(path)], capsys)
    assert code == 2 and "payload" in err and "Traceback" not in err


def test_auto_says_why_when_every_candidate_was_refused(capsys):
    # With --algo auto every candidate hits the packet model's size limit: the one line
    # must say that, not only that no algorithm applies.
    code, _, err = run_main(["coll", "alltoall", "--topo", "mesh:16x16", "--size", "1MiB",
                             "--model", "packet"], capsys)
    assert code == 2 and "no alltoall algorithm applies" in err
    assert "packet model: 256 endpoints" in err and len(err.strip().splitlines()) == 1
