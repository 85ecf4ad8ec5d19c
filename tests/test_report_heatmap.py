"""Link heatmaps draw the right data: hottest link at the top of the colour scale, idle links
at the bottom, a zero difference at the middle of the diverging map; files are real
PNG/SVG/PDF; result documents carry enough to redraw."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from matplotlib import colormaps

from netsim.engine import simulate
from netsim.errors import InputError
from netsim.report.heatmap import (NO_DATA, display_unit, document_difference,
                                   document_topology, document_values, draw_heatmap,
                                   link_values, read_result_document, result_document,
                                   write_result_document)
from netsim.topology import fat_tree, mesh, nvswitch, parse_topology, torus
from netsim.schedule.traffic import all_to_all, shift

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def shift_run():
    """A 4x4 mesh where rank r sends to r+1: some links full, many idle."""
    topo = mesh((4, 4), bandwidth=1e9)
    return topo, simulate(topo, shift(16, 1e6))


def test_hottest_link_top_colour_idle_link_bottom(shift_run, tmp_path):
    topo, result = shift_run
    util = result.link_utilization
    assert util.max() == pytest.approx(1.0) and (util == 0).any()
    drawn = draw_heatmap(topo, result, path=tmp_path / "h.png")
    viridis = colormaps["viridis"]
    hot = topo.link_names[int(np.argmax(util))]
    idle = topo.link_names[int(np.flatnonzero(util == 0)[0])]
    assert drawn.colors[hot] == pytest.approx(viridis(1.0))
    assert drawn.colors[idle] == pytest.approx(viridis(0.0))
    assert (drawn.vmin, drawn.vmax, drawn.cmap) == (0.0, pytest.approx(1.0), "viridis")
    assert (tmp_path / "h.png").read_bytes()[:8] == PNG_MAGIC


def test_bytes_scale_runs_to_the_largest_value_in_gb(tmp_path):
    topo = mesh((2, 2))
    values = np.zeros(topo.num_links)
    values[3], values[5] = 4e9, 1e9
    drawn = draw_heatmap(topo, values, quantity="bytes", path=tmp_path / "b.svg")
    viridis = colormaps["viridis"]
    assert drawn.unit == "GB" and drawn.vmax == pytest.approx(4.0)
    assert drawn.colors[topo.link_names[3]] == pytest.approx(viridis(1.0))
    assert drawn.colors[topo.link_names[5]] == pytest.approx(viridis(0.25))
    assert drawn.labelled[:2] == (topo.link_names[3], topo.link_names[5])
    ET.parse(tmp_path / "b.svg")                        # well-formed XML


def test_busy_time_unit_follows_the_magnitude():
    assert display_unit("busy", np.array([2e-5, 0.0])) == ("us", 1e-6)
    assert display_unit("bytes", np.array([3e6])) == ("MB", 1e6)
    assert display_unit("utilization", np.array([0.4])) == ("", 1.0)


def test_diverging_map_is_centred_on_zero(tmp_path):
    topo = mesh((2, 2))
    diff = np.zeros(topo.num_links)
    diff[0], diff[1] = 0.5, -0.25
    drawn = draw_heatmap(topo, diff, path=tmp_path / "d.png", diverging=True)
    coolwarm = colormaps["coolwarm"]
    assert (drawn.vmin, drawn.vmax, drawn.cmap) == (-0.5, 0.5, "coolwarm")
    assert drawn.colors[topo.link_names[2]] == pytest.approx(coolwarm(0.5))   # unchanged
    assert drawn.colors[topo.link_names[0]] == pytest.approx(coolwarm(1.0))
    assert drawn.colors[topo.link_names[1]] == pytest.approx(coolwarm(0.25))
    assert drawn.labelled[0] == topo.link_names[0]        # largest magnitude first


def test_links_without_values_are_grey_and_mappings_are_by_name(tmp_path):
    topo = mesh((2, 2))
    drawn = draw_heatmap(topo, {"0_0->0_1": 0.5}, path=tmp_path / "m.png", label_top=0)
    assert drawn.colors["0_1->0_0"] == pytest.approx(NO_DATA)
    assert drawn.labelled == ()
    with pytest.raises(InputError, match="3 link values"):
        link_values(topo, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("topo", [torus((4, 4)), fat_tree(4), nvswitch(4, switches=2, links=2),
                                  parse_topology("leafspine:hosts=2,leaves=2,spines=2"),
                                  parse_topology("fullmesh:5"), parse_topology("ring:6"),
                                  torus((2, 2, 3))],
                         ids=lambda t: t.name)
def test_every_family_draws(topo, tmp_path):
    result = simulate(topo, all_to_all(topo.num_endpoints, 1e5))
    drawn = draw_heatmap(topo, result, path=tmp_path / "f.png")
    assert len(drawn.colors) == topo.num_links
    assert (tmp_path / "f.png").read_bytes()[:8] == PNG_MAGIC


def test_formats_and_file_objects(shift_run, tmp_path):
    topo, result = shift_run
    draw_heatmap(topo, result, path=tmp_path / "h.pdf")
    assert (tmp_path / "h.pdf").read_bytes()[:5] == b"%PDF-"
    buffer = io.BytesIO()
    draw_heatmap(topo, result, path=buffer)
    assert buffer.getvalue()[:8] == PNG_MAGIC
    with pytest.raises(InputError, match="unknown figure format '.jpg'"):
        draw_heatmap(topo, result, path=tmp_path / "h.jpg")
    draw_heatmap(topo, result, path=tmp_path / "again.svg")
    with pytest.raises(InputError, match="already exists"):
        draw_heatmap(topo, result, path=tmp_path / "again.svg", overwrite=False)


def test_svg_output_is_reproducible(shift_run, tmp_path):
    topo, result = shift_run
    draw_heatmap(topo, result, path=tmp_path / "a.svg")
    draw_heatmap(topo, result, path=tmp_path / "b.svg")
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()


def test_report_modules_do_not_import_matplotlib():
    code = ("import sys, netsim.report.heatmap, netsim.report.layout, netsim.report.curves, "
            "netsim.report.timeline, netsim.report.placement_map, netsim.report.html, "
            "netsim.cli.heatmap, netsim.cli.compare; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# -- result documents -----------------------------------------------------------------------
def test_result_document_round_trip_with_spec(shift_run, tmp_path):
    topo, result = shift_run
    path = write_result_document(tmp_path / "r.json", result, topo, "mesh:4x4,bw=1GB/s")
    doc = read_result_document(path)
    assert doc["topology_spec"] == "mesh:4x4,bw=1GB/s"
    assert doc["nodes"][5] == {"name": "1_1", "switch": False, "coord": [1.0, 1.0]}
    again = document_topology(doc)
    assert again.link_names == topo.link_names
    assert np.allclose(document_values(doc, again), result.link_utilization)
    assert np.allclose(document_values(doc, again, "busy"), result.link_busy)


def test_result_document_rebuilds_its_topology_without_a_spec(tmp_path):
    topo = fat_tree(4)
    result = simulate(topo, all_to_all(16, 1e5))
    doc = json.loads(json.dumps(result_document(result, topo)))
    rebuilt = document_topology(doc, source="r.json")
    assert rebuilt.link_names == topo.link_names
    assert [a["tier"] for a in rebuilt.node_attrs] == [a["tier"] for a in topo.node_attrs]
    drawn = draw_heatmap(rebuilt, document_values(doc, rebuilt), path=tmp_path / "t.png")
    assert len(drawn.colors) == topo.num_links


def test_result_without_nodes_is_drawn_from_its_link_ends(shift_run, tmp_path):
    topo, result = shift_run
    doc = {"makespan": result.makespan, "links": result.link_records()}   # as `netsim flows`
    rebuilt = document_topology(doc, source="flows.json")
    assert rebuilt.link_names == topo.link_names and rebuilt.num_nodes == topo.num_nodes
    drawn = draw_heatmap(rebuilt, document_values(doc, rebuilt), path=tmp_path / "f.png")
    assert len(drawn.colors) == topo.num_links


def test_document_errors_are_one_line(tmp_path, shift_run):
    topo, result = shift_run
    with pytest.raises(InputError, match="no such file"):
        read_result_document(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{\"links\": [")
    with pytest.raises(InputError, match="not valid JSON"):
        read_result_document(tmp_path / "bad.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(InputError, match="not a netsim result"):
        read_result_document(tmp_path / "list.json")
    doc = result_document(result, topo)
    doc.pop("nodes")
    for link in doc["links"]:
        link["src"] = None
    with pytest.raises(InputError, match="--topo SPEC"):
        document_topology(doc, source="r.json")
    with pytest.raises(InputError, match="links do not match topology 'torus:4x4'"):
        document_topology(result_document(result, topo), "torus:4x4")


def test_difference_needs_the_same_links(shift_run):
    topo, result = shift_run
    doc_a = result_document(result, topo, "mesh:4x4,bw=1GB/s")
    other = simulate(topo, all_to_all(16, 1e6))
    doc_b = result_document(other, topo)
    diff = document_difference(doc_a, doc_b, topo)
    assert np.allclose(diff, result.link_utilization - other.link_utilization)
    doc_b["links"] = doc_b["links"][:-1]
    with pytest.raises(InputError, match="links do not match"):
        document_difference(doc_a, doc_b, topo, sources=("a.json", "b.json"))


def test_failed_and_degraded_links_are_drawn_apart_from_idle_ones(tmp_path):
    from netsim.run import parse_fault_option, run_collective
    from netsim.topology import parse_topology

    faults = [parse_fault_option("0_0<->0_1", "fail"),
              parse_fault_option("1_1->1_2=0.5@1us", "degrade")]
    run = run_collective("allreduce", "mesh:3x3", "ring", 1e6, faults=faults)
    topo = parse_topology("mesh:3x3")
    drawn = draw_heatmap(topo, run.result, path=tmp_path / "f.png")
    assert set(drawn.failed) == {"0_0->0_1", "0_1->0_0"}
    assert drawn.degraded == {"1_1->1_2": 0.5}
    assert not set(drawn.labelled) & set(drawn.failed)       # no value label on a dead link
    fig = draw_heatmap(topo, run.result)
    styles = {(line.get_color(), line.get_linestyle()) for line in fig.axes[0].lines}
    assert ("#d62728", "--") in styles and ("#ff7f0e", ":") in styles
    caption = " ".join(t.get_text() for t in fig.texts)
    assert "failed (2 links" in caption and "degraded to x0.5" in caption
    healthy = draw_heatmap(topo, run_collective("allreduce", "mesh:3x3", "ring", 1e6).result,
                           path=tmp_path / "h.png")
    assert healthy.failed == () and healthy.degraded == {}
