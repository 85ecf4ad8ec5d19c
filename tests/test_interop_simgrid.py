"""SimGrid platforms: netsim machines written with their routes and read back; SimGrid's own
platform forms (zones with routes, clusters with a backbone) read wherever --topo is."""

from __future__ import annotations

import json

import numpy as np
import pytest

from netsim.errors import TopologyError
from netsim.interop import simgrid_platform
from netsim.run import run_collective
from netsim.topology import parse_topology
from netsim.topology.simgrid import parse_rate, parse_seconds, topology_from_simgrid

from cli_helpers import run_main

CLUSTER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="acme" prefix="node-" suffix=".acme.org" radical="0-7" speed="1Gf"
           bw="125MBps" lat="50us" bb_bw="250MBps" bb_lat="500us"
           sharing_policy="SPLITDUPLEX"/>
</platform>
"""


def _pair_bandwidth(topo) -> dict:
    out: dict = {}
    for s, d, b in zip(topo.link_src, topo.link_dst, topo.bandwidth):
        key = (topo.node_names[s], topo.node_names[d])
        out[key] = out.get(key, 0.0) + float(b)
    return out


def test_units_are_simgrids():
    assert parse_rate("10Gbps") == 1.25e9 and parse_rate("125MBps") == 125e6
    assert parse_rate("1GiBps") == 2**30 and parse_seconds("50us") == 5e-5
    with pytest.raises(TopologyError, match="bandwidth='fast'"):
        parse_rate("fast", "p.xml")


@pytest.mark.parametrize("spec", ["ring:8,bw=10GB/s,lat=1us", "fattree:k=4,lat=100ns",
                                  "leafspine:hosts=4,leaves=2,spines=2", "mesh:3x3",
                                  "galaxy-wh", "dgx-h100"])
def test_written_and_read_back_keeps_every_pair_and_its_bandwidth(spec):
    topo = parse_topology(spec)
    text, notes = simgrid_platform(topo)
    back = topology_from_simgrid(text, "platform.xml")
    assert back.num_endpoints == topo.num_endpoints
    assert [back.node_names[i] for i in back.endpoints] == \
        [topo.node_names[i] for i in topo.endpoints]
    # planes are summed into one link per pair; nothing else changes
    assert _pair_bandwidth(back) == pytest.approx(_pair_bandwidth(topo), rel=1e-12)
    assert ("planes" in " ".join(notes)) == bool(topo.plane.max() > 0)


@pytest.mark.parametrize("spec", ["ring:8,bw=10GB/s,lat=1us", "fattree:k=4,lat=100ns",
                                  "leafspine:hosts=4,leaves=2,spines=2"])
def test_a_round_trip_runs_in_the_same_time(spec):
    """Where netsim routes each pair on one path, the platform's routes are netsim's own."""
    topo = parse_topology(spec)
    back = topology_from_simgrid(simgrid_platform(topo)[0], "platform.xml")
    for op, algo in (("allreduce", "ring"), ("alltoall", "direct")):
        a = run_collective(op, topo, algo, 8e6, alpha=0.0).time_s
        b = run_collective(op, back, algo, 8e6, alpha=0.0).time_s
        assert b == pytest.approx(a, rel=1e-9)


def test_a_simgrid_cluster_is_hosts_on_private_links_through_one_backbone(tmp_path, capsys):
    path = tmp_path / "acme.xml"
    path.write_text(CLUSTER)
    code, stdout, err = run_main(["coll", "alltoall", "--topo", str(path), "--algo", "direct",
                                  "--size", "8MB", "--alpha", "0", "--format", "json"], capsys)
    assert code == 0, err
    record = json.loads(stdout)["records"][0]
    # every byte leaving a host crosses the 250 MB/s backbone: 8 hosts x 7/8 x 8 MB / 250 MB/s
    assert record["time_s"] >= 8 * 7 / 8 * 8e6 / 250e6
    assert record["time_s"] == pytest.approx(8 * 7 / 8 * 8e6 / 250e6 + 2 * 50e-6 + 500e-6,
                                             rel=1e-6)
    topo = parse_topology(str(path))
    assert [topo.node_names[i] for i in topo.endpoints][0] == "node-0.acme.org"


def test_a_floyd_zone_with_shared_links_says_how_it_was_read(tmp_path, capsys):
    path = tmp_path / "star.xml"
    path.write_text("""<platform version="4.1"><zone id="z" routing="Floyd">
      <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><router id="r"/>
      <link id="la" bandwidth="10Gbps" latency="1us"/>
      <link id="lb" bandwidth="20Gbps" latency="2us"/>
      <route src="a" dst="r"><link_ctn id="la"/></route>
      <route src="b" dst="r"><link_ctn id="lb"/></route>
    </zone></platform>""")
    topo = parse_topology(str(path))
    assert topo.num_switches == 1 and topo.num_links == 4
    assert _pair_bandwidth(topo)[("r", "b")] == 2.5e9
    code, _, err = run_main(["topo", str(path)], capsys)
    assert code == 0 and "note: 2 SHARED links" in err


@pytest.mark.parametrize("body, why", [
    ('<zone id="z" routing="Cluster"/>', "routing='Cluster' is not read"),
    ('<zone id="z" routing="Full"><host id="a" speed="1Gf"/><link id="l" bandwidth="1GBps" '
     'sharing_policy="FATPIPE"/><host id="b" speed="1Gf"/><route src="a" dst="b">'
     '<link_ctn id="l"/></route></zone>', "FATPIPE"),
    ('<zone id="z" routing="Full"><host id="a" speed="1Gf"/><route src="a" dst="c"/></zone>',
     "'c' is not a host or router"),
    ('<zone id="z" routing="Full"><zone id="y" routing="Full"/></zone>', "nested zones"),
])
def test_what_is_not_read_is_refused_in_one_line(body, why, tmp_path, capsys):
    path = tmp_path / "bad.xml"
    path.write_text(f'<platform version="4.1">{body}</platform>')
    code, _, err = run_main(["topo", str(path)], capsys)
    assert code == 2 and why in err and len(err.strip().splitlines()) == 1


def test_entity_declarations_are_refused(tmp_path, capsys):
    path = tmp_path / "bomb.xml"
    path.write_text('<!DOCTYPE platform [<!ENTITY a "aaaa">]><platform version="4.1">'
                    '<zone id="z" routing="Full"/></platform>')
    code, _, err = run_main(["topo", str(path)], capsys)
    assert code == 2 and "entity declarations" in err


def test_topo_writes_a_platform_and_notes_what_it_approximates(tmp_path, capsys):
    out = tmp_path / "dgx.xml"
    code, _, err = run_main(["topo", "dgx-h100", "--format", "simgrid", "-o", str(out)], capsys)
    assert code == 0 and "note: parallel links" in err and "sprayed" in err
    text = out.read_text()
    assert text.count("<host ") == 8 and "network/model:CM02" in text
    assert np.isclose(parse_topology(str(out)).bandwidth.sum(),
                      parse_topology("dgx-h100").bandwidth.sum())


def test_large_machines_get_per_link_routes(tmp_path):
    text, notes = simgrid_platform(parse_topology("mesh:4x4"), full_routes=10)
    assert 'routing="Floyd"' in text and "shortest paths" in notes[-1]
    assert topology_from_simgrid(text, "m.xml").num_links == 48
