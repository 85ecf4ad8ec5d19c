"""``netsim validate``: the machinery, on a tiny synthetic data folder (not the published
figures). A ring all-reduce on ``ring:4,bw=1GB/s`` (no latency, no per-message cost) takes
2 (p-1)/p S / B = 1.5 S / 1e9 s, so a 'measurement' of that time is exact and one of twice
that time is 50% off."""

from __future__ import annotations

import json

import pytest

from cli_helpers import run_main

RING = "# netsim-validate: topo=ring:4,bw=1GB/s op=allreduce ranks=4 algo=ring{extra}\n"


def ring_time(size: int) -> float:
    return 1.5 * size / 1e9


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    good, off = 1 << 20, 2 << 20
    (folder / "ring_allreduce.csv").write_text(
        "# a synthetic curve: 1 MiB as simulated, 2 MiB measured twice as slow\n"
        + RING.format(extra="") + "size_bytes,time_s\n"
        f"{good},{ring_time(good)!r}\n{off},{2 * ring_time(off)!r}\n"
        f"{64 << 10},{ring_time(64 << 10)!r}\n")
    return folder


def test_a_row_that_is_off_is_reported_as_off(data):
    from netsim.run import run_validation, summarize_validation, validation_cases

    cases = validation_cases(data)
    assert [(c.topo, c.op, c.ranks, c.algorithm, c.family) for c in cases] == \
        [("ring:4,bw=1GB/s", "allreduce", 4, "ring", "ring")]
    assert cases[0].command().startswith("netsim coll allreduce --topo ring:4,bw=1GB/s "
                                         "--algo ring --measured ")
    records = run_validation(cases)
    by_size = {r["size_bytes"]: r for r in records}
    assert by_size[1 << 20]["error_pct"] == pytest.approx(0.0, abs=1e-9)
    assert by_size[1 << 20]["within"] is True
    assert by_size[2 << 20]["error_pct"] == pytest.approx(-50.0)
    assert by_size[2 << 20]["within"] is False
    assert by_size[2 << 20]["time_s"] == pytest.approx(ring_time(2 << 20))
    (family,) = summarize_validation(records)
    assert family["family"] == "ring" and family["sizes"] == 3 and family["files"] == 1
    assert family["worst_error_pct"] == pytest.approx(-50.0)
    assert family["median_abs_error_pct"] == pytest.approx(0.0, abs=1e-9)
    assert family["within_large_pct"] == pytest.approx(50.0)
    assert family["within_small_pct"] == pytest.approx(100.0)
    assert family["within_pct"] == pytest.approx(200.0 / 3)


def test_the_tolerance_is_15_percent_from_1_mib_and_30_below(tmp_path):
    """A 20% error is within at 512 KiB and not at 1 MiB."""
    from netsim.run import run_validation, validation_cases

    folder = tmp_path / "d"
    folder.mkdir()
    rows = "".join(f"{s},{ring_time(s) / 1.2!r}\n" for s in (512 << 10, 1 << 20))
    (folder / "c.csv").write_text(RING.format(extra="") + "size_bytes,time_s\n" + rows)
    within = {r["size_bytes"]: r["within"] for r in run_validation(validation_cases(folder))}
    assert within == {512 << 10: True, 1 << 20: False}


def test_a_busbw_only_file_is_compared_on_time(tmp_path):
    """busbw = S/t x 2(p-1)/p for an all-reduce: 1.5 GB/s on the ring is the simulated time."""
    from netsim.run import run_validation, validation_cases

    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "points.csv").write_text(RING.format(extra="") + "size_bytes,busbw_GBps\n"
                                       "1048576,1.0\n2097152,0.5\n")
    records = run_validation(validation_cases(folder))
    assert [round(r["error_pct"], 6) for r in records] == [0.0, -50.0]
    assert records[1]["measured_time_s"] == pytest.approx(2 * ring_time(2 << 20))


def test_the_command_prints_rows_and_the_family_summary(data, capsys):
    code, out, err = run_main(["validate", str(data)], capsys)
    assert code == 0, err
    assert "ring_allreduce.csv" in out and "netsim coll allreduce --topo ring:4,bw=1GB/s" in out
    assert "-50.0%" in out and "NO" in out and "per family" in out
    code, out, err = run_main(["validate", str(data), "--format", "json"], capsys)
    assert code == 0, err
    document = json.loads(out)
    assert document["command"] == "validate" and len(document["records"]) == 3
    assert document["summary"][0]["worst_error_pct"] == pytest.approx(-50.0)
    code, out, err = run_main(["validate", str(data), "--format", "csv"], capsys)
    assert code == 0, err
    lines = out.strip().splitlines()
    assert lines[0].startswith("file,family,command,size_bytes,measured_time_s,time_s,error_pct")
    assert len(lines) == 4
    code, out, err = run_main(["validate", str(data), "--format", "markdown"], capsys)
    assert code == 0, err
    summary, rows = (table.strip().splitlines() for table in out.split("\n\n"))
    assert summary[0].startswith("| family |") and len(summary) == 3
    assert rows[0].startswith("| file |") and len(rows) == 2 + 3
    assert all(line.count("|") == 11 for line in summary)
    assert "| -50.0% | NO |" in out


def test_family_quick_and_left_out_files(data, capsys):
    (data / "other.csv").write_text(RING.format(extra=" family=mine") + "size_bytes,time_s\n"
                                    + "".join(f"{s},{ring_time(s)!r}\n"
                                              for s in (1 << 10, 1 << 12, 1 << 14, 1 << 16,
                                                        1 << 18)))
    (data / "unknown.csv").write_text("size_bytes,time_s\n1024,1e-5\n")
    (data / "README.md").write_text("# measurements\n\nNot a table.\n")
    code, out, err = run_main(["validate", str(data), "--family", "mine", "--quick",
                               "--format", "json"], capsys)
    assert code == 0, err
    records = json.loads(out)["records"]
    assert {r["file"] for r in records} == {"other.csv"}
    assert [r["size_bytes"] for r in records] == [1 << 10, 1 << 14, 1 << 18]
    assert "netsim: left out " in err and "unknown.csv: no machine" in err
    assert "README" not in err
    code, _, err = run_main(["validate", str(data), "--family", "nope"], capsys)
    assert code == 2 and "no measured files of family 'nope'" in err
    assert len(err.strip().splitlines()) == 2       # the left-out note and the error


def test_a_log_names_its_machine_and_a_contradiction_is_one_line(tmp_path, capsys):
    """An nccl-tests log without annotation: the machine of its GPUs (H100 -> dgx-h100)."""
    from netsim.run import validation_cases

    folder = tmp_path / "logs"
    folder.mkdir()
    log = ("# Collective test starting: all_gather_perf\n"
           "# nThread 1 nGpus 4 minBytes 1048576 maxBytes 1048576 step: 2(factor)\n"
           + "".join(f"#  Rank {r:2d} Group  0 Pid   1000 on host device {r:2d} [0x{r:02x}] "
                     f"NVIDIA H100 80GB HBM3\n" for r in range(4))
           + "#       size         count      type   redop    root     time   algbw   busbw "
             "#wrong     time   algbw   busbw #wrong\n"
           "     1048576         65536     float    none      -1    20.00   52.43   39.32      0"
           "    19.00   55.19   41.39      0\n")
    (folder / "ag.log").write_text(log)
    (case,) = validation_cases(folder)
    assert (case.topo, case.op, case.ranks, case.measured.gpus_per_thread, case.family) == \
        ("dgx-h100", "allgather", 4, 4, "dgx-h100")
    (folder / "ag.log").write_text("# netsim-validate: op=allreduce\n" + log)
    code, _, err = run_main(["validate", str(folder)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "ag.log: netsim-validate says op=allreduce but the file measures allgather" in err


def test_an_existing_output_is_refused_before_any_work(data, tmp_path, capsys):
    out = tmp_path / "v.txt"
    out.write_text("keep")
    code, _, err = run_main(["validate", str(data), "-o", str(out)], capsys)
    assert code == 2 and "already exists" in err and out.read_text() == "keep"


def test_a_run_netsim_refuses_is_named_and_the_others_still_run(data, capsys):
    """A file asking for more ranks than its machine has: its reason on stderr, the other
    files' rows on stdout, exit code 1 (a finding, not bad input)."""
    (data / "too_many.csv").write_text(
        "# netsim-validate: topo=ring:4,bw=1GB/s op=allreduce ranks=64 algo=ring\n"
        "size_bytes,time_s\n1048576,1e-3\n")
    code, out, err = run_main(["validate", str(data), "--format", "csv"], capsys)
    assert code == 1
    assert "netsim: could not simulate " in err and "too_many.csv" in err
    assert "1 of 2 measured runs could not be simulated" in err
    assert len(out.strip().splitlines()) == 4 and "ring_allreduce.csv" in out


def test_a_forced_nccl_algorithm_is_simulated_forced(tmp_path):
    """nccl_algorithm=ring (a run with NCCL_ALGO=Ring): NCCL's model runs its ring, where
    it would pick NVLS on dgx-h100 at 64 MiB."""
    from netsim.run import run_validation, validation_cases

    folder = tmp_path / "d"
    folder.mkdir()
    head = "# netsim-validate: topo=dgx-h100 op=allreduce ranks=8{}\nsize_bytes,time_s\n"
    (folder / "free.csv").write_text(head.format("") + "67108864,1e-3\n")
    (folder / "ring.csv").write_text(head.format(" nccl_algorithm=ring") + "67108864,1e-3\n")
    free, ring = run_validation(validation_cases(folder))
    assert free["ran"].startswith("nccl nvls") and ring["ran"].startswith("nccl ring")
    assert ring["command"].endswith("(nccl_algorithm=ring)")


def test_one_file_can_be_validated(data, capsys):
    code, out, err = run_main(["validate", str(data / "ring_allreduce.csv"), "--format",
                               "csv"], capsys)
    assert code == 0, err
    assert len(out.strip().splitlines()) == 4
    code, _, err = run_main(["validate", str(data / "missing.csv")], capsys)
    assert code == 2 and "missing.csv: no such folder or file of measurements" in err


def test_a_files_note_and_a_file_kept_out_are_reported_per_file(data, capsys):
    """'# note:' lines say why a file differs for a reason outside the model; a file kept out
    of the summary (summary=no) is listed with its reason, or that it gave none."""
    from netsim.run import file_notes, run_validation, validation_cases

    off = 2 << 20
    text = (data / "ring_allreduce.csv").read_text()
    (data / "ring_allreduce.csv").write_text(
        "# note: measured on a busy box,\n# note: twice as slow at 2 MiB\n" + text)
    (data / "ring_erratic.csv").write_text(
        RING.format(extra=" summary=no") + "size_bytes,time_s\n"
        f"{off},{3 * ring_time(off)!r}\n")
    records = run_validation(validation_cases(data))
    assert {r["note"] for r in records if r["file"] == "ring_allreduce.csv"} == \
        {"measured on a busy box, twice as slow at 2 MiB"}
    notes = {n["file"]: n for n in file_notes(records)}
    assert notes["ring_allreduce.csv"]["outside"] == 1
    assert notes["ring_allreduce.csv"]["sizes"] == 3 and notes["ring_allreduce.csv"]["counted"]
    assert notes["ring_erratic.csv"]["counted"] is False
    assert "summary=no" in notes["ring_erratic.csv"]["note"]
    code, out, err = run_main(["validate", str(data)], capsys)
    assert code == 0, err
    assert "notes:" in out and "busy box" in out
    code, out, err = run_main(["validate", str(data), "--format", "json"], capsys)
    document = json.loads(out)
    assert {n["file"] for n in document["notes"]} == {"ring_allreduce.csv", "ring_erratic.csv"}
