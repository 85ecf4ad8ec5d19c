"""Spec strings, presets, topology YAML files, GraphML and networkx conversion."""

import textwrap

import networkx as nx
import numpy as np
import pytest

from netsim.errors import InputError, NetsimError, TopologyError
from netsim.topology import (FAMILIES, from_networkx, load_topology_file, mesh, nvswitch,
                             parse_topology, read_graphml, register_family, ring,
                             to_graphml, torus)
from netsim.topology.io import save_topology_file, topology_file_schema


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def link_set(topo):
    """Links as comparable tuples (names, plane, bandwidth, latency), ignoring ids."""
    n = topo.node_names
    return sorted((n[s], n[d], p, b, l) for s, d, p, b, l in
                  zip(topo.link_src, topo.link_dst, topo.plane.tolist(),
                      topo.bandwidth.tolist(), topo.latency.tolist()))


def message(excinfo):
    text = str(excinfo.value)
    assert "\n" not in text
    return text


# -- spec strings ---------------------------------------------------------------------------

def test_mesh_spec_with_all_common_options():
    t = parse_topology("mesh:8x4,bw=12.5GB/s,lat=711ns,links=4,name=galaxy")
    assert (t.name, t.family, t.params) == ("galaxy", "mesh", {"dims": (8, 4)})
    assert t.num_links == 2 * 52 * 4
    assert np.all(t.bandwidth == 12.5e9) and np.all(t.latency == 711e-9)


def test_spec_defaults_are_50GBps_and_zero_latency():
    t = parse_topology("torus:4x4x4")
    assert t.num_links == 384 and np.all(t.bandwidth == 50e9) and np.all(t.latency == 0.0)


@pytest.mark.parametrize("spec, family, endpoints, switches, links", [
    ("ring:8", "ring", 8, 0, 16),
    ("ring:8,bidirectional=false,links=2", "ring", 8, 0, 16),
    ("torus:4x4", "torus", 16, 0, 64),
    ("mesh:16", "mesh", 16, 0, 30),
    ("fattree:k=8", "fat_tree", 128, 80, 768),
    ("fattree:4", "fat_tree", 16, 20, 96),
    ("fat_tree:4,links=2", "fat_tree", 16, 20, 192),
    ("leafspine:hosts=16,leaves=8,spines=4,over=2", "leaf_spine", 128, 12, 320),
    ("nvswitch:8", "nvswitch", 8, 1, 16),
    ("nvswitch:8,switches=4", "nvswitch", 8, 4, 64),
    ("nvswitch:gpus=8,switches=4,links_per_switch=5/4/4/5", "nvswitch", 8, 4, 288),
    ("fullmesh:8", "full_mesh", 8, 0, 56),
    ("full-mesh:8,links=2", "full_mesh", 8, 0, 112),
])
def test_every_family_parses(spec, family, endpoints, switches, links):
    t = parse_topology(spec)
    assert (t.family, t.num_endpoints, t.num_switches, t.num_links) == \
        (family, endpoints, switches, links)


def test_family_specific_options():
    ls = parse_topology("leafspine:hosts=16,leaves=8,spines=4,over=2,bw=25GB/s")
    assert ls.bandwidth.max() == 16 * 25e9 / (4 * 2)
    ft = parse_topology("fattree:4,bw=100GB/s,host_bw=25GB/s")
    assert sorted(set(ft.bandwidth.tolist())) == [25e9, 100e9]
    nv = parse_topology("nvswitch:8,switches=4,bw=450GB/s,links_per_switch=5/4/4/5,reduce,"
                        "reduce_bw=100GB/s")
    assert np.all(nv.bandwidth == 25e9)
    assert nv.can_reduce(nv.node("sw0"))
    assert nv.node_attrs[nv.node("sw0")]["reduce_bandwidth"] == 100e9
    uni = parse_topology("ring:6,bidirectional=no")
    assert np.all(uni.sign == 1)


@pytest.mark.parametrize("spec, expected", [
    ("mesh:0x4", "topology 'mesh:0x4': mesh: dims must be positive integers, got (0, 4)"),
    ("mesh:4x4,bw=-1GB/s", "topology 'mesh:4x4,bw=-1GB/s': option bw=-1GB/s: must be a "
                           "positive finite rate"),
    ("mesh:4x4,foo=1", "topology 'mesh:4x4,foo=1': unknown option 'foo'"),
    ("mseh:4x4", "unknown topology 'mseh:4x4': did you mean 'mesh'?"),
    ("tours:4x4", "did you mean 'torus'?"),
    ("mesh:4xa", "topology 'mesh:4xa': mesh: dims must look like 8x4"),
    ("mesh", "mesh needs dims"),
    ("mesh:4x4,links=0", "option links=0: must be an integer >= 1"),
    ("mesh:4x4,lat=soon", "option lat=soon: expected a time"),
    ("mesh:4x4,bw=1GB/s,bandwidth=2GB/s", "option 'bandwidth' is given twice"),
    ("ring:8,bidirectional=maybe", "option bidirectional=maybe: must be true or false"),
    ("leafspine:hosts=16,leaves=8", "leafspine needs spines"),
    ("leafspine:hosts=4,leaves=2,spines=2,over=-1", "option over=-1: must be a positive"),
    ("fattree:7", "fat_tree: k must be even, got 7"),
    ("nvswitch:8,links_per_switch=5/x", "option links_per_switch=5/x"),
    ("qwertyuiop:3", "unknown topology 'qwertyuiop:3' (families: ring, mesh"),
])
def test_spec_errors_are_one_line_and_name_spec_and_option(spec, expected):
    with pytest.raises(TopologyError) as err:
        parse_topology(spec)
    assert expected in message(err)


def test_register_family_and_unknown_options_of_a_plugin():
    def pair(args, options):
        return ring(2, bandwidth=options.rate("bandwidth", 1e9), name=f"pair{args}")

    register_family("testpair", pair)
    try:
        assert "testpair" in FAMILIES
        t = parse_topology("testpair:7,bw=2GB/s")
        assert t.name == "pair7" and np.all(t.bandwidth == 2e9)
        with pytest.raises(TopologyError, match="unknown option 'speed' for testpair"):
            parse_topology("testpair:1,speed=3")
    finally:
        del FAMILIES["testpair"]


# -- presets through netsim.topology.catalogue -------------------------------------------------------

@pytest.fixture
def fake_catalogue(tmp_path, monkeypatch):
    """A stand-in netsim.topology.catalogue with one preset, 'galaxy-wh' (mesh 8x4, 4 planes)."""
    preset = write(tmp_path, "galaxy-wh.yaml", """\
        name: galaxy-wh
        description: Wormhole Galaxy
        sources: [tt-metal single_galaxy_mesh_graph_descriptor]
        generator: "mesh:8x4,links=4"
        defaults: {bandwidth: 12.5GB/s, latency: 711ns}
        """)
    import netsim.topology.io as topology_io

    monkeypatch.setattr(topology_io, "find_preset",
                        lambda name: preset if name == "galaxy-wh" else None)
    monkeypatch.setattr(topology_io, "preset_names", lambda: ["galaxy-wh"])
    return preset


def test_preset_with_defaults_and_overrides(fake_catalogue):
    t = parse_topology("galaxy-wh")
    assert (t.name, t.family, t.num_links) == ("galaxy-wh", "mesh", 416)
    assert np.all(t.bandwidth == 12.5e9) and np.all(t.latency == 711e-9)
    assert t.meta["description"] == "Wormhole Galaxy"
    one = parse_topology("galaxy-wh,links=1,bw=25GB/s")
    assert one.num_links == 104 and np.all(one.bandwidth == 25e9)
    assert np.all(one.latency == 711e-9)            # not overridden: from the file defaults
    with pytest.raises(TopologyError, match="did you mean 'galaxy-wh'"):
        parse_topology("galaxy-hw")
    with pytest.raises(TopologyError, match="unknown option 'foo'"):
        parse_topology("galaxy-wh,foo=1")


# -- YAML files -----------------------------------------------------------------------------

MACHINE = """\
    name: two-gpus
    defaults: {bandwidth: 25GB/s, latency: 1us}
    nodes:
      - {name: gpu0, kind: endpoint, coord: [0, 0]}
      - {name: gpu1, coord: [0, 1]}
      - {name: sw0, kind: switch, reduce: true, reduce_bandwidth: 1e11, attrs: {tier: 1}}
    links:
      - {src: gpu0, dst: sw0, count: 18}
      - {src: gpu1, dst: sw0, bandwidth: 400Gbps, latency: 2us, count: 2}
    endpoints: [gpu1, gpu0]
    """


def test_yaml_explicit_nodes_and_links(tmp_path):
    t = load_topology_file(write(tmp_path, "machine.yaml", MACHINE))
    assert (t.name, t.family, t.num_nodes, t.num_links) == ("two-gpus", "custom", 3, 40)
    assert [t.node_names[e] for e in t.endpoints] == ["gpu1", "gpu0"]
    gpu0_up = t.pair_links[(t.node("gpu0"), t.node("sw0"))]
    assert len(gpu0_up) == 18 and np.all(t.bandwidth[gpu0_up] == 25e9)
    assert np.all(t.latency[gpu0_up] == 1e-6)
    gpu1_down = t.pair_links[(t.node("sw0"), t.node("gpu1"))]
    assert np.all(t.bandwidth[gpu1_down] == 50e9) and np.all(t.latency[gpu1_down] == 2e-6)
    assert t.node_attrs[t.node("sw0")] == {"tier": 1, "reduce": True, "reduce_bandwidth": 1e11}
    assert t.coords[t.node("gpu1")] == (0.0, 1.0)


def test_yaml_overrides_replace_file_defaults_not_link_values(tmp_path):
    path = write(tmp_path, "machine.yaml", MACHINE)
    t = parse_topology(f"{path},bw=10GB/s,links=1")
    gpu0_up = t.pair_links[(t.node("gpu0"), t.node("sw0"))]
    assert len(gpu0_up) == 18 and np.all(t.bandwidth[gpu0_up] == 10e9)   # count is explicit
    gpu1_up = t.pair_links[(t.node("gpu1"), t.node("sw0"))]
    assert np.all(t.bandwidth[gpu1_up] == 50e9)                          # bandwidth explicit


def test_yaml_generator_plus_extra_nodes(tmp_path):
    path = write(tmp_path, "mesh_nic.yaml", """\
        generator: "mesh:2x2,bw=10GB/s"
        nodes: [{name: nic, kind: switch}]
        links: [{src: 0_0, dst: nic, bandwidth: 50GB/s}, {src: 1_1, dst: nic, bandwidth: 5e10}]
        """)
    t = load_topology_file(path)
    assert t.name == "mesh_nic" and t.family == "custom"
    assert t.params["base_family"] == "mesh" and t.params["dims"] == (2, 2)
    assert t.num_links == 8 + 4 and [t.node_names[e] for e in t.endpoints] == \
        ["0_0", "0_1", "1_0", "1_1"]
    assert t.dim[t.pair_links[(t.node("0_0"), t.node("0_1"))]][0] == 1   # grid tags kept


def test_yaml_round_trip(tmp_path):
    original = load_topology_file(write(tmp_path, "machine.yaml", MACHINE))
    for topo in (original, torus((4, 3), links=2, latency="1us"),
                 nvswitch(4, switches=2, links_per_switch=(2, 1), reduce=True),
                 ring(5, bidirectional=False)):
        save_topology_file(topo, tmp_path / "out.yaml")
        again = load_topology_file(tmp_path / "out.yaml")
        assert link_set(again) == link_set(topo)
        assert again.node_names == topo.node_names and again.coords == topo.coords
        assert again.node_attrs == topo.node_attrs
        assert np.array_equal(again.endpoints, topo.endpoints)
        assert np.array_equal(again.is_switch, topo.is_switch)


@pytest.mark.parametrize("text, expected", [
    ("nodes: [{name: a}, {name: b}]\nlinks:\n  - {src: a, dst: b, bandwidth: 1e9}\n"
     "  - {src: a, dst: gpu9, bandwidth: 1e9}\n",
     "machine.yaml: links[1].dst: unknown node 'gpu9' (line 4)"),
    ("nodes: [{name: a}, {name: a}]\n", "machine.yaml: nodes[1].name: duplicate node 'a'"),
    ("nodes: [{name: a}, {name: b}]\nlinks: [{src: a, dst: b, bandwidth: -1GB/s}]\n",
     "machine.yaml: links[0].bandwidth: must be a positive finite rate (bytes/s), "
     "got '-1GB/s' (line 2)"),
    ("nodes: [{name: a}, {name: b}]\nlinks: [{src: a, dst: b, bandwidth: 0}]\n",
     "links[0].bandwidth: must be a positive finite rate (bytes/s), got 0"),
    ("nodes: [{name: a}, {name: b}]\nlinks: [{src: b, dst: b, bandwidth: 1}]\n",
     "machine.yaml: links[0].dst: self-loop on node 'b'"),
    ("nodes:\n  - {name: a}\n  - {name: b, knd: switch}\n",
     "machine.yaml: nodes[1].knd: unknown field (allowed: name, kind"),
    ("nodes: [{name: a, kind: router}]\n",
     "machine.yaml: nodes[0].kind: input should be 'endpoint' or 'switch', got 'router'"),
    ("nodes: [{name: a}, {name: b}]\nlinks: [{src: a, dst: b, latency: fast, bandwidth: 1}]\n",
     "links[0].latency: must be a time such as 711ns or 1us, got 'fast'"),
    ("nodes: [{name: a}, {name: b}]\nlinks: [{src: a, dst: b}]\n",
     "machine.yaml: links[0]: no bandwidth (give it on the link or in defaults)"),
    ("nodes: [{name: a}, {name: b}]\nlinks: [{src: a, dst: b, bandwidth: 1, count: 0}]\n",
     "links[0].count: input should be greater than or equal to 1, got 0"),
    ("nodes: [{name: a}, {name: b}, {name: c}]\n"
     "links: [{src: a, dst: b, bandwidth: 1, duplex: false}, {src: b, dst: c, bandwidth: 1}]\n",
     "machine.yaml: endpoint 'b' cannot reach 'a'"),
    ("nodes: [{name: a}, {name: b}, {name: c}]\nlinks: [{src: a, dst: b, bandwidth: 1}]\n",
     "machine.yaml: endpoint 'a' cannot reach 'c'"),
    ("generator: 'mesh:0x4'\n",
     "machine.yaml: generator: topology 'mesh:0x4': mesh: dims must be positive integers"),
    ("nodes: [{name: a}]\nendpoints: [zz]\n", "machine.yaml: endpoints[0]: unknown node 'zz'"),
    ("nodes: [{name: a}, {name: s, kind: switch}]\nendpoints: [s]\n",
     "endpoints[0]: node 's' is a switch"),
    ("nodez: []\n", "machine.yaml: nodez: unknown field (allowed: name, description"),
    ("- a\n- b\n", "machine.yaml: expected a mapping of fields at the top level"),
    ("nodes: [{name: a}\n", "machine.yaml: line 2: invalid YAML"),
])
def test_yaml_errors_name_file_field_and_value(tmp_path, monkeypatch, text, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "machine.yaml").write_text(text)
    with pytest.raises(InputError) as err:
        load_topology_file("machine.yaml")
    assert expected in message(err)


def test_yaml_keeps_grid_names_as_strings(tmp_path):
    # YAML 1.1 would read 3_2 as the integer 32; node names must stay '3_2'.
    path = write(tmp_path, "g.yaml", """\
        nodes: [{name: 3_2}, {name: 0_0}]
        links: [{src: 3_2, dst: 0_0, bandwidth: 1e9}]
        """)
    assert load_topology_file(path).node_names == ("3_2", "0_0")


def test_missing_file_and_path_spec(tmp_path):
    with pytest.raises(InputError, match="nowhere.yaml: cannot read topology file"):
        parse_topology(str(tmp_path / "nowhere.yaml"))
    path = write(tmp_path, "m.yml", "generator: ring:4\n")
    assert parse_topology(str(path)).num_links == 8
    assert parse_topology(path).family == "ring"


def test_schema_export_lists_fields():
    schema = topology_file_schema()
    assert {"generator", "defaults", "nodes", "links", "endpoints"} <= set(schema["properties"])


# -- GraphML and networkx -------------------------------------------------------------------

@pytest.mark.parametrize("topo", [
    torus((4, 3), links=2, latency="1us"),
    nvswitch(8, switches=4, links_per_switch=(5, 4, 4, 5), reduce=True,
             reduce_bandwidth=1e11),
    parse_topology("fattree:4,host_bw=25GB/s"),
])
def test_graphml_round_trip(tmp_path, topo):
    path = tmp_path / "t.graphml"
    to_graphml(topo, path)
    for again in (read_graphml(path), from_networkx(nx.read_graphml(path))):
        for field in ("link_src", "link_dst", "bandwidth", "latency", "plane", "dim", "sign",
                      "wrap", "is_switch", "endpoints"):
            assert np.array_equal(getattr(again, field), getattr(topo, field)), field
        assert again.link_names == topo.link_names and again.node_names == topo.node_names
        assert (again.family, again.params, again.name) == (topo.family, topo.params, topo.name)
        assert again.node_attrs == topo.node_attrs and again.coords == topo.coords


def test_from_networkx_undirected_with_units_and_kinds():
    g = nx.MultiGraph(name="star")
    g.add_node("sw", kind="switch", reduce=True)
    for i in range(3):
        g.add_node(f"g{i}", coord="0,%d" % i)
        g.add_edge(f"g{i}", "sw", bandwidth="400Gbps", latency="500ns")
    g.add_edge("g0", "sw", bandwidth=1e9)      # a second, parallel cable: plane 1
    t = from_networkx(g)
    assert (t.name, t.family, t.num_links, t.num_switches) == ("star", "custom", 8, 1)
    ids = t.pair_links[(t.node("g0"), t.node("sw"))]
    assert t.plane[ids].tolist() == [0, 1] and t.bandwidth[ids].tolist() == [5e10, 1e9]
    assert t.latency[ids[0]] == 500e-9 and t.can_reduce(t.node("sw"))
    assert t.coords[t.node("g2")] == (0.0, 2.0)


def test_from_networkx_directed_and_errors():
    g = nx.DiGraph()
    g.add_edge("a", "b", bandwidth=1e9)
    g.add_edge("b", "a", bandwidth=2e9)
    t = from_networkx(g)
    assert t.num_links == 2 and t.bandwidth.tolist() == [1e9, 2e9]
    g.add_edge("b", "c", bandwidth=1e9)
    with pytest.raises(TopologyError, match="endpoint 'c' cannot reach 'a'"):
        from_networkx(g)
    h = nx.Graph()
    h.add_edge("a", "b")
    with pytest.raises(TopologyError, match=r"edge \('a', 'b'\): no 'bandwidth' attribute"):
        from_networkx(h)
    h["a"]["b"]["bandwidth"] = "-5GB/s"
    with pytest.raises(TopologyError, match="bandwidth must be a positive"):
        from_networkx(h)
    k = nx.Graph()
    k.add_node("x", kind="router")
    with pytest.raises(TopologyError, match="kind must be 'switch' or 'endpoint'"):
        from_networkx(k)


def test_errors_are_netsim_errors():
    with pytest.raises(NetsimError):
        parse_topology("mesh:4x4,foo=1")
    assert mesh((2, 2)).family == "mesh"
