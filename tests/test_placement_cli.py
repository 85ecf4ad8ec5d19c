"""``netsim place``: the table, JSON and CSV outputs, files, and one-line errors."""

import csv
import io
import json

import click
import pytest
from click.testing import CliRunner

from netsim.cli import cli, main

SPEC = "mesh:2x4,bw=10GB/s"


def invoke(*args):
    return CliRunner().invoke(cli, ["place", *args])


@click.command(context_settings={"ignore_unknown_options": True}, add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def through_main(args):
    main(["place", *args])


def test_json_has_the_closed_form_times():
    # 2x4 mesh, TP 4 on rows: 1.5 S / B = 0.6 ms; interleaved groups share links: 1.2 ms
    result = invoke("--topo", SPEC, "--tp", "4", "--dp", "2", "--tp-bytes", "4MB",
                    "--strategies", "row_major,interleaved", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    rows = {r["strategy"]: r for r in doc["records"]}
    assert rows["row_major"]["step_s"] == pytest.approx(6e-4)
    assert rows["interleaved"]["step_s"] == pytest.approx(1.2e-3)
    assert rows["interleaved"]["vs_row_major_pct"] == pytest.approx(100.0)
    assert rows["row_major"]["tp-allreduce_s"] == pytest.approx(6e-4)
    assert doc["placements"]["interleaved"] == ["0_0", "0_2", "1_0", "1_2", "0_1", "0_3",
                                                "1_1", "1_3"]
    assert doc["layout"]["tp"] == 4 and doc["phases"][0]["bytes"] == 4e6


def test_table_and_csv_list_every_strategy_with_the_search_last():
    result = invoke("--topo", SPEC, "--tp", "4", "--dp", "2", "--tp-bytes", "1MB",
                    "--dp-bytes", "1MB", "--budget", "3", "--overlap")
    assert result.exit_code == 0, result.output
    for text in ("row_major", "column_major", "snake", "interleaved", "tiles", "hilbert",
                 "random", "search", "tp-allreduce", "dp-allreduce", "vs row-major",
                 "phases overlapped"):
        assert text in result.stdout, text
    result = invoke("--topo", SPEC, "--tp", "4", "--dp", "2", "--tp-bytes", "1MB",
                    "--strategies", "snake,search", "--budget", "2", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["strategy"] for r in rows] == ["snake", "search"]
    assert float(rows[1]["step_s"]) <= float(rows[0]["step_s"])


def test_explicit_map_and_output_file(tmp_path):
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps(["0_0", "0_1", "0_2", "0_3", "1_0", "1_1", "1_2", "1_3"]))
    out = tmp_path / "out.csv"
    args = ["--topo", SPEC, "--tp", "4", "--dp", "2", "--tp-bytes", "4MB", "--strategies",
            "explicit,row_major", "--map", str(mapping), "--format", "csv", "-o", str(out)]
    assert invoke(*args).exit_code == 0
    rows = list(csv.DictReader(out.open()))
    assert rows[0]["strategy"] == "explicit"
    assert float(rows[0]["step_s"]) == pytest.approx(float(rows[1]["step_s"]))
    again = CliRunner().invoke(through_main, args)
    assert again.exit_code == 2 and "already exists (use --overwrite" in again.stderr
    assert CliRunner().invoke(through_main, [*args, "--overwrite"]).exit_code == 0


@pytest.mark.parametrize("args, message", [
    (("--tp", "8", "--dp", "2", "--tp-bytes", "1MB"),
     "parallel degrees tp=8 x dp=2 = 16 ranks do not match the 8 chips of 'mesh-2x4'"),
    (("--tp", "8", "--tp-bytes", "1MB", "--strategies", "snak"),
     "unknown placement strategy 'snak': did you mean 'snake'?"),
    (("--tp", "8", "--tp-bytes", "1MB", "--strategies", "explicit"),
     "strategy explicit needs --map FILE"),
    (("--tp", "8", "--dp-bytes", "1MB"),
     "no phase of the workload moves data on layout tp=8"),
    (("--tp", "8", "--tp-bytes", "lots"), "--tp-bytes"),
    (("--tp", "8", "--tp-bytes", "1MB", "--repeat", "tq=2"),
     "unknown parallel dimension 'tq': did you mean 'tp'?"),
])
def test_errors_are_one_line(args, message):
    result = CliRunner().invoke(through_main, ["--topo", SPEC, *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("netsim: error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1


def test_switch_machines_and_tori_run_too():
    for spec, degrees in (("nvswitch:8,bw=450GB/s", ("--tp", "4", "--dp", "2")),
                          ("torus:4x4,bw=50GB/s", ("--tp", "4", "--dp", "4"))):
        result = invoke("--topo", spec, *degrees, "--tp-bytes", "1MB", "--dp-bytes", "1MB",
                        "--budget", "2", "--format", "json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["records"][-1]["strategy"] == "search"


def test_heatmaps_per_strategy(tmp_path):
    pytest.importorskip("netsim.report.placement_map")
    result = invoke("--topo", SPEC, "--tp", "4", "--dp", "2", "--tp-bytes", "1MB",
                    "--strategies", "row_major,snake", "--heatmap", str(tmp_path / "h.png"))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "h-row_major-placement.png", "h-row_major.png", "h-snake-placement.png",
        "h-snake.png"]


def test_layout_order_changes_the_numbering_and_the_old_spelling_is_gone():
    base = ["--topo", SPEC, "--tp", "4", "--dp", "2", "--tp-bytes", "4MB",
            "--strategies", "row_major", "--format", "json", "--seconds", "30s"]
    new = invoke(*base, "--layout-order", "dp-tp-cp-ep-pp")
    assert new.exit_code == 0, new.output
    old = invoke(*base, "--order", "dp-tp-cp-ep-pp")
    assert old.exit_code == 2 and "'--layout-order'" in old.output


def test_the_default_is_the_machines_library_and_strategies_it_cannot_run_are_skipped(capsys):
    """netsim place runs what the machine's library runs (NCCL's model on a DGX cluster, as
    netsim coll and netsim plan do); a strategy whose groups that model cannot run (ranks
    spread unevenly over the servers) is skipped with its reason, the others scored."""
    from cli_helpers import run_main

    argv = ["place", "--topo", "dgx-h100-cluster:nodes=2", "--tp", "4", "--dp", "4",
            "--tp-bytes", "16MiB", "--dp-bytes", "64MiB", "--format", "json"]
    code, out, err = run_main([*argv, "--strategies", "row_major,random"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert [r["strategy"] for r in doc["records"]] == ["row_major"]
    assert doc["records"][0]["algorithms"] == "nccl"
    assert "same number of ranks per node" in doc["unrunnable"]["random"]
    assert "skipped random (its groups cannot run)" in err
    code, out, err = run_main([*argv, "--strategies", "random"], capsys)
    assert code == 2 and out == ""
    assert "no placement strategy can run its collectives" in err and "\n" not in err.strip()
