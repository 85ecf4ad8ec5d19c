"""Flow files: the column checks agree with the per-record models, tables round-trip,
errors name the row and field, the JSON reader refuses duplicate keys, results by suffix."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from netsim._inputs.jsonio import loads_json
from netsim.errors import InputError
from netsim.schedule import (FlowFileModel, ScheduleFileModel, flows_from_dict, flows_to_table,
                             load_flow_file, write_flow_table)
from netsim.schedule.flowfile import _flows_by_record
from netsim.schedule.flownetwork import network_of
from netsim.topology import mesh

from cli_helpers import run_main


def _random_doc(seed: int, k: int = 3) -> dict:
    """A valid flow document on a k x k mesh given by links: XY paths on some flows, unit
    strings, int and str ids, and dependencies on earlier or later flows (no cycles)."""
    from netsim.engine import route_schedule
    from netsim.schedule import sends_from_arrays

    rng = random.Random(seed)
    topo = mesh((k, k), bandwidth=1e9)
    names = topo.node_names
    links = [{"id": f"L{i}", "src": names[s], "dst": names[d],
              "bandwidth": rng.choice([1e9, "8Gbps", "2GB/s"]), "latency": rng.choice([0, "1us"])}
             for i, (s, d) in enumerate(zip(topo.link_src.tolist(), topo.link_dst.tolist()))]
    n = 30
    src = [rng.randrange(k * k) for _ in range(n)]
    dst = [(s + rng.randrange(1, k * k)) % (k * k) for s in src]
    routes = route_schedule(topo, sends_from_arrays(k * k, src, dst, 1.0), np.arange(k * k))
    rank = list(range(n))
    rng.shuffle(rank)                      # deps point from higher to lower rank: acyclic
    ids = [f"f{i}" if i % 2 else i for i in range(n)]
    flows = []
    for i in range(n):
        flow = {"id": ids[i], "src": names[src[i]], "dst": names[dst[i]],
                "bytes": rng.choice([1000, 2.5e6, "1MiB", "3KB", 0])}
        if rng.random() < 0.5:
            hops = routes.path_links[routes.path_ptr[i]:routes.path_ptr[i + 1]].tolist()
            flow["path"] = [f"L{h}" for h in hops]
        if rng.random() < 0.3:
            flow["start"] = rng.choice(["2us", 1e-6])
        earlier = [j for j in range(n) if rank[j] < rank[i]]
        if earlier and rng.random() < 0.5:
            flow["deps"] = [ids[j] for j in rng.sample(earlier, min(3, len(earlier)))]
        flows.append(flow)
    return {"links": links, "flows": flows}


def _by_id(flowset) -> dict:
    """Each flow's facts keyed by its id as text (op order may differ between loaders;
    a table column holds one type, so ids 1 and "f1" come back as "1" and "f1")."""
    s = flowset.schedule
    ids = flowset.flow_ids
    out = {}
    for op, fid in enumerate(ids):
        out[str(fid)] = (int(s.src[op]), int(s.dst[op]), float(s.nbytes[op]),
                         float(flowset.not_before[op]), s.paths.get(op),
                         sorted(str(ids[d]) for d in s.deps(op)))
        assert all(d < op for d in s.deps(op))           # deps come first: a DAG in order
    return out


@pytest.mark.parametrize("seed", range(6))
def test_columns_and_records_build_the_same_flows(seed):
    doc = _random_doc(seed)
    fast = flows_from_dict(doc, "doc")
    topology, flows = network_of(doc, "doc")
    slow = _flows_by_record(topology, flows, "doc")
    assert _by_id(fast) == _by_id(slow)
    assert sorted(map(str, fast.flow_ids)) == sorted(str(f["id"]) for f in doc["flows"])


@pytest.mark.parametrize("suffix", [".npz", ".parquet"])
def test_tables_round_trip(tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    doc = _random_doc(7)
    path = tmp_path / f"flows{suffix}"
    write_flow_table(flows_to_table(doc), path)
    assert _by_id(load_flow_file(path)) == _by_id(flows_from_dict(doc, "doc"))


@pytest.mark.parametrize("change, words", [
    (lambda d: d["flows"][4].update(dst="nowhere"), ["flows[4].dst", "unknown node 'nowhere'"]),
    (lambda d: d["flows"][5].update(bytes="-3MB"), ["flows[5].bytes", ">= 0", "'-3MB'"]),
    (lambda d: d["flows"][6].update(path=["L0", "L0"]), ["flows[6].path"]),
    (lambda d: d["flows"][2].update(deps=["f1"]) or d["flows"][1].update(deps=[2]),
     ["dependency cycle"]),
    (lambda d: d["flows"][3].update(sizee=1), ["flows[3]", "unknown field 'sizee'"]),
])
def test_a_failed_column_check_is_worded_by_the_models(change, words):
    doc = _random_doc(3)
    change(doc)
    with pytest.raises(InputError) as err:
        flows_from_dict(doc, "doc.json")
    assert all(w in str(err.value) for w in words), str(err.value)


def test_table_errors_name_the_row_and_column(tmp_path):
    doc = _random_doc(4)
    doc["flows"][9]["src"] = "9_9"
    path = tmp_path / "bad.npz"
    write_flow_table(flows_to_table(doc), path)
    with pytest.raises(InputError, match=r"bad.npz: row 9 .*column 'src': unknown node '9_9'"):
        load_flow_file(path)


def test_duplicate_keys_are_refused_however_written():
    for text in ('{"a": 1, "a": 2}', '{"a" : 1,\n "a"\t: 2}', '[{"x": {"a": 1, "a": 1}}]'):
        with pytest.raises(InputError, match="key 'a' is given twice"):
            loads_json(text, "doc")
    # quotes and colons inside strings are not keys
    doc = {"a": "\":x", "b": ":", "c": ["\"", ": \" :"], "d\\": 1}
    assert loads_json(json.dumps(doc), "doc") == doc
    assert loads_json(json.dumps(doc, indent=3, separators=(" , ", " : ")), "doc") == doc
    deep = "[" * 300 + "1" + "]" * 300           # deeper than orjson writes, json reads it
    assert loads_json(deep, "doc") == json.loads(deep)
    with pytest.raises(InputError, match="nested too deeply"):
        loads_json("[" * 100_000 + "]" * 100_000, "doc")


def test_models_export_their_schema():
    flows = FlowFileModel.model_json_schema()
    assert {"flows", "links", "topology"} <= set(flows["properties"])
    assert "ops" in ScheduleFileModel.model_json_schema()["properties"]
    # sizes, rates and times accept the unit strings users write
    for model, field in (("FlowModel", "bytes"), ("FlowModel", "start"),
                         ("LinkModel", "bandwidth")):
        kinds = {b["type"] for b in flows["$defs"][model]["properties"][field]["anyOf"]}
        assert kinds == {"number", "string"}


@pytest.mark.parametrize("suffix", [".npz", ".parquet", ".csv", ".json"])
def test_flows_writes_the_result_the_suffix_names(tmp_path, capsys, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    flow_file = tmp_path / "f.json"
    flow_file.write_text(json.dumps(_random_doc(5)))
    code, out, _ = run_main(["flows", str(flow_file), "--format", "json"], capsys)
    assert code == 0
    reference = {str(r["id"]): r["finish_s"] for r in json.loads(out)["records"]}
    path = tmp_path / f"out{suffix}"
    assert run_main(["flows", str(flow_file), "-o", str(path)], capsys)[0] == 0
    if suffix == ".npz":
        data = np.load(path)
        got = dict(zip(map(str, data["id"].tolist()), data["finish_s"].tolist()))
        assert float(data["makespan"]) == max(reference.values())
    elif suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path).to_pydict()
        got = dict(zip(map(str, table["id"]), table["finish_s"]))
    elif suffix == ".csv":
        rows = [line.split(",") for line in path.read_text().splitlines()[1:]]
        got = {r[0]: float(r[2]) for r in rows}
    else:
        got = {str(r["id"]): r["finish_s"] for r in json.loads(path.read_text())["records"]}
    assert got == reference


def test_parquet_without_pyarrow_names_the_extra(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    flow_file = tmp_path / "f.json"
    flow_file.write_text(json.dumps(_random_doc(1)))
    code, _, err = run_main(["flows", str(flow_file), "-o", str(tmp_path / "o.parquet")],
                            capsys)
    assert code == 2 and "netsim[parquet]" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o.parquet").exists()


@pytest.mark.parametrize("arrays, words", [
    ({"bytes": np.array(["1MB", "lots"])}, ["row 1", "column 'bytes'", "'lots'"]),
    ({"deps": np.array([1, 0]), "dep_ptr": np.array([0, 1, 2])}, ["dependency cycle"]),
    ({"path_links": np.array(["x"]), "path_ptr": np.array([0, 1, 1])},
     ["row 0", "column 'path'", "unknown link 'x'"]),
    ({"path_links": np.array(["x"]), "path_ptr": np.array([0, 2, 1])}, ["'path_ptr'", "CSR"]),
    ({"byts": np.array([1, 2])}, ["unknown column 'byts'", "did you mean 'bytes'"]),
])
def test_bad_npz_tables_are_one_line_errors(tmp_path, arrays, words):
    columns = {"src": np.array(["0_0", "0_1"]), "dst": np.array(["0_1", "0_0"]),
               "bytes": np.array([1, 2]), "topology": np.array("mesh:1x2"), **arrays}
    if "byts" in arrays:
        del columns["bytes"]
    np.savez(tmp_path / "t.npz", **columns)
    with pytest.raises(InputError) as err:
        load_flow_file(tmp_path / "t.npz")
    assert all(w in str(err.value) for w in words), str(err.value)
