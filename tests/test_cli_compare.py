"""``netsim compare OP --topo A --topo B``: a row per machine and algorithm, normalisation
by injection bandwidth, plots, and one-line errors."""

from __future__ import annotations

import json

import pytest

from netsim.cli import main
from netsim.topology import injection_bandwidth, normalize_injection, parse_topology


def _run(capsys, *args):
    main(["compare", *args])
    return capsys.readouterr()


def test_rows_per_topology_and_algorithm(capsys):
    out = _run(capsys, "allreduce", "--topo", "ring:8", "--topo", "fullmesh:8",
               "--algo", "ring", "--algo", "auto", "--size", "1MiB", "--format", "json")
    doc = json.loads(out.out)
    rows = doc["records"]
    assert [(r["topology"], r["requested"]) for r in rows] == [
        ("ring:8", "ring"), ("ring:8", "auto"), ("fullmesh:8", "ring"), ("fullmesh:8", "auto")]
    ring = rows[0]
    assert ring["links"] == 16 and ring["switches"] == 0 and ring["ranks"] == 8
    assert 0 < ring["efficiency"] <= 1 and ring["time_s"] >= ring["bound_s"]
    assert ring["max_link_util"] == pytest.approx(1.0)
    assert rows[1]["time_s"] <= rows[0]["time_s"] * (1 + 1e-12)   # auto is at least as fast


def test_table_and_sweep_plot(tmp_path, capsys):
    out = _run(capsys, "allgather", "--topo", "torus:2x4", "--topo", "mesh:2x4",
               "--sizes", "1KiB:64KiB", "--plot", str(tmp_path / "c.png"))
    assert "torus:2x4" in out.out and "busbw (GB/s)" in out.out and "switches" in out.out
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    out = _run(capsys, "allgather", "--topo", "torus:2x4", "--size", "1MiB", "--plot",
               str(tmp_path / "b.svg"), "--format", "csv")
    assert out.out.splitlines()[0].startswith("topology,")
    assert b"<svg" in (tmp_path / "b.svg").read_bytes()[:1000]


def test_normalize_injection_equalises_endpoints(capsys):
    topos = [parse_topology("torus:4x4,bw=25GB/s"), parse_topology("nvswitch:16,bw=450GB/s")]
    scaled, factors, target = normalize_injection(topos)
    assert target == pytest.approx(100e9)            # 4 links x 25 GB/s
    assert factors == pytest.approx([1.0, 100 / 450])
    assert injection_bandwidth(scaled[1]) == (pytest.approx(100e9), True)
    out = _run(capsys, "allreduce", "--topo", "torus:4x4,bw=25GB/s", "--topo",
               "nvswitch:16,bw=450GB/s", "--size", "4MiB", "--normalize", "injection",
               "--format", "json")
    doc = json.loads(out.out)
    assert "injects 100 GB/s" in doc["title"] and doc["injection_Bps"] == pytest.approx(1e11)
    assert [r["bw_scale"] for r in doc["records"]] == pytest.approx([1.0, 100 / 450])


def test_algorithm_that_does_not_apply_is_a_row_with_a_note(capsys):
    doc = json.loads(_run(capsys, "allreduce", "--topo", "ring:8", "--topo",
                          "nvswitch:8,reduce=true", "--algo", "innetwork", "--size", "1MiB",
                          "--format", "json").out)
    first, second = doc["records"]
    assert first["time_s"] is None and "does not apply" in first["note"]
    assert second["time_s"] > 0


@pytest.mark.parametrize("args, message", [
    (["allreduse", "--topo", "ring:4"], "did you mean 'allreduce'"),
    (["allreduce"], "at least one --topo"),
    (["allreduce", "--topo", "ring:4", "--size", "1MiB", "--sizes", "1KiB:2KiB"], "not both"),
    (["allreduce", "--topo", "rnig:4"], "unknown"),
    (["allreduce", "--topo", "ring:6", "--algo", "innetwork"], "does not apply"),
    (["allreduce", "--topo", "ring:4", "--plot", "x.jpg"], "unknown figure format"),
])
def test_errors_are_one_line(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["compare", *args])
    assert stop.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]
