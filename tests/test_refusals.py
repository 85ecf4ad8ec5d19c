"""Runs too big for the machine are refused before they allocate, with one line.

Each case would grow to gigabytes (and be killed by the operating system, or segfault
under ``ulimit -v``) if it were not estimated first. They run in a child process under an
address-space limit, so a regression fails the test instead of hurting the machine.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from netsim import budget
from netsim.units import parse_size

from cli_helpers import run_main

LIMIT = 3 * 2**30               # bytes of address space of each child


def _limit() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _child(*argv: str, cwd=None) -> tuple[int, str]:
    """(exit code, stderr) of ``python -m netsim ARGV`` under :data:`LIMIT`."""
    done = subprocess.run([sys.executable, "-m", "netsim", *argv], capture_output=True,
                          text=True, timeout=120, preexec_fn=_limit, cwd=cwd,
                          env={**os.environ, "COLUMNS": "200"})
    return done.returncode, done.stderr


def _refused(code: int, stderr: str) -> float:
    """The estimate (bytes) of a one-line refusal; fails the test for anything else."""
    assert "Traceback" not in stderr, stderr
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("netsim: error:"), stderr
    found = re.search(r"would need about ([0-9.]+ [KMGTP]?i?B) of memory, above the "
                      r"([0-9.]+ [KMGTP]?i?B)", lines[0])
    assert found, lines[0]
    need, room = (parse_size(g) for g in found.groups())
    assert need > room
    return need


def _chain(path, n: int) -> str:
    lines = [f"name: chain{n}", "nodes:"] + [f"  - {{name: c{i}}}" for i in range(n)]
    lines += ["links:"] + [f"  - {{src: c{i}, dst: c{i + 1}, bandwidth: 25GB/s, duplex: true}}"
                           for i in range(n - 1)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_the_budget_leaves_out_the_address_space_already_mapped():
    # under `ulimit -v`, the interpreter and its libraries (~300 MB) count against the limit
    code = ("import resource, numpy, scipy.sparse, netsim.budget as b; "
            "resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31)); "
            "print(b.available_memory())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert 0 < int(done.stdout) < 2**31 - 50 * 2**20


def test_a_huge_dgx_cluster_is_refused_before_it_is_built():
    # grew to 24 GB before the estimate; 100,000 nodes x 8 GPUs x 19 NVLink cables, and
    # every leaf cabled to every spine (25,000 x 12,500)
    need = _refused(*_child("topo", "dgx-h100-cluster:nodes=100000"))
    assert need > 100 * 2**30
    assert "dgx_cluster:nodes=100000" in _child("topo", "dgx-h100-cluster:nodes=100000")[1]


def test_the_cluster_estimate_counts_the_links_the_generator_makes():
    from netsim.topology.clusters import dgx_cluster

    seen = []
    real = budget.require_memory
    try:
        budget.require_memory = lambda need, what, **kw: seen.append((need, what))
        topo = dgx_cluster(40)
    finally:
        budget.require_memory = real
    (need, what), = seen
    assert f"{topo.num_links:.3g} links" in what and f"{topo.num_nodes:.3g} nodes" in what
    assert need == topo.num_nodes * budget.BYTES_PER_NODE + topo.num_links * budget.BYTES_PER_LINK


def test_a_ring_of_a_hundred_million_is_refused(capsys):
    code, _, err = run_main(["--max-memory", "1GiB", "topo", "ring:100000000"], capsys)
    assert code == 2 and "ring:100000000 (1e+08 nodes, 2e+08 links)" in err
    assert "would need about" in err and "Traceback" not in err


def test_a_file_link_count_is_estimated_at_what_the_builder_holds(tmp_path):
    # `count: 32000000` duplex was estimated at 12 GiB (200 B a link) and peaked at 22 GB:
    # the builder holds about 350 B a link
    path = tmp_path / "planes.yaml"
    path.write_text("name: planes\nnodes: [{name: a}, {name: b}]\nlinks:\n"
                    "  - {src: a, dst: b, bandwidth: 25GB/s, duplex: true, count: 32000000}\n")
    need = _refused(*_child("topo", str(path)))
    assert need >= 64e6 * 340


def test_a_chakra_export_is_estimated_before_it_is_written(tmp_path, capsys):
    # ring all-reduce on 1,024 ranks: 2.1M sends; took 7.7 GB with no estimate (and
    # segfaulted under ulimit -v 4 GiB)
    pytest.importorskip("chakra")
    code, _, err = run_main(["--max-memory", "400MiB", "export", "chakra", "allreduce",
                             "--topo", "torus:32x32", "--algo", "ring", "--size", "1GiB",
                             "-o", str(tmp_path / "tr.%d.et")], capsys)
    assert code == 2 and "Traceback" not in err, err
    assert "Chakra export of 1024 traces (2.1e+06 sends) would need about" in err
    assert list(tmp_path.iterdir()) == []


def test_a_chakra_export_that_fails_half_way_leaves_no_traces(tmp_path, capsys, monkeypatch):
    pytest.importorskip("chakra")
    from netsim import outputs

    real, calls = outputs.write_atomic, []

    def full_disk(path, data, overwrite=False):
        calls.append(path)
        if len(calls) == 3:
            raise outputs.OutputError(f"{path}: cannot write: No space left on device")
        return real(path, data, overwrite)

    monkeypatch.setattr(outputs, "write_atomic", full_disk)
    code, _, err = run_main(["export", "chakra", "allreduce", "--topo", "torus:2x2",
                             "--algo", "ring", "--size", "1MiB",
                             "-o", str(tmp_path / "tr.%d.et")], capsys)
    assert code != 0 and "No space left on device" in err and "Traceback" not in err
    assert len(calls) == 3 and list(tmp_path.iterdir()) == []


def _noc_scenario(path, rows: int, cols: int) -> str:
    path.write_text(f"name: noc\njobs:\n  - kind: noc-placement\n"
                    f"    grid: {{rows: {rows}, cols: {cols}}}\n    operators:\n"
                    f"      - {{name: a, rows: 2, cols: 4, out_bytes: 2MiB}}\n"
                    f"      - {{name: b, rows: 2, cols: 4, out_bytes: 2MiB}}\n"
                    f"    strategies: [adjacent]\n")
    return str(path)


def test_a_huge_noc_grid_is_refused_before_its_cores_are_made(tmp_path):
    need = _refused(*_child("run", _noc_scenario(tmp_path / "noc.yaml", 100000, 100000)))
    assert need >= 1e10 * budget.BYTES_PER_NODE


def test_noc_route_tables_are_estimated_before_they_are_built(tmp_path, capsys):
    # 60 x 60 cores: 2 x 3600^2 routes of ~59 links each, about 25 GiB of tables; a 40 x 40
    # grid (3.6 GiB estimated) peaked at 2.7 GB
    code, _, err = run_main(["--max-memory", "2GiB", "run",
                             _noc_scenario(tmp_path / "noc.yaml", 60, 60)], capsys)
    assert code == 2 and "Traceback" not in err, err
    assert "NoC route tables of 'tensix-60x60' (2.59e+07 routes) would need about" in err


def test_a_run_without_symmetry_is_estimated_before_the_engine_starts(tmp_path, capsys):
    # A ring on a chain file: the wrap-around send crosses the whole chain, the flows
    # share no symmetry, and the engine holds ~600 B a flow (not the ~330 B a send of a
    # torus, where classes are found): a 2,000-chip chain ran 113 s and died at 4 GiB.
    topo = _chain(tmp_path / "chain.yaml", 300)
    code, _, err = run_main(["--max-memory", "120MiB", "coll", "allreduce", "--topo", topo,
                             "--algo", "ring", "--size", "1MiB"], capsys)
    assert code == 2 and "Traceback" not in err, err
    assert "the engine on 1.79e+05 flows of 1.99 links each (no symmetry to share)" in err
    assert len(err.strip().splitlines()) == 1


def test_a_nodes_file_honours_the_input_size_cap(capsys):
    # `--nodes @/dev/zero` was read with no bound until memory ran out
    code, _, err = run_main(["coll", "allreduce", "--topo", "mesh:4x4", "--nodes",
                             "@/dev/zero", "--size", "1MiB"], capsys)
    assert code == 2 and "Traceback" not in err
    assert err.strip() == ("netsim: error: /dev/zero: cannot read the --nodes list: larger "
                           "than the 256 MiB an input file may have")


def test_a_nodes_file_still_reads_names_and_comments(tmp_path, capsys):
    path = tmp_path / "nodes.txt"
    path.write_text("\ufeff0_0, 0_1  # the first row\n1_0\n")
    code, out, err = run_main(["coll", "allreduce", "--topo", "mesh:4x4", "--nodes",
                               f"@{path}", "--size", "1MiB", "--algo", "ring",
                               "--format", "json"], capsys)
    assert code == 0, err
    assert '"ranks": 3' in out


def test_a_gzipped_chakra_trace_is_unzipped_within_the_bound(tmp_path, monkeypatch, capsys):
    pytest.importorskip("chakra")
    import gzip

    from netsim.interop import chakra

    monkeypatch.setattr(chakra, "_MAX_TRACE_BYTES", 1000)
    path = tmp_path / "bomb.0.et"
    path.write_bytes(gzip.compress(b"\0" * 100_000))        # 100 kB from ~130 bytes
    with pytest.raises(chakra.InputError, match="more than 1000 bytes once unzipped"):
        chakra.read_trace(path)


def test_a_big_yaml_file_is_estimated_at_its_node_tree(tmp_path, capsys):
    # PyYAML's node tree is ~120 bytes a character: a 3 MB topology file needs ~400 MB,
    # where the input cap assumed ten times the file
    topo = _chain(tmp_path / "chain.yaml", 20000)
    size = (tmp_path / "chain.yaml").stat().st_size
    code, _, err = run_main(["--max-memory", "100MiB", "topo", topo], capsys)
    assert code == 2 and "Traceback" not in err, err
    assert f"chain.yaml: reading {size:,} characters of YAML would need about" in err


# -- tracebacks that became one-line errors ---------------------------------------------

def _one_error(code: int, err: str, *parts: str) -> None:
    assert code == 2 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("netsim: error: "), err
    for part in parts:
        assert part in err, err


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_an_integer_of_5000_digits_is_an_input_error(tmp_path, capsys, suffix):
    path = tmp_path / f"big.{suffix}"
    path.write_text('{"name": "x", "nodes": [{"name": "a"}, {"name": "b"}], "links": '
                    '[{"src": "a", "dst": "b", "bandwidth": ' + "9" * 5000 + "}]}")
    code, _, err = run_main(["topo", str(path)], capsys)
    _one_error(code, err, f"big.{suffix}", "line 1", "5,000 characters")


def test_an_integer_of_5000_digits_in_a_flow_file(tmp_path, capsys):
    path = tmp_path / "flows.json"
    path.write_text('{"topology": "mesh:1x2", "flows": [{"src": "0_0", "dst": "0_1", '
                    '"bytes": ' + "9" * 5000 + "}]}")
    code, _, err = run_main(["flows", str(path)], capsys)
    _one_error(code, err, "flows.json", "too many digits")


@pytest.mark.parametrize("suffix", ["npz", "parquet"])
def test_a_flow_table_with_an_unknown_link_names_the_flow(tmp_path, capsys, suffix):
    if suffix == "parquet":
        pytest.importorskip("pyarrow")
    from netsim.schedule.flowtable import flows_to_table, write_flow_table

    doc = {"topology": "mesh:1x3", "flows": [
        {"id": "ok", "src": "0_0", "dst": "0_1", "bytes": 10},
        {"id": "bad", "src": "0_0", "dst": "0_2", "bytes": 10,
         "path": ["0_0->0_1", "0_9->0_2"]}]}
    path = tmp_path / f"t.{suffix}"
    write_flow_table(flows_to_table(doc), path)
    code, _, err = run_main(["flows", str(path)], capsys)
    _one_error(code, err, f"t.{suffix}: row 1 (flow 'bad')", "unknown link '0_9->0_2'")


def test_a_noc_operator_with_an_unknown_successor(tmp_path, capsys):
    path = tmp_path / "noc.yaml"
    path.write_text("name: noc\njobs:\n  - kind: noc-placement\n    operators:\n"
                    "      - {name: a, rows: 2, cols: 4, out_bytes: 2MiB, successors: [nope]}\n"
                    "      - {name: b, rows: 2, cols: 4, out_bytes: 2MiB, successors: []}\n"
                    "    strategies: [adjacent]\n")
    code, _, err = run_main(["run", str(path)], capsys)
    _one_error(code, err, "noc.yaml", "successor of operator 'a'", "'nope'")


def test_normalizing_injection_with_a_machine_without_links(capsys):
    code, _, err = run_main(["compare", "allreduce", "--topo", "mesh:1x1", "--topo",
                             "mesh:4x4", "--normalize", "injection", "--size", "1MiB"], capsys)
    _one_error(code, err, "--normalize injection", "'mesh-1x1'", "injection bandwidth 0")


@pytest.mark.parametrize("argv, part", [(["--ranks", "1", "--topo", "mesh:2x2"], "got 1"),
                                        (["--topo", "mesh:1x1"], "endpoints of 'mesh-1x1'")])
def test_synthesis_on_one_rank(capsys, argv, part):
    code, _, err = run_main(["synth", "allgather", *argv], capsys)
    _one_error(code, err, "--ranks: allgather needs at least 2 ranks", part)


def test_a_closed_standard_output_is_one_line(tmp_path):
    # `netsim topo mesh:4x4 >&-`: sys.stdout is None and flushing it raised AttributeError
    done = subprocess.run([sys.executable, "-m", "netsim", "topo", "mesh:4x4"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          preexec_fn=lambda: os.close(1))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == "netsim: error: standard output: closed (Bad file descriptor)"
    out = tmp_path / "t.txt"          # with -o, a closed stdout is not needed
    done = subprocess.run([sys.executable, "-m", "netsim", "topo", "mesh:4x4", "-o", str(out)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          preexec_fn=lambda: os.close(1))
    assert done.returncode == 0 and "mesh-4x4" in out.read_text()


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_a_non_finite_coordinate_is_refused_where_it_is_read(tmp_path, capsys, value):
    # a NaN coordinate reached matplotlib, whose figure-size check raised ValueError
    path = tmp_path / "coords.yaml"
    path.write_text(f"name: c\nnodes:\n  - {{name: a, coord: [{value}, 0]}}\n"
                    f"  - {{name: b, coord: [1, 0]}}\n"
                    f"links:\n  - {{src: a, dst: b, bandwidth: 25GB/s}}\n")
    code, _, err = run_main(["coll", "allreduce", "--topo", str(path), "--size", "1MiB",
                             "--heatmap", str(tmp_path / "h.png")], capsys)
    _one_error(code, err, "coords.yaml", "nodes[0].coord[0]", "finite", "line 3")
    assert not (tmp_path / "h.png").exists()


def test_a_title_that_is_not_mathtext(tmp_path, capsys):
    result = tmp_path / "r.json"
    assert run_main(["coll", "allreduce", "--topo", "mesh:2x2", "--algo", "ring", "--size",
                     "1MiB", "--save-result", str(result)], capsys)[0] == 0
    figure = tmp_path / "h.png"
    code, _, err = run_main(["heatmap", str(result), "-o", str(figure), "--title", r"$\x$"],
                            capsys)
    _one_error(code, err, "h.png: cannot draw the text", r"not valid mathtext")
    assert not figure.exists()
    code, _, err = run_main(["heatmap", str(result), "-o", str(figure), "--title",
                             r"cost in $ and $\alpha$"], capsys)
    assert code == 0 and figure.exists(), err


@pytest.mark.parametrize("how", ["spec", "file", "flows"])
def test_a_subnormal_rate_is_refused_without_warnings(tmp_path, how):
    # 1e-310 B/s overflowed the engine's divisions (RuntimeWarning) and ended in a
    # misleading "op 0 never finished: its dependencies never completed"
    if how == "spec":
        argv = ["coll", "allreduce", "--topo", "mesh:2x2,bw=1e-310B/s", "--size", "1MiB"]
    elif how == "file":
        path = tmp_path / "slow.yaml"
        path.write_text("name: s\nnodes: [{name: a}, {name: b}]\nlinks:\n"
                        "  - {src: a, dst: b, bandwidth: 1e-310}\n")
        argv = ["topo", str(path)]
    else:
        path = tmp_path / "slow.json"
        path.write_text('{"links": [{"id": "ab", "src": "a", "dst": "b", "bandwidth": '
                        '1e-310}], "flows": [{"src": "a", "dst": "b", "bytes": 10}]}')
        argv = ["flows", str(path)]
    done = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", "netsim",
                           *argv], capture_output=True, text=True)
    _one_error(done.returncode, done.stderr, "1e-310 bytes/s", "below the smallest rate")


def test_the_smallest_rate_still_runs():
    from netsim.units import MIN_RATE, parse_rate

    assert parse_rate(MIN_RATE) == MIN_RATE and parse_rate(0) == 0.0
    assert parse_rate("1e-9B/s") == 1e-9


def test_a_full_disk_leaves_no_heatmaps_behind(tmp_path, capsys, monkeypatch):
    # the heatmaps (one per size) were written, then -o failed: a partial set was left
    from netsim.cli import options
    from netsim.outputs import OutputError

    def full_disk(path, data, overwrite=False):
        raise OutputError(f"{path}: cannot write: No space left on device")

    monkeypatch.setattr(options, "write_atomic", full_disk)
    code, _, err = run_main(["coll", "allreduce", "--topo", "mesh:2x2", "--algo", "ring",
                             "--size", "1MiB,2MiB", "--heatmap", str(tmp_path / "h.png"),
                             "-o", str(tmp_path / "out.txt")], capsys)
    assert code == 1 and "No space left on device" in err and "Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    code, _, err = run_main(["coll", "allreduce", "--topo", "mesh:2x2", "--algo", "ring",
                             "--size", "1MiB,2MiB", "--heatmap", str(tmp_path / "h.png"),
                             "-o", str(tmp_path / "out.txt")], capsys)
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h-1MiB.png", "h-2MiB.png", "out.txt"]


# -- summaries of big irregular machines -------------------------------------------------

def _random_machine(rng, trial: int):
    from netsim.topology import TopologyBuilder

    n = int(rng.integers(2, 40))
    b = TopologyBuilder(f"random-{trial}")
    switch = rng.random(n) < 0.4
    switch[:2] = False
    for i in range(n):
        b.add_node(f"v{i}", switch=bool(switch[i]))
    for _ in range(int(rng.integers(1, 3 * n))):
        a, c = rng.integers(0, n, 2)
        if a != c:
            b.add_cable(f"v{a}", f"v{c}", 1e9, 0.0)
    return b.build()


def test_the_diameter_of_undirected_machines_matches_a_bfs_from_every_endpoint():
    import numpy as np
    from scipy.sparse import csr_matrix

    from netsim.topology import summary

    rng = np.random.default_rng(7)
    for trial in range(200):
        topo = _random_machine(rng, trial)
        n = topo.num_nodes
        graph = csr_matrix((np.ones(topo.num_links), (topo.link_src, topo.link_dst)),
                           shape=(n, n))
        worst = max(summary._eccentricities(graph, topo.endpoints, topo.endpoints))
        assert summary.diameter(topo) == (None if np.isinf(worst) else int(worst)), trial


def test_a_long_chain_is_summarised_with_a_few_searches():
    # a 200,000-chip chain file ran for more than 300 s (a BFS per chip for the diameter,
    # Kernighan-Lin in Python for the bisection)
    from netsim.topology import TopologyBuilder, summarize

    n = 30_000
    b = TopologyBuilder("chain")
    for i in range(n):
        b.add_node(f"c{i}")
    for i in range(n - 1):
        b.add_cable(f"c{i}", f"c{i + 1}", 25e9, 0.0)
    s = summarize(b.build())
    assert s["diameter"] == n - 1
    assert s["bisection_bandwidth_Bps"] == 25e9             # one cable: exact on a chain
    assert s["bisection_method"].startswith("heuristic (BFS-order split")


def test_the_fast_yaml_reader_reads_what_the_strict_one_reads():
    # libyaml's parser (4x faster on a 40,000-line file) with the same rules; a document
    # it refuses is worded by the pure-Python reader the corpus pins
    from netsim._inputs import yamlio

    if yamlio._FastLoader is None:
        pytest.skip("PyYAML without libyaml")
    text = "a: 3_3\nb: 1e9\nc: no\nd: 0x10\ne: 1.5\nf: [1, 2]\n"
    assert yamlio.load_yaml(text, "x")[0] == {"a": "3_3", "b": "1e9", "c": False, "d": 16,
                                              "e": 1.5, "f": [1, 2]}
    with pytest.raises(yamlio.InputError, match=r"x: line 2: invalid YAML: key 'a' is given "
                                                r"twice \(lines 1 and 2\)"):
        yamlio.load_yaml("a: 1\na: 2\n", "x")
    with pytest.raises(yamlio.InputError, match=r"x: line 2: invalid YAML: .*'\\t'"):
        yamlio.load_yaml("a:\n\t- 1\n", "x")


def test_a_big_document_without_aliases_is_not_an_alias_bomb(monkeypatch):
    # a 200,000-chip chain file (2.4M values) was refused: "aliases expand it to more than
    # 2000000 values"; it has no alias, and what it holds was estimated from its text
    from netsim._inputs import yamlio

    monkeypatch.setattr(yamlio, "MAX_YAML_NODES", 100)
    plain = "".join(f"- {{name: c{i}, x: {i}}}\n" for i in range(60))    # ~300 values
    assert len(yamlio.load_yaml(plain, "x")[0]) == 60
    bomb = "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: &b [*a, *a, *a, *a, *a, *a]\n" \
           "c: [*b, *b, *b]\n"
    with pytest.raises(yamlio.InputError, match="aliases expand it to more than 100"):
        yamlio.load_yaml(bomb, "x")
