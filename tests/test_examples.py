"""The example files the README names run as it says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize("name", sorted(p.name for p in (EXAMPLES / "flows").glob("*.json")))
def test_every_example_flow_file_runs(name, capsys):
    code, stdout, err = run_main(["flows", str(EXAMPLES / "flows" / name), "--format", "json"],
                                 capsys)
    assert code == 0, err
    doc = json.loads(stdout)
    assert doc["makespan"] > 0 and doc["records"]


def test_incast_keeps_the_shared_link_busy_for_all_its_bytes(capsys):
    code, stdout, err = run_main(["flows", str(EXAMPLES / "flows" / "incast.json"),
                                  "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(stdout)
    links = {link["id"]: link for link in doc["links"]}
    # three 8 MiB flows into d share s-d (25 GB/s) and it never idles in between
    assert links["s-d"]["busy_s"] == pytest.approx(3 * 8 * 2**20 / 25e9, rel=1e-9)
    finish = {r["id"]: r["finish_s"] for r in doc["records"]}
    start = {r["id"]: r["start_s"] for r in doc["records"]}
    assert start["reply"] == pytest.approx(max(finish[f] for f in ("a->d", "b->d", "c->d")))


def test_topo_writes_parquet(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    out = tmp_path / "t.parquet"
    code, _, err = run_main(["topo", "dgx-h100", "--format", "parquet", "-o", str(out)], capsys)
    assert code == 0, err
    assert pd.read_parquet(out)["endpoints"].tolist() == [8]


def test_the_npz_example_is_the_json_one_as_columns(capsys):
    """The same flows from JSON and from numpy columns give the same finish times."""
    finishes = []
    for name in ("mesh-shift.json", "mesh-shift.npz"):
        code, stdout, err = run_main(["flows", str(EXAMPLES / "flows" / name), "--format",
                                      "json"], capsys)
        assert code == 0, err
        finishes.append({str(r["id"]): r["finish_s"] for r in json.loads(stdout)["records"]})
    assert finishes[0] == finishes[1] and len(finishes[0]) == 5


def test_the_nccl_tests_log_example_runs_as_measured(capsys):
    """The shipped nccl-tests log is read whole: 4 GPUs from its header, compared per size."""
    log = EXAMPLES / "logs" / "h100-4gpu-all_reduce_perf.txt"
    code, stdout, err = run_main(["coll", "allreduce", "--topo", "dgx-h100", "--sizes",
                                  "8MiB:16MiB", "--measured", str(log), "--format", "json"],
                                 capsys)
    assert code == 0, err
    records = json.loads(stdout)["records"]
    assert [r["ranks"] for r in records] == [4, 4]
    # the log's out-of-place times at 8 and 16 MiB (us), as printed
    assert [r["measured_time_s"] for r in records] == pytest.approx([62.88e-6, 102.10e-6])
