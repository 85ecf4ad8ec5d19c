"""``netsim heatmap RESULT.json -o FILE``: redraws saved results; errors are one line, exit 2."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from netsim.cli import main
from netsim.engine import simulate
from netsim.report.heatmap import write_result_document
from netsim.topology import parse_topology
from netsim.schedule.traffic import all_to_all, shift

SPEC = "mesh:4x4,bw=10GB/s"


@pytest.fixture
def results(tmp_path):
    """Two results on the same mesh (with the spec embedded) and one on a torus."""
    topo = parse_topology(SPEC)
    a = write_result_document(tmp_path / "a.json", simulate(topo, all_to_all(16, 1e6)), topo,
                              SPEC)
    b = write_result_document(tmp_path / "b.json", simulate(topo, shift(16, 1e6)), topo, SPEC)
    torus = parse_topology("torus:4x4")
    t = write_result_document(tmp_path / "t.json", simulate(torus, shift(16, 1e6)), torus)
    return a, b, t


def _fails(capsys, *args) -> str:
    with pytest.raises(SystemExit) as stop:
        main(["heatmap", *map(str, args)])
    assert stop.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("netsim: error: ")
    return lines[0]


def test_draws_png_and_svg(results, tmp_path, capsys):
    a, _, t = results
    main(["heatmap", str(a), "-o", str(tmp_path / "a.png")])
    assert (tmp_path / "a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    main(["heatmap", str(t), "-o", str(tmp_path / "t.svg"), "--quantity", "bytes",
          "--label-top", "0"])
    ET.parse(tmp_path / "t.svg")
    assert "wrote" in capsys.readouterr().err


def test_minus_and_topo_override(results, tmp_path):
    a, b, _ = results
    main(["heatmap", str(a), "--minus", str(b), "-o", str(tmp_path / "d.png")])
    assert (tmp_path / "d.png").stat().st_size > 1000
    doc = json.loads(b.read_text())
    del doc["topology_spec"], doc["nodes"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(doc))
    main(["heatmap", str(bare), "--topo", SPEC, "-o", str(tmp_path / "bare.png")])
    assert (tmp_path / "bare.png").exists()


def test_errors_are_one_line(results, tmp_path, capsys):
    a, b, t = results
    assert "no such file" in _fails(capsys, tmp_path / "none.json", "-o", tmp_path / "x.png")
    (tmp_path / "bad.json").write_text("{nope")
    assert "not valid JSON" in _fails(capsys, tmp_path / "bad.json", "-o", tmp_path / "x.png")
    message = _fails(capsys, a, "--minus", t, "-o", tmp_path / "x.png")
    assert "links do not match" in message
    assert "unknown figure format" in _fails(capsys, a, "-o", tmp_path / "x.bmp")
    (tmp_path / "exists.png").write_bytes(b"keep")
    assert "already exists" in _fails(capsys, a, "-o", tmp_path / "exists.png")
    assert (tmp_path / "exists.png").read_bytes() == b"keep"
    assert "links do not match" in _fails(capsys, a, "--topo", "torus:4x4", "-o",
                                          tmp_path / "x.png")
    doc = json.loads(a.read_text())
    del doc["topology_spec"], doc["nodes"]
    doc["links"] = [{k: v for k, v in r.items() if k not in ("src", "dst")}
                    for r in doc["links"]]
    (tmp_path / "bare.json").write_text(json.dumps(doc))
    assert "--topo SPEC" in _fails(capsys, tmp_path / "bare.json", "-o", tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_overwrite_replaces(results, tmp_path):
    a, _, _ = results
    (tmp_path / "o.png").write_bytes(b"old")
    main(["heatmap", str(a), "-o", str(tmp_path / "o.png"), "--overwrite"])
    assert (tmp_path / "o.png").read_bytes()[:4] == b"\x89PNG"
