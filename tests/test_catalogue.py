"""The machine catalogue: presets load by name, with the shapes and rates their sources give."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from netsim.topology.calibration import payload_efficiency
from netsim.topology.catalogue import find_preset, preset_names
from netsim.topology.io import load_preset, preset_table
from netsim.cli import cli
from netsim.errors import InputError, TopologyError
from netsim.topology import parse_topology
from netsim.topology.clusters import dgx_cluster
from netsim.routing import default_router, route

# name: (endpoints, switches, directed links)
SHAPES = {
    "dgx-a100": (8, 6, 8 * 12 * 2),            # 12 NVLinks per GPU, 2 directions
    "dgx-h100": (8, 4, 8 * 18 * 2),            # 18 NVLinks per GPU
    "dgx-b200": (8, 2, 8 * 18 * 2),
    "gb200-nvl72": (72, 18, 72 * 18 * 2),
    # 4 nodes: 32 GPUs x (18 NVLinks + 1 NIC) x 2, 8 leaves x 4 spines x 1 cable x 2
    "dgx-h100-cluster": (32, 4 * 4 + 8 + 4, 32 * 19 * 2 + 8 * 4 * 2),
    "n300": (2, 0, 2),
    "t3000": (8, 0, (4 + 6) * 2 * 2),          # 10 cables of a 2x4 mesh, 2 links each way
    "galaxy-wh": (32, 0, (7 * 4 + 8 * 3) * 2 * 4),
    "galaxy-wh-torus": (32, 0, (8 * 4 + 8 * 4) * 2 * 4),
    "galaxy-bh": (32, 0, 64 * 2 * 2),
    "tpu-v4-4x4x4": (64, 0, 64 * 6),
}


def test_every_preset_is_listed_and_loads_with_its_shape():
    assert set(SHAPES) <= set(preset_names())
    assert preset_names() == sorted(preset_names())
    for name, shape in SHAPES.items():
        topo = load_preset(name)
        assert (topo.num_endpoints, topo.num_switches, topo.num_links) == shape, name


def test_every_preset_names_its_sources_and_describes_itself():
    for name in SHAPES:
        text = find_preset(name).read_text()
        topo = load_preset(name)
        assert topo.meta["sources"] and topo.meta["description"], name
        assert text.count("#") >= 5, f"{name}: numbers need their sources in comments"


def test_table_rows_match_the_loaded_topologies():
    rows = {r["name"]: r for r in preset_table()}
    for name, (ends, switches, links) in SHAPES.items():
        row = rows[name]
        assert (row["endpoints"], row["switches"], row["links"]) == (ends, switches, links)
        assert row["description"] and row["sources"]


# Payload rate of one link per direction, bytes/s: line rate x efficiency (sources in YAML).
WH_EFF = 6144 / (6144 + 48 + 5 * 50)


@pytest.mark.parametrize("spec, rate", [
    ("dgx-a100", 25e9 * 0.7719),      # NVLink3: 231.58 / 300, A100 ring plateau
    ("dgx-h100", 25e9 * 0.8222),
    ("dgx-b200", 50e9 * 0.7551),      # NVLink5: 679.6 / 900, GB200 ring plateau
    ("gb200-nvl72", 50e9 * 0.7551),
    ("n300", 12.5e9 * WH_EFF),
    ("t3000", 12.5e9 * WH_EFF),
    ("galaxy-wh", 12.5e9 * WH_EFF),
    # fabric auto: links load at line-fabric rates, R e with 8192 B + 48 B framing;
    # R = 25 GB/s: today's Blackhole links (the rated 50 GB/s is galaxy-bh,rated)
    ("galaxy-bh", 25e9 * 8192 / (8192 + 48 + 6 * 50)),
    ("galaxy-bh,rated", 50e9 * 8192 / (8192 + 48 + 6 * 50)),
    ("tpu-v4-4x4x4", 45e9),
])
def test_links_carry_line_rate_times_payload_efficiency(spec, rate):
    topo = parse_topology(spec)
    assert np.allclose(topo.bandwidth, rate, rtol=1e-9)


def test_wormhole_efficiency_is_the_framing_formula_of_ccl_bandwidth_md():
    assert WH_EFF == pytest.approx(payload_efficiency(6144, 48), rel=1e-12)
    assert 12.5 * WH_EFF == pytest.approx(11.92, abs=0.005)   # "payload ceiling ~12.0 GB/s"


def test_wormhole_ring_fabric_links_carry_10_4_gb_per_s():
    # tt-metal's ring all_gather: linkbw = (N-1)/N T / (2 t) = 10.4 GB/s (20.8 / 2)
    ring = parse_topology("t3000,links=1,fabric=ring")
    assert np.allclose(ring.bandwidth, 10.4e9, rtol=0.005)
    assert parse_topology("galaxy-wh-torus").meta["calibration"]["fabric"] == "ring"
    assert np.allclose(parse_topology("galaxy-wh-torus").bandwidth, 10.4e9, rtol=0.005)


def test_hop_latencies_are_the_measured_fabric_latencies():
    assert np.all(parse_topology("t3000").latency == pytest.approx(711e-9))
    assert np.all(parse_topology("galaxy-bh").latency == pytest.approx(515e-9))


def test_dgx_h100_switches_reduce_at_the_derived_nvls_rate():
    topo = parse_topology("dgx-h100")
    switches = np.flatnonzero(topo.is_switch)
    assert all(topo.can_reduce(int(s)) for s in switches)
    # 480 GB/s busbw x N / (2 (N-1)) / 4 chips (dgx-h100.yaml)
    rate = 480e9 * 8 / 14 / 4
    assert all(topo.node_attrs[s]["reduce_bandwidth"] == pytest.approx(rate, rel=1e-3)
               for s in switches)
    assert not any(parse_topology("dgx-a100").can_reduce(int(s)) for s in range(14))


def test_spec_options_override_a_preset():
    assert parse_topology("galaxy-wh,links=1").num_links == (7 * 4 + 8 * 3) * 2
    t = parse_topology("t3000,bw=25GB/s,lat=1us")
    assert np.allclose(t.bandwidth, 25e9 * WH_EFF) and np.all(t.latency == 1e-6)
    assert parse_topology("dgx-h100-cluster,nodes=2").num_endpoints == 16


def test_presets_are_case_insensitive_and_unknown_names_suggest():
    assert find_preset("DGX-H100") == find_preset("dgx-h100") is not None
    assert find_preset("no-such-machine") is None
    assert find_preset("../topologies/dgx-h100") is None
    with pytest.raises(TopologyError, match="did you mean 'dgx-h100'"):
        parse_topology("dgx-h10")
    with pytest.raises(InputError, match="unknown machine preset 'galaxy-wx'"):
        load_preset("galaxy-wx")


def test_netsim_path_adds_presets_and_broken_files_show_as_errors(tmp_path, monkeypatch):
    (tmp_path / "topologies").mkdir()
    (tmp_path / "topologies" / "my-ring.yaml").write_text(
        "description: a test ring\nsources: [test]\ngenerator: 'ring:4,bw=1GB/s'\n")
    (tmp_path / "topologies" / "broken.yaml").write_text("generator: [\n")
    monkeypatch.setenv("NETSIM_PATH", str(tmp_path))
    assert parse_topology("my-ring").num_endpoints == 4
    rows = {r["name"]: r for r in preset_table()}
    assert rows["my-ring"]["endpoints"] == 4
    assert rows["broken"]["description"].startswith("error:")
    assert "invalid YAML" in rows["broken"]["description"]


def test_topo_list_prints_the_catalogue():
    result = CliRunner().invoke(cli, ["topo", "--list", "--format", "json"])
    assert result.exit_code == 0, result.output
    names = [row["name"] for row in json.loads(result.output)["records"]]
    assert set(SHAPES) <= set(names)


# -- the DGX H100 cluster generator ---------------------------------------------------------

def test_cluster_groups_are_the_gpus_of_each_node():
    topo = parse_topology("dgx-h100-cluster")
    assert topo.meta["groups"] == [list(range(8 * k, 8 * k + 8)) for k in range(4)]
    names = [topo.node_names[e] for e in topo.endpoints[8:11]]
    assert names == ["n1.gpu0", "n1.gpu1", "n1.gpu2"]


def _paths(topo, src: str, dst: str) -> list[list[str]]:
    routes = route(topo, np.array([topo.node(src)]), np.array([topo.node(dst)]),
                   router=default_router(topo))
    return [[topo.link_names[lid] for lid in
             routes.path_links[routes.path_ptr[s]:routes.path_ptr[s + 1]]]
            for s in range(routes.sub_ptr[0], routes.sub_ptr[1])]


def test_cluster_routes_nvlink_inside_a_node_and_rails_between_nodes():
    topo = dgx_cluster(2)
    inside = _paths(topo, "n0.gpu0", "n0.gpu5")
    assert len(inside) == 18 and all(len(p) == 2 and ".sw" in p[0] for p in inside)
    same_rail = _paths(topo, "n0.gpu3", "n1.gpu3")
    assert same_rail == [["n0.gpu3->su0.leaf3", "su0.leaf3->n1.gpu3"]]
    cross_rail = _paths(topo, "n0.gpu3", "n1.gpu4")
    assert len(cross_rail) == 4 and all(len(p) == 4 and "spine" in p[1] for p in cross_rail)


@pytest.mark.parametrize("nodes", [1, 4, 32, 40])
def test_cluster_fabric_is_non_blocking(nodes):
    topo = dgx_cluster(nodes)
    leaves = [i for i, n in enumerate(topo.node_names) if ".leaf" in n]
    for leaf in leaves:
        down = topo.bandwidth[(topo.link_src == leaf) & ~topo.is_switch[topo.link_dst]].sum()
        up = topo.bandwidth[(topo.link_src == leaf) & topo.is_switch[topo.link_dst]].sum()
        assert up >= down > 0
    assert sum(".leaf" in n for n in topo.node_names) == 8 * math.ceil(nodes / 32)


def test_cluster_efficiency_differs_for_nvlink_and_infiniband():
    topo = parse_topology("dgx-h100-cluster,nodes=2")
    nic = topo.bandwidth[topo.link("n0.gpu0->su0.leaf0")]
    nvlink = topo.bandwidth[topo.link("n0.gpu0->n0.sw0")]
    assert nic == pytest.approx(50e9 * 0.94) and nvlink == pytest.approx(25e9 * 0.8222)
    assert topo.latency[topo.link("n0.gpu0->su0.leaf0")] == pytest.approx(3.1e-6)


def test_cluster_spec_family_and_errors():
    assert parse_topology("dgxcluster:3,gpus=4,switches=2,links_per_switch=9/9").num_endpoints == 12
    with pytest.raises(TopologyError, match="links_per_switch"):
        parse_topology("dgxcluster:2,links_per_switch=5/4")
    with pytest.raises(TopologyError, match="nodes"):
        parse_topology("dgxcluster:two")
