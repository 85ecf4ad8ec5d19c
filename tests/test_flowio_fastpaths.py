"""The fast paths of ``netsim flows`` agree with their references: explicit paths converted
all at once against hop by hop, plain links checked without the models against the
models, and the command's imports stay light (no plotting, graph, frame or model kits)."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pytest

from netsim.errors import NetsimError
from netsim.routing import route
from netsim.routing.explicit import explicit_table, explicit_table_by_path

from engine_helpers import random_walk
from netsim.schedule.flownetwork import _links_by_record, _links_topology
from netsim.topology import mesh


def _random_walks(topo, rng: random.Random, n: int, count: int) -> dict:
    """``count`` random walks without repeated links, keyed by distinct request indices in
    random order; hops as link ids, link names or (in some paths) a mix of both."""
    out = {}
    for req in rng.sample(range(n), count):
        out[req] = random_walk(topo, rng, 8)[1]
    return out


def _spelled(topo, paths: dict, rng: random.Random, style: str) -> dict:
    name = topo.link_names
    if style == "ids":
        return paths
    if style == "names":
        return {r: [name[l] for l in p] for r, p in paths.items()}
    return {r: [name[l] if rng.random() < 0.5 else l for l in p] for r, p in paths.items()}


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("style", ["ids", "names", "mixed"])
def test_explicit_paths_at_once_equal_hop_by_hop(seed, style):
    rng = random.Random(seed)
    topo = mesh((rng.randint(2, 5), rng.randint(2, 5)), bandwidth=1e9, links=rng.randint(1, 2))
    n = rng.randint(1, 60)
    walks = _random_walks(topo, rng, n, rng.randint(1, n))
    paths = _spelled(topo, walks, rng, style)
    idx, table = explicit_table(topo, n, paths)
    ref_idx, ref = explicit_table_by_path(topo, n, paths)
    assert idx.tolist() == sorted(walks) == ref_idx.tolist()
    for got, want in zip(table, ref):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    for k, req in enumerate(idx.tolist()):           # each row is that request's walk
        assert table.path_links[table.path_ptr[k]:table.path_ptr[k + 1]].tolist() == walks[req]
    src = np.zeros(n, dtype=np.int64)
    dst = np.zeros(n, dtype=np.int64)
    for req, path in walks.items():
        src[req], dst[req] = topo.link_src[path[0]], topo.link_dst[path[-1]]
    routes = route(topo, src, dst, paths=paths)
    for req, path in walks.items():
        assert routes.path(routes.sub_ptr[req]).tolist() == path


@pytest.mark.parametrize("seed", range(6))
def test_an_unknown_hop_is_named_by_flow_and_hop_by_both(seed):
    rng = random.Random(seed)
    topo = mesh((3, 4), bandwidth=1e9)
    n = 40
    paths = _spelled(topo, _random_walks(topo, rng, n, 25), rng, "names")
    bad = sorted(rng.sample(sorted(paths), 3))               # three flows get a typo
    hops = {}
    for req in bad:
        hops[req] = rng.randrange(len(paths[req]))
        paths[req][hops[req]] += "x"
    first = bad[0]                                 # the lowest flow is reported, as in order
    words = (f"flow {first}: explicit path hop {hops[first]}: topology {topo.name!r} has no "
             f"link {paths[first][hops[first]]!r}")
    messages = []
    for convert in (explicit_table, explicit_table_by_path):
        with pytest.raises(NetsimError) as err:
            convert(topo, n, paths)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and messages[0].startswith(words), messages


def _random_links(rng: random.Random, count: int) -> list:
    """Valid link records: ids given, missing or null, ints and strings, unit strings."""
    nodes = [f"n{i}" for i in range(6)] + [7, 8]
    links = []
    for n in range(count):
        a, b = rng.sample(nodes, 2)
        link = {"src": a, "dst": b,
                "bandwidth": rng.choice([1e9, 25_000_000_000, "400Gbps", "50GB/s", "1e9"])}
        if rng.random() < 0.7:
            link["latency"] = rng.choice([0, 0.0, 1e-6, "711ns", "1us"])
        kind = rng.random()
        if kind < 0.4:
            link["id"] = f"L{n}"
        elif kind < 0.6:
            link["id"] = 1000 + n
        elif kind < 0.7:
            link["id"] = None
        links.append(link)
    return links


@pytest.mark.parametrize("seed", range(5))
def test_plain_links_build_the_machine_the_models_build(seed):
    links = _random_links(random.Random(seed), 30)
    fast, slow = _links_topology(links, "f.json"), _links_by_record(links, "f.json")
    assert fast.node_names == slow.node_names and fast.link_names == slow.link_names
    for field in ("link_src", "link_dst", "bandwidth", "latency", "plane"):
        assert np.array_equal(getattr(fast, field), getattr(slow, field)), field


@pytest.mark.parametrize("change, word", [
    (lambda l: l.update(bandwidth=True), "links[5]"), (lambda l: l.update(bandwidth=0), "> 0"),
    (lambda l: l.update(bandwidth="-1GB/s"), "links[5]"),
    (lambda l: l.update(latency="-1us"), ">= 0"),
    (lambda l: l.update(latency=float("nan")), "links[5]"),
    (lambda l: l.update(bandwith=1e9), "bandwith"),
    (lambda l: l.update(dst=l["src"]), "self-loop"), (lambda l: l.update(src=None), "links[5]"),
    (lambda l: l.pop("dst"), "links[5]"), (lambda l: l.update(id="L0"), "'L0' is defined twice"),
])
def test_a_refused_link_has_the_models_words(change, word):
    links = _random_links(random.Random(9), 12)
    links[0]["id"] = "L0"
    change(links[5])
    with pytest.raises(NetsimError) as fast:
        _links_topology(links, "f.json")
    with pytest.raises(NetsimError) as slow:
        _links_by_record(links, "f.json")
    assert str(fast.value) == str(slow.value) and word in str(fast.value)


#: Packages the flows command must not load: plotting, graphs, frames, the model kit.
HEAVY = ("matplotlib", "networkx", "pandas", "pyarrow", "dask", "pydantic",
         "scipy.sparse.csgraph", "scipy.sparse.linalg", "netsim.run.collective",
         "netsim.placement", "netsim.algorithms", "netsim.report.curves")


def _loaded(code: str) -> list[str]:
    """The HEAVY modules in sys.modules after ``code`` runs in a fresh interpreter."""
    probe = (f"{code}\nimport sys, json\n"
             f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out.splitlines()[-1])


def test_importing_the_cli_loads_no_heavy_package():
    assert _loaded("import netsim.cli, netsim.cli.flows") == []


def test_a_flow_file_run_loads_no_heavy_package(tmp_path):
    topo = mesh((2, 2), bandwidth=1e9)
    names = topo.node_names
    doc = {"links": [{"id": name, "src": names[s], "dst": names[d], "bandwidth": "8Gbps"}
                     for name, s, d in zip(topo.link_names, topo.link_src.tolist(),
                                           topo.link_dst.tolist())],
           "flows": [{"id": "a", "src": "0_0", "dst": "1_1", "bytes": "1MB",
                      "path": ["0_0->0_1", "0_1->1_1"]},
                     {"id": "b", "src": "1_1", "dst": "1_0", "bytes": 1e6,
                      "path": ["1_1->1_0"]}]}
    path = tmp_path / "flows.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "out.json"
    code = (f"from netsim.cli import main\n"
            f"main(['-q', 'flows', {str(path)!r}, '--format', 'json', '-o', {str(out)!r}])")
    assert _loaded(code) == []
    finish = {r["id"]: r["finish_s"] for r in json.loads(out.read_text())["records"]}
    assert finish["a"] == pytest.approx(1e6 / 1e9)       # alone on its links: B / C
