"""The fast reader of JSON flow files (msgspec, paths read as bytes) builds the same flow
set as the general reader (orjson, dicts, column checks) or declines, and then the general
reader words the error; explicit paths reach the engine as arrays with the same results;
the command's output is byte-identical to the general path's."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from netsim._inputs.jsonio import loads_json
from netsim.errors import NetsimError
from netsim.routing.explicit import ExplicitPaths
from netsim.schedule import flowfile, flows_from_dict, load_flow_file
from netsim.schedule.flowjson import decode_flow_columns, path_link_ids
from netsim.schedule.flownetwork import network_of
from netsim.topology import mesh

from cli_helpers import run_main
from engine_helpers import random_walk

pytest.importorskip("msgspec")


def _general(path) -> object:
    """The reference: the general reader (orjson, dicts), its result or its error."""
    raw = path.read_bytes()
    try:
        return flows_from_dict(loads_json(raw, str(path), what="flow file"), str(path))
    except NetsimError as err:
        return f"{type(err).__name__}: {err}"


def _loaded(path) -> object:
    try:
        return load_flow_file(path)
    except NetsimError as err:
        return f"{type(err).__name__}: {err}"


def _fast_taken(path) -> bool:
    """Whether the fast reader accepted the file (nothing deferred to the general one)."""
    decoded = decode_flow_columns(path.read_bytes())
    if decoded is None:
        return False
    header, _, raws = decoded
    return raws is None or path_link_ids(raws, network_of(header, "x")[0]) is not None


def _same(a, b) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    sa, sb = a.schedule, b.schedule
    for field in ("kind", "src", "dst", "nbytes", "seconds", "dep_ptr", "dep_idx", "tag"):
        assert np.array_equal(getattr(sa, field), getattr(sb, field)), field
        assert getattr(sa, field).dtype == getattr(sb, field).dtype, field
    assert dict(sa.paths) == dict(sb.paths)
    assert a.flow_ids == b.flow_ids
    assert [type(i) for i in a.flow_ids] == [type(i) for i in b.flow_ids]
    assert np.array_equal(a.not_before, b.not_before)
    assert a.topology.link_names == b.topology.link_names
    assert np.array_equal(a.topology.bandwidth, b.topology.bandwidth)


def _doc(seed: int, names: str = "plain") -> dict:
    """A random valid flow document on a 3x3 mesh given by links: random walks as paths on
    all, some or no flows, int, str or missing ids, deps, unit strings. ``names`` spells
    the link names: plain (``L0``), long (more than 8 bytes, several words), utf8 (raw
    UTF-8), varied (1 to 20 bytes: one to three words), odd (spaces, commas, brackets,
    colons: not for the fast path's bytes)."""
    rng = random.Random(seed)
    topo = mesh((3, 3), bandwidth=1e9)
    nodes = topo.node_names
    spell = {"plain": "L{}", "long": "link-number-{}-of-the-mesh", "utf8": "é→{}",
             "odd": "l {}, [é]:{}"}.get(names, "")
    link_names = [spell.format(i, i) if spell else "x" * (i % 18) + str(i)   # 1-20 bytes
                  for i in range(topo.num_links)]
    links = [{"id": link_names[i], "src": nodes[s], "dst": nodes[d],
              "bandwidth": rng.choice([1e9, "8Gbps"]), "latency": rng.choice([0, "1us"])}
             for i, (s, d) in enumerate(zip(topo.link_src.tolist(), topo.link_dst.tolist()))]
    n = rng.randrange(5, 40)
    share = rng.choice([0.0, 0.5, 1.0])
    id_style = rng.choice(["int", "str", "mixed", "none", "some"])
    flows = []
    for i in range(n):
        at, path = random_walk(topo, rng, 7)
        src = int(topo.link_src[path[0]])
        flow = {"src": nodes[src], "dst": nodes[at],
                "bytes": rng.choice([1000, 2.5e6, "1MiB", 0, 123456789012])}
        fid = {"int": i, "str": f"f{i}", "mixed": i if i % 2 else f"f{i}", "none": None,
               "some": f"f{i}" if rng.random() < 0.5 else None}[id_style]
        if fid is not None:
            flow["id"] = fid
        if rng.random() < share:
            flow["path"] = [link_names[l] for l in path]
        if rng.random() < 0.3:
            flow["start"] = rng.choice(["2us", 1e-6, 0])
        if i and rng.random() < 0.3 and id_style in ("int", "str", "mixed"):
            flow["deps"] = [flows[j]["id"] for j in rng.sample(range(i), min(2, i))]
        flows.append(flow)
    rng.shuffle(flows)                    # deps on later flows too: the loader sorts them
    return {"links": links, "flows": flows}


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("names, indent", [("plain", None), ("plain", 2), ("long", None),
                                           ("utf8", None), ("varied", None), ("odd", None)])
def test_the_fast_reader_builds_the_general_readers_flow_set(tmp_path, seed, names, indent):
    path = tmp_path / "flows.json"
    text = json.dumps(_doc(seed, names), indent=indent, ensure_ascii=False)
    path.write_bytes(text.replace("\n", "\r\n").encode() if seed % 3 == 0 else text.encode())
    _same(_loaded(path), _general(path))
    if names != "odd":            # the fast reader takes these whole, not by the fallback
        assert _fast_taken(path)


def _mesh_doc() -> dict:
    topo = mesh((1, 3), bandwidth=1e9)
    links = [{"id": f"L{i}", "src": topo.node_names[s], "dst": topo.node_names[d],
              "bandwidth": 1e9} for i, (s, d) in
             enumerate(zip(topo.link_src.tolist(), topo.link_dst.tolist()))]
    hop = {(topo.node_names[s], topo.node_names[d]): f"L{i}" for i, (s, d) in
           enumerate(zip(topo.link_src.tolist(), topo.link_dst.tolist()))}
    flows = [{"id": 0, "src": "0_0", "dst": "0_2", "bytes": 1000,
              "path": [hop["0_0", "0_1"], hop["0_1", "0_2"]]},
             {"id": 1, "src": "0_1", "dst": "0_0", "bytes": "1KiB",
              "path": [hop["0_1", "0_0"]]}]
    return {"links": links, "flows": flows}


# Each a text edit of a valid file that the fast reader must not accept as it is: the
# general reader then words the error (or reads the file, when it is valid after all).
@pytest.mark.parametrize("edit", [
    lambda t: t.replace('"bytes": 1000', '"bytes": 1000, "bytes": 5'),          # twice
    lambda t: t.replace('"id": 0,', '"id": 0, "id": 7,'),
    lambda t: t.replace('"bandwidth": 1000000000.0}', '"bandwidth": 1e9, "src": "0_2"}', 1),
    lambda t: t.replace('"path": ["L0", "L2"]', '"path": ["L0", "Lx"]'),        # no link
    lambda t: t.replace('"path": ["L0", "L2"]', '"path": ["L0", 2]'),           # an id
    lambda t: t.replace('"path": ["L0", "L2"]', '"path": ["L0", "L0"]'),        # loops
    lambda t: t.replace('"path": ["L0", "L2"]', '"path": []'),
    lambda t: t.replace('"path": ["L0", "L2"]', '"path": null'),
    lambda t: t.replace('"path": ["L0", "L2"]', '"path": [["L0"], "L2"]'),
    lambda t: t.replace('"path": ["L0", "L2"]', '"path": ["L\\u0030", "L2"]'),  # escaped
    lambda t: t.replace('"path": ["L0", "L2"]', '"path": ["L0", {"a": "L2"}]'),
    lambda t: t.replace('"path": ["L0", "L2"]', '"path": ["", "L2"]'),
    lambda t: t.replace('"id": 1,', '"id": -9223372036854775809,'),            # int64
    lambda t: t.replace('"id": 1,', '"id": true,'),
    lambda t: t.replace('"id": 1,', '"id": "0",'),                             # twins
    lambda t: t.replace('"id": 1,', '"id": 0,'),
    lambda t: t.replace('"bytes": 1000', '"bytes": -1'),
    lambda t: t.replace('"bytes": 1000', '"bytes": "1 parsec"'),
    lambda t: t.replace('"bytes": 1000', '"bytes": NaN'),
    lambda t: t.replace('"bytes": 1000', '"sizee": 1000'),
    lambda t: t.replace('"src": "0_1"', '"src": "nowhere"'),
    lambda t: t.replace('{"id": 0,', '{"deps": [1], "id": 0,').replace(
        '{"id": 1,', '{"deps": [0], "id": 1,'),                                  # a cycle
    lambda t: "\ufeff" + t,                                                      # BOM
    lambda t: t.replace('"flows"', '"description": {"a": 1}, "flows"'),
    lambda t: t.replace('"flows"', '"description": "a: b", "flows"'),           # a colon
])
def test_what_the_fast_reader_declines_the_general_reader_words(tmp_path, edit):
    path = tmp_path / "flows.json"
    text = json.dumps(_mesh_doc())
    edited = edit(text)
    assert edited != text
    path.write_text(edited, encoding="utf-8")
    _same(_loaded(path), _general(path))


def test_a_plain_file_is_read_by_the_fast_reader(tmp_path):
    path = tmp_path / "flows.json"
    path.write_text(json.dumps(_mesh_doc()))
    assert _fast_taken(path)
    flowset = load_flow_file(path)
    assert isinstance(flowset.schedule.paths, ExplicitPaths) and flowset.schedule.paths.every


def test_without_msgspec_the_general_reader_reads(tmp_path, monkeypatch):
    path = tmp_path / "flows.json"
    path.write_text(json.dumps(_doc(3)))
    monkeypatch.setattr("netsim.schedule.flowjson._decoder", lambda: None)
    assert decode_flow_columns(path.read_bytes()) is None
    _same(_loaded(path), _general(path))


@pytest.mark.parametrize("seed", range(4))
def test_flows_output_is_byte_identical_to_the_general_paths(tmp_path, capsys, monkeypatch,
                                                              seed):
    """The command on the fast reader and array paths against the general reader with
    paths as a dict of tuples (as main had them), routed by route()."""
    doc = _doc(seed)
    for flow in doc["flows"]:                # every flow with a path: the router is used
        flow.setdefault("path", None)
    doc["flows"] = [f for f in doc["flows"] if f["path"]] or doc["flows"][:0]
    if not doc["flows"]:
        pytest.skip("no flow with a path")
    path = tmp_path / "flows.json"
    path.write_text(json.dumps(doc))
    fast_out, slow_out = tmp_path / "fast.json", tmp_path / "slow.json"
    code, _, err = run_main(["flows", str(path), "--format", "json", "-o", str(fast_out)],
                            capsys)
    assert code == 0, err
    general = flowfile.flows_from_dict

    def as_dicts(doc, source):
        flowset = general(doc, source)
        schedule = flowset.schedule
        return type(flowset)(flowset.topology, type(schedule)(**{
            **vars(schedule), "paths": dict(schedule.paths)}), flowset.flow_ids,
            flowset.not_before)

    monkeypatch.setattr(flowfile, "_fast_flowset", lambda raw, source: None)
    monkeypatch.setattr(flowfile, "flows_from_dict", as_dicts)
    code, _, err = run_main(["flows", str(path), "--format", "json", "-o", str(slow_out)],
                            capsys)
    assert code == 0, err
    assert fast_out.read_bytes() == slow_out.read_bytes()


def test_explicit_paths_as_a_mapping_and_a_router():
    paths = ExplicitPaths(np.array([0, 2, 3, 3]), np.array([7, 8, 9]))
    assert dict(paths) == {0: (7, 8), 1: (9,)} and len(paths) == 2 and not paths.every
    assert paths.get(2) is None and paths.get(1) == (9,) and 5 not in paths
    with pytest.raises(NetsimError):
        paths.link_paths(None, None, None, np.array([2]))        # op 2 has no path
    full = ExplicitPaths(np.array([0, 2, 3]), np.array([7, 8, 9]))
    table = full.link_paths(None, None, None, np.array([1, 0]))
    assert table.path_ptr.tolist() == [0, 1, 3] and table.path_links.tolist() == [9, 7, 8]
    assert table.sub_frac.tolist() == [1.0, 1.0] and full.every


@pytest.mark.parametrize("seed", range(5))
def test_names_found_as_arrays_are_those_a_dict_finds(seed):
    from netsim.schedule.namekeys import find_unicode

    rng = random.Random(seed)
    alphabet = "ab_-é→7 "
    names = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 20)))
                    for _ in range(rng.randrange(1, 300))})
    index = {name: i for i, name in enumerate(names)}
    values = [rng.choice(names) for _ in range(500)]
    found = find_unicode(np.array(values), names)
    assert found is not None and found.tolist() == [index[v] for v in values]
    assert find_unicode(np.array(values + ["not-a-name-at-all"]), names) is None


@pytest.mark.parametrize("suffix", [".npz", ".parquet"])
@pytest.mark.parametrize("names", ["plain", "long", "odd"])
def test_flow_tables_read_the_json_files_flow_set(tmp_path, suffix, names):
    from netsim.schedule import flows_to_table, write_flow_table

    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    doc = _doc(5, names)
    for n, flow in enumerate(doc["flows"]):      # a table column holds one type: str ids
        flow["path"] = flow.get("path") or None
        flow["id"] = str(flow.get("id", n))
        if "deps" in flow:
            flow["deps"] = [str(d) for d in flow["deps"]]
    table, source = tmp_path / f"flows{suffix}", tmp_path / "flows.json"
    write_flow_table(flows_to_table(doc), table)
    source.write_text(json.dumps(doc))
    _same(load_flow_file(table), _general(source))


def test_the_csv_from_columns_is_the_results_csv():
    from types import MethodType, SimpleNamespace

    from netsim.engine.result import Result
    from netsim.report import flow_result_csv

    rng = random.Random(1)
    n = 200
    ids = [rng.choice([i, f"f{i}", f'a,"b"{i}', f"line\n{i}", f" {i} "]) for i in range(n)]
    result = SimpleNamespace(op_ids=ids, op_start=np.array([rng.random() for _ in range(n)]),
                             op_finish=np.array([rng.expovariate(1e6) for _ in range(n)]))
    result.flow_records = MethodType(Result.flow_records, result)
    assert flow_result_csv(result) == Result.flows_csv(result)
