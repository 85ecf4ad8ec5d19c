"""tt-metal's own machine descriptions (cluster descriptors, mesh graph descriptors in YAML
and textproto) read wherever --topo is, as the machines the Tenstorrent presets model.

The files under tests/data/tt_metal are unmodified copies from tenstorrent/tt-metal
(sources in tests/data/tt_metal/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from netsim.errors import TopologyError
from netsim.topology import parse_topology
from netsim.topology.tt_metal import parse_textproto

from cli_helpers import run_main

DATA = Path(__file__).parent / "data" / "tt_metal"
CLUSTER = DATA / "t3k_cluster_desc.yaml"


def _time(capsys, op: str, topo: str, size: str = "64KiB") -> dict:
    code, out, err = run_main(["coll", op, "--topo", topo, "--size", size,
                               "--format", "json"], capsys)
    assert code == 0, err
    return json.loads(out)["records"][0]


@pytest.mark.parametrize("path", [CLUSTER, DATA / "t3k_mesh_graph_descriptor.yaml",
                                  DATA / "t3k_mesh_graph_descriptor.textproto"])
def test_t3000_descriptors_give_the_t3000_preset_times(path, capsys):
    # the default command on tt-metal's own T3000 descriptions runs what --topo t3000 runs:
    # the same 8 chips, 2 cables per neighbour pair, 1 routing plane (the other carries
    # dispatch to the Ethernet-attached chips), Wormhole link rate and calibration
    for op in ("allgather", "allreduce"):
        ours, preset = _time(capsys, op, str(path)), _time(capsys, op, "t3000")
        assert ours["time_s"] == pytest.approx(preset["time_s"], rel=1e-12)
        assert ours["algorithm"] == preset["algorithm"] == "tt_metal"


def test_cluster_descriptor_chips_land_on_their_ethernet_coordinates():
    topo = parse_topology(str(CLUSTER))
    assert topo.family == "mesh" and topo.params["dims"] == (2, 4)
    # chip 4 sits at Ethernet (x, y) = (0, 0), chip 7 at (3, 1): rows are y, columns x
    assert "chip 4 = 0_0" in topo.meta["description"]
    assert "chip 7 = 1_3" in topo.meta["description"]
    # chips 4-7 are outside chips_with_mmio: one of the two planes is reserved for dispatch
    assert topo.meta["library"]["options"]["num_links"] == 1
    assert float(topo.bandwidth.max()) < 12.5e9          # payload rate under the 12.5 GB/s line


def test_cluster_descriptor_with_every_chip_on_pcie_keeps_every_link(tmp_path):
    data = yaml.safe_load(CLUSTER.read_text())
    data["chips_with_mmio"] = [{chip: chip} for chip in range(8)]
    path = tmp_path / "all_pcie.yaml"
    path.write_text(yaml.safe_dump(data))
    assert "num_links" not in parse_topology(str(path)).meta["library"]["options"]


def test_cluster_descriptor_that_is_no_grid_keeps_its_cables(tmp_path):
    data = yaml.safe_load(CLUSTER.read_text())
    data["ethernet_connections"] = data["ethernet_connections"][1:]   # chips 0-2: one cable
    path = tmp_path / "odd.yaml"
    path.write_text(yaml.safe_dump(data))
    topo = parse_topology(str(path))
    assert topo.family == "custom" and topo.num_endpoints == 8
    pairs: dict = {}
    for s, d in zip(topo.link_src.tolist(), topo.link_dst.tolist()):
        key = (topo.node_names[s], topo.node_names[d])
        pairs[key] = pairs.get(key, 0) + 1
    assert pairs[("0_1", "0_2")] == 1 and pairs[("0_2", "0_1")] == 1
    assert pairs[("0_0", "0_1")] == 2 and len(pairs) == 2 * 10
    # the fewest cables on any hop bound the planes, less the one dispatch reserves: none left
    # to reserve on a single-cable hop, so the option stays off
    assert "num_links" not in topo.meta["library"]["options"]


def test_blackhole_torus_descriptor_is_the_galaxy_bh_preset(capsys):
    path = DATA / "single_bh_galaxy_torus_xy_graph_descriptor.textproto"
    topo = parse_topology(str(path))
    assert topo.family == "torus" and topo.params["dims"] == (8, 4)
    ours = _time(capsys, "allgather", str(path), "1MiB")
    assert ours["time_s"] == pytest.approx(_time(capsys, "allgather", "galaxy-bh",
                                                 "1MiB")["time_s"], rel=1e-12)


@pytest.mark.parametrize("name, preset", [
    ("single_galaxy_mesh_graph_descriptor.textproto", "galaxy-wh"),
    ("quanta_galaxy_torus_2d_graph_descriptor.yaml", "galaxy-wh-torus")])
def test_wormhole_galaxy_descriptors_are_the_galaxy_wh_presets(capsys, name, preset):
    # 32 chips with 4 channels per neighbour pair; no plane reserved (every chip is a Galaxy
    # chip, not the Ethernet-reached half of an n300)
    topo = parse_topology(str(DATA / name))
    assert topo.num_links == parse_topology(preset).num_links
    assert "num_links" not in topo.meta["library"]["options"]
    for op in ("allgather", "allreduce"):
        ours = _time(capsys, op, str(DATA / name), "1MiB")
        assert ours["time_s"] == pytest.approx(_time(capsys, op, preset, "1MiB")["time_s"],
                                               rel=1e-12)


def test_n300_descriptor_is_the_n300_preset(capsys):
    path = DATA / "n300_mesh_graph_descriptor.textproto"
    ours = _time(capsys, "allgather", str(path), "1MiB")
    assert ours["time_s"] == pytest.approx(_time(capsys, "allgather", "n300",
                                                 "1MiB")["time_s"], rel=1e-12)


def test_one_wrapped_dimension_goes_as_explicit_cables(tmp_path):
    path = tmp_path / "x.textproto"
    path.write_text('mesh_descriptors { name: "M" arch: BLACKHOLE '
                    'device_topology { dims: [ 4, 3 ], dim_types: [ RING, LINE ] } '
                    'channels { count: 2 } }\n'
                    'top_level_instance { mesh { mesh_descriptor: "M" mesh_id: 0 } }\n')
    topo = parse_topology(str(path))
    # 4 rows wrap (4 cables per column), 3 columns do not (2 per row): 12 + 8 = 20 cables
    assert topo.num_links == 20 * 2 * 2


def test_textproto_reader():
    msg = parse_textproto('# c\na { dims: [ 8, 4 ], t: [ RING ] } ; b: "x y" b: 3\n')
    assert msg == {"a": [{"dims": [8, 4], "t": ["RING"]}], "b": ["x y", 3]}


@pytest.mark.parametrize("text, why", [
    ('mesh_descriptors { name: "M" arch: GRAYSKULL device_topology { dims: [ 1, 2 ] } }\n'
     'top_level_instance { mesh { mesh_descriptor: "M" } }', "arch='GRAYSKULL'"),
    ('mesh_descriptors { name: "M" arch: BLACKHOLE device_topology { dims: [ 2 ] } }\n'
     'top_level_instance { mesh { mesh_descriptor: "M" } }', "device_topology.dims"),
    ('mesh_descriptors { name: "A" arch: BLACKHOLE device_topology { dims: [ 2, 2 ] } }\n'
     'mesh_descriptors { name: "B" arch: BLACKHOLE device_topology { dims: [ 2, 2 ] } }\n'
     'top_level_instance { graph { graph_descriptor: "G" } }', "netsim reads one mesh"),
    ('mesh_descriptors { name: "M" arch: BLACKHOLE device_topology { dims: [ 2, 2 ] }\n',
     "unclosed"),
])
def test_bad_descriptors_are_refused_in_one_line(tmp_path, capsys, text, why):
    path = tmp_path / "bad.textproto"
    path.write_text(text)
    code, _, err = run_main(["topo", str(path)], capsys)
    assert code == 2 and why in err and len(err.strip().splitlines()) == 1


def test_cluster_descriptor_errors_name_the_field(tmp_path, capsys):
    data = yaml.safe_load(CLUSTER.read_text())
    data["ethernet_connections"][0] = [{"chip": 0, "chan": 6}, {"chip": 99, "chan": 6}]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    code, _, err = run_main(["topo", str(path)], capsys)
    assert code == 2 and "ethernet_connections[0]" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(TopologyError, match="takes no options"):
        parse_topology(f"{CLUSTER},links=1")


def _blackhole_cluster(tmp_path, pairs, chips=4):
    # Blackhole cluster descriptors leave `chips` empty (no Ethernet coordinates): the chips
    # are the keys of `arch` (as tt-metal's 2xp150_disconnected_cluster_desc.yaml)
    data = {"arch": {i: "blackhole" for i in range(chips)}, "chips": {},
            "ethernet_connections": [[{"chip": a, "chan": 2 * k}, {"chip": b, "chan": 2 * k + 1}]
                                     for a, b in pairs for k in range(2)],
            "chips_with_mmio": [{i: i} for i in range(chips)]}
    path = tmp_path / "bh.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_blackhole_cluster_descriptor_without_coordinates_keeps_its_cables(tmp_path, capsys):
    path = _blackhole_cluster(tmp_path, [(0, 1), (1, 2), (2, 3), (3, 0)])
    topo = parse_topology(str(path))
    assert topo.num_endpoints == 4 and topo.num_links == 4 * 2 * 2
    assert list(topo.node_names) == ["chip0", "chip1", "chip2", "chip3"]
    assert "num_links" not in topo.meta["library"]["options"]     # every chip on PCIe
    record = _time(capsys, "allgather", str(path), "1MiB")
    assert record["time_s"] > 0


def test_a_chip_without_ethernet_links_is_refused(tmp_path, capsys):
    path = _blackhole_cluster(tmp_path, [], chips=2)
    code, _, err = run_main(["topo", str(path)], capsys)
    assert code == 2 and "chip 0 has no Ethernet link" in err
    assert len(err.strip().splitlines()) == 1


def test_chips_are_ranked_by_their_ids(tmp_path):
    path = _blackhole_cluster(tmp_path, [(i, (i + 1) % 12) for i in range(12)], chips=12)
    assert list(parse_topology(str(path)).node_names) == [f"chip{i}" for i in range(12)]
