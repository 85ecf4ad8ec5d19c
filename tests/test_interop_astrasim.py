"""ASTRA-sim analytical networks: netsim machines written and read back run identically;
what the format cannot express is refused in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from netsim.errors import TopologyError
from netsim.interop import ASTRA_GB, astra_network, astra_network_yaml, topology_from_astra
from netsim.run import run_collective
from netsim.topology import parse_topology

from cli_helpers import run_main


@pytest.mark.parametrize("spec, kinds", [
    ("ring:8,bw=50GB/s,lat=500ns", ["Ring"]),
    ("torus:3x4,bw=10GB/s,lat=1us", ["Ring", "Ring"]),
    ("full_mesh:4,bw=25GB/s,lat=700ns", ["FullyConnected"]),
    ("nvswitch:8,switches=1,bw=400GB/s,lat=936ns", ["Switch"]),
])
def test_written_and_read_back_runs_identically(spec, kinds):
    topo = parse_topology(spec)
    doc = astra_network(topo)
    assert doc["topology"] == kinds
    assert int(np.prod(doc["npus_count"])) == topo.num_endpoints
    back = topology_from_astra(json.loads(json.dumps(doc)))
    assert back.num_links == topo.num_links and back.num_endpoints == topo.num_endpoints
    assert np.allclose(np.sort(back.bandwidth), np.sort(topo.bandwidth), rtol=1e-12)
    for op in ("allreduce", "alltoall"):
        a = run_collective(op, topo, "ring" if op == "allreduce" else "direct", 8e6, alpha=0.0)
        b = run_collective(op, back, "ring" if op == "allreduce" else "direct", 8e6, alpha=0.0)
        assert a.time_s == pytest.approx(b.time_s, rel=1e-9)


def test_units_are_astra_sims():
    doc = astra_network(parse_topology("ring:4,bw=50GB/s,lat=500ns"))
    assert doc["bandwidth"] == [pytest.approx(50e9 / 2**30)]     # GB = 2^30 B in ASTRA-sim
    assert doc["latency"] == [pytest.approx(500.0)]              # ns


def test_the_first_astra_dimension_is_netsims_last():
    # torus 4x8: 8 NPUs along the fastest-varying coordinate (node index = row * 8 + col)
    assert astra_network(parse_topology("torus:4x8"))["npus_count"] == [8, 4]


def test_astra_sims_hgx_h100_example_reads_as_one_switch():
    # examples/network/analytical/HGX-H100-validated.yml of astra-sim
    doc = {"topology": ["Switch"], "npus_count": [8], "bandwidth": [400.0],
           "latency": [936.25]}
    topo = topology_from_astra(doc)
    assert topo.num_switches == 1 and topo.num_endpoints == 8
    assert np.allclose(topo.bandwidth, 400.0 * ASTRA_GB)
    # a message crosses two links: 2 latencies + S/B
    run = run_collective("alltoall", topo, "direct", 7 * 1e6, alpha=0.0, ranks=2)
    assert run.time_s == pytest.approx(2 * 936.25e-9 + 3.5e6 / (400.0 * ASTRA_GB), rel=1e-9)


def test_mixed_dimensions_are_built_link_by_link():
    doc = {"topology": ["Switch", "Ring"], "npus_count": [8, 4], "bandwidth": [400, 50],
           "latency": [936.25, 1000]}
    topo = topology_from_astra(doc, "hgx_h100_32gpu.yml")
    assert topo.num_endpoints == 32 and topo.num_switches == 4
    # 4 switches x 8 cables + 8 rings of 4 cables, two links per cable
    assert topo.num_links == 2 * (4 * 8 + 8 * 4)
    ring_links = topo.bandwidth == 50 * ASTRA_GB
    assert ring_links.sum() == 2 * 8 * 4


@pytest.mark.parametrize("spec, why", [
    ("ring:8,bidirectional=false", "one-way ring"),
    ("leafspine:hosts=4,leaves=2,spines=2,oversubscription=2", "oversubscription"),
])
def test_what_cannot_be_expressed_is_refused_in_one_line(spec, why, tmp_path, capsys):
    with pytest.raises(TopologyError, match=why):
        astra_network(parse_topology(spec))
    out = tmp_path / "n.yml"
    code, stdout, err = run_main(["topo", spec, "--format", "astra-sim", "-o", str(out)],
                                 capsys)
    assert code == 2 and why in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def _injection(topo) -> np.ndarray:
    """Each endpoint's summed outgoing bandwidth, bytes/s."""
    out = np.bincount(topo.link_src, weights=topo.bandwidth, minlength=topo.num_nodes)
    return out[topo.endpoints]


@pytest.mark.parametrize("preset", ["dgx-a100", "dgx-h100", "dgx-b200", "gb200-nvl72",
                                    "dgx-h100-cluster", "galaxy-wh", "galaxy-wh-torus",
                                    "galaxy-bh", "n300", "t3000", "tpu-v4-4x4x4"])
def test_every_preset_is_written_with_its_bandwidth_kept(preset, tmp_path, capsys):
    """Planes and switch chips are aggregated, never dropped: each NPU's bandwidth in the
    file, summed over its links in each dimension, is the machine's injection bandwidth."""
    topo = parse_topology(preset)
    doc = astra_network(topo)
    assert int(np.prod(doc["npus_count"])) == topo.num_endpoints
    # a Ring NPU has two links per dimension (one if the ring has 2 NPUs), a Switch one
    per_npu = sum(b * ASTRA_GB * (1 if k == "Switch" or n == 2 else 2)
                  for k, n, b in zip(doc["topology"], doc["npus_count"], doc["bandwidth"]))
    injection = _injection(topo)
    if topo.family == "mesh":               # mesh edges have fewer links than a Ring NPU
        assert per_npu == pytest.approx(injection.max(), rel=1e-9)
    else:
        assert per_npu == pytest.approx(injection.min(), rel=1e-9)
        assert injection.max() == pytest.approx(injection.min(), rel=1e-9)
    out = tmp_path / "net.yml"
    code, _, err = run_main(["topo", preset, "--format", "astra-sim", "-o", str(out)], capsys)
    assert code == 0, err
    back = parse_topology(str(out))          # read wherever a topology file is taken
    assert back.num_endpoints == topo.num_endpoints
    assert _injection(back).min() == pytest.approx(per_npu, rel=1e-9)


def test_approximations_are_stated_in_the_file():
    cluster = astra_network_yaml(parse_topology("dgx-h100-cluster"))
    assert "topology: [ Switch, Switch ]" in cluster and "npus_count: [ 8, 4 ]" in cluster
    assert "# note: a fabric of 12 switches is one non-blocking Switch" in cluster
    assert "# note: 16 switch chips" in cluster
    assert "wrap" in astra_network_yaml(parse_topology("mesh:4x4"))
    assert "# note" not in astra_network_yaml(parse_topology("torus:4x4"))


def test_coll_runs_on_an_astra_network_file(tmp_path, capsys):
    """ASTRA-sim's own HGX H100 example, given to coll --topo, is one 8-NPU switch."""
    path = tmp_path / "HGX-H100-validated.yml"
    path.write_text("topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 400.0 ]\n"
                    "latency: [ 936.25 ]\n")
    code, stdout, err = run_main(["coll", "allreduce", "--topo", str(path), "--algo", "ring",
                                  "--size", "1GiB", "--format", "json"], capsys)
    assert code == 0, err
    record = json.loads(stdout)["records"][0]
    # a ring all-reduce on a non-blocking switch: 2(n-1)/n S over one 400 GiB/s link each
    assert record["time_s"] >= 2 * 7 / 8 * 2**30 / (400 * ASTRA_GB)
    code, _, err = run_main(["coll", "allreduce", "--topo", f"{path},bw=1GB/s"], capsys)
    assert code != 0 and "takes no options" in err


def test_bad_astra_files_get_one_line_errors():
    with pytest.raises(TopologyError, match="'Torus' is not one of"):
        topology_from_astra({"topology": ["Torus"], "npus_count": [4], "bandwidth": [1],
                             "latency": [0]})
    with pytest.raises(TopologyError, match="2 values for 1 dimensions"):
        topology_from_astra({"topology": ["Ring"], "npus_count": [4, 4], "bandwidth": [1],
                             "latency": [0]})
    with pytest.raises(TopologyError, match="must be an integer above 1"):
        topology_from_astra({"topology": ["Ring"], "npus_count": [1], "bandwidth": [1],
                             "latency": [0]})


def test_topo_cli_writes_and_reads_back(tmp_path, capsys):
    out = tmp_path / "torus.yml"
    code, _, err = run_main(["topo", "torus:4x4,bw=10GB/s,lat=1us", "--format", "astra-sim",
                             "-o", str(out)], capsys)
    assert code == 0, err
    assert "npus_count: [ 4, 4 ]" in out.read_text()
    code, stdout, err = run_main(["topo", str(out), "--format", "json"], capsys)
    assert code == 0, err
    summary = json.loads(stdout)["records"][0]
    assert summary["endpoints"] == 16 and summary["family"] == "torus"
    assert astra_network_yaml(topology_from_astra(astra_network(
        parse_topology("torus:4x4,bw=10GB/s,lat=1us")))).endswith("# ns per link\n")
