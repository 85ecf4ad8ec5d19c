"""``netsim coll``: tables, JSON/CSV records, sweeps, errors, --list and the report seam."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from netsim.algorithms import registry
from netsim.cli import cli, coll, main
from netsim.schedule import ScheduleBuilder

SPEC = "ring:8,bw=10GB/s"   # 8 ranks, 10 GB/s per link and direction, no latency


def _one_way_ring(n, size, options):
    """2(n-1) steps of S/n around the ring: 2 (n-1)/n S / B on a ring of B links."""
    b, delivered = ScheduleBuilder(n), [None] * n
    for _ in range(2 * (n - 1)):
        arrived = [None] * n
        for r in range(n):
            arrived[(r + 1) % n] = b.send(r, (r + 1) % n, size / n,
                                          [] if delivered[r] is None else [delivered[r]])
        delivered = arrived
    return b.build()


def _everyone_to_everyone(n, size, options):
    b = ScheduleBuilder(n)
    for src in range(n):
        for dst in range(n):
            if src != dst:
                b.send(src, dst, size)
    return b.build()


@pytest.fixture(autouse=True)
def doubles(monkeypatch):
    """Test-double algorithms in the registry for the length of one test."""
    registry.algorithms_for("allreduce")   # load the built-ins first, so ours are added last
    table = registry._REGISTRY["allreduce"]
    for name, build, pow2 in (("double-ring", _one_way_ring, False),
                              ("double-naive", _everyone_to_everyone, False),
                              ("double-halving", _one_way_ring, True)):
        monkeypatch.setitem(table, name, registry.Algorithm(
            "allreduce", name, f"{name} summary", build, power_of_two=pow2))


def invoke(*args):
    return CliRunner().invoke(cli, ["coll", *args])


@click.command(context_settings={"ignore_unknown_options": True}, add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def through_main(args):
    """The console script's entry point (one-line errors, exit codes) under CliRunner."""
    main(["coll", *args])


def test_table_has_the_nccl_tests_numbers():
    result = invoke("allreduce", "--topo", SPEC, "--algo", "double-ring", "--size", "80MB")
    assert result.exit_code == 0, result.output
    # t = 2 (7/8) 80 MB / 10 GB/s = 14 ms; algbw = 80 MB / 14 ms; busbw = 10 GB/s; the
    # machine's bound lets each rank use both directions: 7 ms, so 50 % efficiency; the
    # algorithm's bound (the one direction the ring uses) is 14 ms: 100 %.
    for text in ("76.29MiB", "80000000", "14000.00", "5.71", "10.00",
                 "double-ring", "7000.00", "injection", "50.0%", "100.0%", "algo eff.",
                 "machine eff.", "allreduce on ring-8: 8 ranks"):
        assert text in result.output, text


def test_json_records_have_the_keys_and_values():
    result = invoke("allreduce", "--topo", SPEC, "--algo", "double-ring", "--size", "80MB",
                    "--format", "json")
    records = json.loads(result.output)["records"]
    assert len(records) == 1
    row = records[0]
    for key in ("op", "algorithm", "topology", "ranks", "size_bytes", "time_s", "algbw_GBps",
                "busbw_GBps", "bound_s"):
        assert key in row
    assert row["op"] == "allreduce" and row["ranks"] == 8 and row["size_bytes"] == 8e7
    assert row["time_s"] == pytest.approx(0.014) and row["busbw_GBps"] == pytest.approx(10.0)
    assert row["machine_efficiency"] == pytest.approx(0.5)    # both directions' bound
    assert row["efficiency"] == pytest.approx(1.0)            # the ring's own links' bound


def test_sizes_sweep_gives_one_row_per_doubling():
    args = ("allreduce", "--topo", SPEC, "--algo", "double-ring", "--sizes", "1KiB:8KiB")
    rows = json.loads(invoke(*args, "--format", "json").output)["records"]
    assert [r["size_bytes"] for r in rows] == [1024, 2048, 4096, 8192]
    csv_lines = invoke(*args, "--format", "csv").output.strip().splitlines()
    assert len(csv_lines) == 5 and csv_lines[0].startswith("op,algorithm,topology,ranks")
    table = invoke(*args).output
    assert sum(line.count("double-ring") for line in table.splitlines()) == 4


def test_ranks_chunks_and_alpha_reach_the_run():
    rows = json.loads(invoke("allreduce", "--topo", SPEC, "--algo", "double-ring", "--size",
                             "4MB", "--ranks", "4", "--alpha", "2us", "--format",
                             "json").output)["records"]
    # 4 ranks on n0..n3 of the 8-ring: the ring closes n3 -> n0 over 3 hops. Each of the
    # 6 steps: 2 us + 1 MB / 10 GB/s (the 3-hop flow shares no link with the others).
    assert rows[0]["ranks"] == 4
    assert rows[0]["time_s"] == pytest.approx(6 * (2e-6 + 1e6 / 10e9))


def test_auto_names_the_winner_and_lists_the_candidates():
    result = invoke("allreduce", "--topo", "ring:6,bw=10GB/s", "--size", "6MB", "--format",
                    "json")
    row = json.loads(result.output)["records"][0]
    candidates = row["candidates"]            # a list: simulated (time_s) fastest first
    names = [c["algorithm"] for c in candidates]
    assert "double-naive" in names and "double-halving" not in names
    times = [c["time_s"] for c in candidates if "time_s" in c]
    assert times == sorted(times) and times[0] == row["time_s"]
    assert row["algorithm"] == candidates[0]["algorithm"]
    table = invoke("allreduce", "--topo", "ring:6,bw=10GB/s", "--size", "6MB").output
    assert f"{names[0]}=" in table               # the table shows them as name=time
    assert "candidates" in invoke("allreduce", "--topo", "ring:6", "--size", "6MB").output


@pytest.mark.parametrize("args, hint", [
    (("allreduc", "--topo", SPEC), "unknown collective 'allreduc': did you mean 'allreduce'?"),
    (("allreduce", "--topo", SPEC, "--algo", "double-rng"),
     "unknown allreduce algorithm 'double-rng': did you mean 'double-ring'?"),
])
def test_unknown_names_are_one_line_errors_with_a_suggestion(args, hint):
    result = CliRunner().invoke(through_main, list(args))
    assert result.exit_code == 2
    assert result.stderr == f"netsim: error: {hint}\n"


def test_an_algorithm_that_does_not_apply_is_an_input_error():
    result = CliRunner().invoke(through_main, ["allreduce", "--topo", "ring:6", "--algo",
                                               "double-halving"])
    assert result.exit_code == 2 and "power of two" in result.stderr
    assert result.stderr.count("\n") == 1


def test_list_names_every_algorithm_with_its_summary():
    result = invoke("--list", "--format", "json")
    rows = json.loads(result.output)["records"]
    row = next(r for r in rows if r["algorithm"] == "double-halving")
    assert row == {"op": "allreduce", "algorithm": "double-halving",
                   "needs": "a power-of-two number of ranks",
                   "summary": "double-halving summary"}
    assert {r["op"] for r in rows} <= set(registry.OPS)
    assert "double-ring summary" in invoke("allreduce", "--list").output


def test_output_file_needs_overwrite(tmp_path):
    out = tmp_path / "coll.csv"
    args = ["allreduce", "--topo", SPEC, "--algo", "double-ring", "--size", "1MB", "--format",
            "csv", "-o", str(out)]
    assert invoke(*args).exit_code == 0 and out.read_text().startswith("op,")
    result = CliRunner().invoke(through_main, args)
    assert result.exit_code == 2 and "already exists" in result.stderr
    assert invoke(*args, "--overwrite").exit_code == 0


def test_missing_topology_is_a_usage_error():
    result = invoke("allreduce")
    assert result.exit_code == 2 and "--topo" in result.output


def test_report_options_plug_in_without_touching_the_command(monkeypatch):
    monkeypatch.setattr(coll.command, "params", list(coll.command.params))
    monkeypatch.setattr(coll, "_HOOKS", {})
    checked = []

    def apply(value, runs, records, overwrite, topology):
        for run, row in zip(runs, records):
            row["per_flow_us"] = run.time_s / run.flows * 1e6 * float(value)
        return [("per_flow_us", "per flow (us)", lambda v: f"{v:.3f}")]

    coll.add_report_option(click.Option(["--scale"], default=None),
                           coll.ReportHook(apply, check=lambda v, o: checked.append(v)))
    result = invoke("allreduce", "--topo", SPEC, "--algo", "double-ring", "--size", "80MB",
                    "--scale", "2")
    # 14 ms over 8 x 14 flows, doubled: 250 us.
    assert checked == ["2"] and "per flow (us)" in result.output and "250.000" in result.output
    plain = invoke("allreduce", "--topo", SPEC, "--algo", "double-ring", "--size", "80MB")
    assert "per flow" not in plain.output


def test_coll_draws_heatmaps_and_curves_and_saves_a_result_heatmap_can_redraw(tmp_path, capsys):
    from netsim.cli import main

    heat, plot, saved = tmp_path / "h.png", tmp_path / "c.svg", tmp_path / "r.json"
    main(["coll", "allreduce", "--topo", "ring:4,bw=10GB/s", "--algo", "ring",
          "--sizes", "1MiB:2MiB", "--heatmap", str(heat), "--plot", str(plot),
          "--save-result", str(saved), "--format", "json"])
    records = json.loads(capsys.readouterr().out)["records"]
    assert [r["size_bytes"] for r in records] == [2**20, 2**21]
    for png in (tmp_path / "h-1MiB.png", tmp_path / "h-2MiB.png"):
        assert png.read_bytes()[:4] == b"\x89PNG"          # one heatmap per size
    assert plot.read_text().lstrip().startswith("<?xml")
    doc = json.loads(saved.read_text())
    assert doc["makespan"] == pytest.approx(records[1]["time_s"])   # the largest size
    main(["heatmap", str(saved), "-o", str(tmp_path / "again.png")])
    assert (tmp_path / "again.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(SystemExit) as stop:            # outputs are checked before simulating
        main(["coll", "allreduce", "--topo", "ring:4", "--size", "1MiB", "--plot",
              str(plot)])
    assert stop.value.code == 2
