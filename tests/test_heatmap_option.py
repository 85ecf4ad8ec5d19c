"""``--heatmap`` is a file everywhere, and ``netsim heatmap`` says what it drew."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from netsim.cli import cli
from netsim.engine import simulate
from netsim.errors import InputError
from netsim.report.heatmap import write_result_document
from netsim.schedule.traffic import shift
from netsim.topology import parse_topology

pytest.importorskip("matplotlib")
SPEC = "mesh:2x4,bw=10GB/s"
PLACE = ["place", "--topo", SPEC, "--tp", "4", "--dp", "2", "--tp-bytes", "1MB",
         "--strategies", "row_major,snake"]


def test_place_derives_one_name_per_strategy_and_makes_folders(tmp_path):
    target = tmp_path / "new" / "deeper" / "heat.svg"
    result = CliRunner().invoke(cli, [*PLACE, "--heatmap", str(target)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in target.parent.iterdir()) == [
        "heat-row_major-placement.svg", "heat-row_major.svg", "heat-snake-placement.svg",
        "heat-snake.svg"]
    assert "deprecated" not in result.stderr


def test_place_with_a_folder_is_refused_before_any_work(tmp_path):
    result = CliRunner().invoke(cli, [*PLACE, "--heatmap", str(tmp_path)])
    assert isinstance(result.exception, InputError)
    assert "unknown figure format" in str(result.exception) and not list(tmp_path.iterdir())


def test_place_refuses_an_unknown_figure_format_before_any_work(tmp_path):
    result = CliRunner().invoke(cli, [*PLACE, "--heatmap", str(tmp_path / "h.bmp")])
    assert isinstance(result.exception, InputError)
    assert "unknown figure format" in str(result.exception) and not list(tmp_path.iterdir())


def test_heatmap_json_describes_what_was_drawn(tmp_path):
    topo = parse_topology(SPEC)
    run = simulate(topo, shift(8, 1e6))
    saved = write_result_document(tmp_path / "r.json", run, topo, SPEC)
    saved_doc = json.loads(saved.read_text())
    links = saved_doc["links"]
    result = CliRunner().invoke(cli, ["heatmap", str(saved), "-o", str(tmp_path / "h.png"),
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["command"] == "heatmap" and len(doc["records"]) == 1
    row = doc["records"][0]
    # the saved result read back: utilisation = bytes / (bandwidth x makespan)
    util = {r["id"]: r["bytes"] / (r["bandwidth_Bps"] * saved_doc["makespan"]) for r in links}
    assert row["file"] == str(tmp_path / "h.png") and row["quantity"] == "utilization"
    assert row["links"] == topo.num_links == row["links_with_data"]
    assert row["max"] == pytest.approx(max(util.values()))
    assert util[row["max_link"]] == pytest.approx(max(util.values()))
    table = CliRunner().invoke(cli, ["heatmap", str(saved), "-o", str(tmp_path / "d.png"),
                                     "--minus", str(saved)])
    assert table.exit_code == 0 and "d.png" in table.stdout and "True" in table.stdout
