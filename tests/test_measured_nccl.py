"""``--measured`` reads nccl-tests logs as they are: a log written from simulated times
compares at 0% error, and a malformed row is a one-line error naming file and line."""

from __future__ import annotations

import json

import pytest

from cli_helpers import run_main

ARGS = ["coll", "allreduce", "--topo", "ring:4,bw=1GB/s", "--algo", "ring",
        "--sizes", "1MiB:4MiB", "--alpha", "0"]
HEADER = """\
# nThread 1 nGpus 4 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5
#
# Using devices
#  Rank  0 Group  0 Pid   1234 on      host device  0 [0x07] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
"""


def test_a_log_of_the_simulated_times_matches(tmp_path, capsys):
    code, out, err = run_main([*ARGS, "--format", "json"], capsys)
    assert code == 0, err
    records = json.loads(out)["records"]
    rows = [f"{int(r['size_bytes']):>12} {int(r['size_bytes']) // 4:>13} float sum -1 "
            f"{r['time_s'] * 1e6:.6f} {r['algbw_GBps']:.2f} {r['busbw_GBps']:.2f} 0 "
            f"999.0 1.00 1.00 0" for r in records]         # in-place columns: ignored
    log = tmp_path / "all_reduce_perf.log"
    log.write_text(HEADER + "\n".join(rows) + "\n# Avg bus bandwidth    : 1.0\n#\n")
    code, out, err = run_main([*ARGS, "--format", "json", "--measured", str(log)], capsys)
    assert code == 0, err
    compared = json.loads(out)["records"]
    assert len(compared) == 3
    for record in compared:
        assert abs(record["error_pct"]) < 1e-6
        assert record["measured_time_s"] == round(record["time_s"] * 1e6, 6) / 1e6


def test_a_ragged_log_row_is_a_one_line_error(tmp_path, capsys):
    log = tmp_path / "bad.log"
    log.write_text(HEADER + "     1048576   262144  float  sum  -1  25.0  41.9\n")
    code, _, err = run_main([*ARGS, "--measured", str(log)], capsys)
    assert code == 2 and "bad.log:9" in err and len(err.strip().splitlines()) == 1


def test_format_nccl_reads_back_as_a_measured_log(tmp_path, capsys):
    """--format nccl prints nccl-tests' layout; read back by --measured it gives the
    simulated sizes, busbw to its 2 printed decimals and times to their printed digits."""
    log = tmp_path / "sim.log"
    code, _, err = run_main([*ARGS, "--format", "nccl", "-o", str(log)], capsys)
    assert code == 0, err
    text = log.read_text()
    assert "#       size         count      type   redop    root     time   algbw   busbw" \
        in text
    code, out, err = run_main([*ARGS, "--format", "json", "--measured", str(log)], capsys)
    assert code == 0, err
    for record in json.loads(out)["records"]:
        assert abs(record["measured_busbw_GBps"] - record["busbw_GBps"]) <= 0.005 + 1e-9
        us = record["time_s"] * 1e6
        step = 1.0 if us >= 10000 else 0.1 if us >= 100 else 0.01
        assert abs(record["measured_time_s"] * 1e6 - us) <= step / 2 + 1e-9


def test_a_busbw_printed_as_zero_is_read_beside_its_time(tmp_path):
    """nccl-tests prints busbw with two decimals, so small sizes show 0.00: a log row and
    a CSV with a time column keep the row (compared by time); without a time, 0 is still
    refused. ``time_us`` is read as nccl-tests prints it."""
    import pytest

    from netsim.errors import InputError
    from netsim.run.measured import read_measured

    log = tmp_path / "small.log"
    log.write_text(HEADER + "           8             2     float     sum      -1    33.18"
                            "    0.00    0.00      0    32.90    0.00    0.00      0\n")
    assert read_measured(log) == [{"size_bytes": 8.0, "time_s": 33.18e-6, "busbw_GBps": 0.0}]
    csv = tmp_path / "curve.csv"
    csv.write_text("# source: a published curve\nsize_bytes,time_us,busbw_GBps\n"
                   "8,33.18,0.00\n1048576,47.5,38.64\n")
    rows = read_measured(csv)
    assert [r["time_s"] for r in rows] == [33.18e-6, 47.5e-6]
    assert rows[0]["busbw_GBps"] == 0.0
    untimed = tmp_path / "untimed.csv"
    untimed.write_text("size_bytes,busbw_GBps\n8,0.00\n")
    with pytest.raises(InputError, match="untimed.csv:2: column 'busbw_GBps'"):
        read_measured(untimed)


def test_the_published_h100_curves_compare_with_measured(capsys):
    """Every published curve kept in benchmarks/data is readable by --measured as it is."""
    from pathlib import Path

    from netsim.run.measured import read_measured

    data = Path(__file__).resolve().parent.parent / "benchmarks" / "data"
    curves = sorted(data.glob("nvidia_h100_*.csv"))
    assert curves
    for curve in curves:
        rows = read_measured(curve)
        assert rows and all(r["time_s"] > 0 for r in rows), curve.name


# -- the whole file: header, op, ranks, -g ---------------------------------------------

def _log(program: str | None, gpus: int, ranks: int, rows: list[str], pids=None) -> str:
    """An nccl-tests log as nccl-tests 2.17 prints it: ``program`` (None: an old log without
    the 'Collective test starting' line), nThread 1 nGpus ``gpus``, one Rank line per rank."""
    lines = ["# nccl-tests version 2.17.9 nccl-headers=22602 nccl-library=22602"]
    if program:
        lines.append(f"# Collective test starting: {program}")
    lines += [f"# nThread 1 nGpus {gpus} minBytes 1048576 maxBytes 2097152 step: 2(factor) "
              "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0", "#",
              "# Using devices"]
    lines += [f"#  Rank {r:2d} Group  0 Pid {(pids or {}).get(r, 1000):6d} on      host device "
              f"{r:2d} [0x{r + 7:02x}] NVIDIA H100 80GB HBM3" for r in range(ranks)]
    lines += ["#", HEADER.splitlines()[-3], HEADER.splitlines()[-2], HEADER.splitlines()[-1]]
    return "\n".join(lines + rows + ["# Avg bus bandwidth    : 45.8", "#", ""])


def _row(size: int, count: int, redop: str, root: int = -1, dtype: str = "float",
         us: float = 20.0, inplace_us: float = 19.0) -> str:
    return (f"{size:12d} {count:13d} {dtype:>9} {redop:>7} {root:7d} {us:8.2f} 1.00 1.00 0 "
            f"{inplace_us:8.2f} 1.00 1.00 0")


AG_ROWS = [_row(1 << 20, (1 << 20) // 16, "none"), _row(2 << 20, (2 << 20) // 16, "none",
                                                        us=30.0, inplace_us=29.0)]


def test_the_header_says_op_ranks_gpus_type_and_device(tmp_path):
    from netsim.run.measured import read_measured_run, read_nccl_tests

    log = tmp_path / "ag.log"
    log.write_text(_log("all_gather_perf", 4, 4, AG_ROWS))
    run = read_measured_run(log)
    assert (run.format, run.op, run.ranks, run.gpus_per_thread) == ("nccl-tests", "allgather",
                                                                   4, 4)
    assert (run.dtype, run.redop, run.device) == ("float", "none", "NVIDIA H100 80GB HBM3")
    assert [r["time_s"] for r in run.rows] == [20e-6, 30e-6]
    assert [r["time_s"] for r in read_nccl_tests(log, place="in-place").rows] == [19e-6, 29e-6]
    # MPI, one GPU per process: -g 1, the ranks are the Rank lines
    log.write_text(_log("all_gather_perf", 1, 4, AG_ROWS, pids={1: 1001, 2: 1002, 3: 1003}))
    run = read_measured_run(log)
    assert (run.ranks, run.gpus_per_thread) == (4, 1)


def test_an_old_log_is_known_by_its_rows(tmp_path):
    """Without 'Collective test starting': redop, root and count x type size against size."""
    from netsim.run.measured import read_measured_run

    log = tmp_path / "old.log"
    cases = {("sum", 4): ("allreduce",), ("sum", 16): ("reducescatter",),
             ("none", 16): ("allgather", "alltoall")}
    for (redop, per), ops in cases.items():
        rows = [_row(s, s // per, redop) for s in (1 << 20, 2 << 20)]
        log.write_text(_log(None, 4, 4, rows))
        assert read_measured_run(log).ops == ops, (redop, per)
    log.write_text(_log(None, 4, 4, [_row(1 << 20, (1 << 20) // 4, "none", root=0)]))
    assert read_measured_run(log).op == "broadcast"
    # double: 8 bytes per element; a count that fits no op is refused
    log.write_text(_log(None, 4, 4, [_row(1 << 20, (1 << 20) // 8, "sum", dtype="double")]))
    assert read_measured_run(log).op == "allreduce"


def test_a_log_of_another_op_is_refused_in_one_line(tmp_path, capsys):
    log = tmp_path / "all_gather.log"
    log.write_text(_log("all_gather_perf", 4, 4, AG_ROWS))
    code, _, err = run_main(["coll", "allreduce", "--topo", "dgx-h100", "--sizes",
                             "1MiB:2MiB", "--measured", str(log)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "all_gather.log: measures allgather, not allreduce" in err
    # an old log whose rows say all-gather or all-to-all is refused for an all-reduce too
    log.write_text(_log(None, 4, 4, AG_ROWS))
    code, _, err = run_main(["coll", "allreduce", "--topo", "dgx-h100", "--sizes",
                             "1MiB:2MiB", "--measured", str(log)], capsys)
    assert code == 2 and "measures allgather or alltoall, not allreduce" in err


def test_the_log_sets_the_rank_count_and_nccl_host_floor(tmp_path, capsys):
    """No --ranks: the log's 4 ranks are simulated; its nGpus is NCCL's gpus_per_thread
    (nccl-tests -g), 4 for one process, 1 for one process per GPU; --ranks 8 is refused."""
    log = tmp_path / "ag.log"
    args = ["coll", "allgather", "--topo", "dgx-h100", "--sizes", "1MiB:2MiB", "--format",
            "json", "--measured", str(log)]
    for gpus, pids in ((4, None), (1, {1: 1001, 2: 1002, 3: 1003})):
        log.write_text(_log("all_gather_perf", gpus, 4, AG_ROWS, pids=pids))
        code, out, err = run_main(args, capsys)
        assert code == 0, err
        records = json.loads(out)["records"]
        assert {(r["ranks"], r["gpus_per_thread"]) for r in records} == {(4, gpus)}
        assert all("error_pct" in r for r in records)
    code, _, err = run_main([*args, "--ranks", "8"], capsys)
    assert code == 2 and "measured on 4 ranks, the simulation has 8" in err


def test_a_log_of_several_runs_gives_the_run_of_the_op(tmp_path):
    from netsim.errors import InputError
    from netsim.run.measured import read_measured_run

    ar_rows = [_row(s, s // 4, "sum", us=50.0) for s in (1 << 20, 2 << 20)]
    log = tmp_path / "all.log"
    log.write_text(_log("all_reduce_perf", 1, 4, ar_rows) + _log("all_gather_perf", 1, 4,
                                                                 AG_ROWS))
    assert read_measured_run(log, op="allreduce").rows[0]["time_s"] == 50e-6
    assert read_measured_run(log, op="allgather").rows[0]["time_s"] == 20e-6
    with pytest.raises(InputError, match="holds 2 runs"):
        read_measured_run(log)
    with pytest.raises(InputError, match="no run of broadcast"):
        read_measured_run(log, op="broadcast")


TT_TABLE = """\
# CCL benchmark, best configuration

```
arch          blackhole  line rate 25.0 GB/s per link per direction
dtype         bfloat16  (2048 B pages)
packet        8192 B
```

## all_reduce

| n | config | target (B) | size (B) | count | pages | time (us) | algbw (GB/s) | busbw (GB/s) |
|--:|--|--:|--:|--:|--:|--:|--:|--:|
| 2 | line dram | 1048576 | 1048576 | 524288 | 512 | 46.66 | 22.47 | 22.47 |
| 8 | ring dram | 1024 | | | | | | |
| 8 | ring dram | 1048576 | 1048576 | 524288 | 512 | 54.54 | 19.22 | 33.64 |
| 8 | ring dram | 2097152 | 2097152 | 1048576 | 1024 | 77.16 | 27.18 | 47.57 |

## all_gather

| n | config | target (B) | size (B) | count | pages | time (us) | algbw (GB/s) | busbw (GB/s) |
|--:|--|--:|--:|--:|--:|--:|--:|--:|
| 8 | ring dram | 1048576 | 1048576 | 524288 | 512 | 23.41 | 44.79 | 39.19 |
| 8 | ring l1 | 1048576 | 1048576 | 524288 | 512 | 22.43 | 46.75 | 40.91 |
"""


def test_a_tt_metal_result_table_is_read_by_op_and_device_count(tmp_path):
    from netsim.errors import InputError
    from netsim.run.measured import read_measured_run

    table = tmp_path / "SUMMARY_blackhole_bfloat16_8192.md"
    table.write_text(TT_TABLE)
    run = read_measured_run(table, op="allreduce", ranks=8)
    assert (run.format, run.op, run.ranks, run.device, run.dtype, run.config) == \
        ("tt-metal", "allreduce", 8, "blackhole", "bfloat16", "ring dram")
    assert [r["time_s"] for r in run.rows] == pytest.approx([54.54e-6, 77.16e-6])  # empty row skipped
    assert read_measured_run(table, op="allreduce", ranks=2).rows[0]["time_s"] == \
        pytest.approx(46.66e-6)
    # all_gather on 8: the first configuration (DRAM), not the L1 row after it
    (row,) = read_measured_run(table, op="allgather").rows
    assert row == {"size_bytes": 1048576.0, "time_s": pytest.approx(23.41e-6),
                   "busbw_GBps": 39.19}
    with pytest.raises(InputError, match="allreduce on 2, 8 devices: say how many ranks"):
        read_measured_run(table, op="allreduce")
    with pytest.raises(InputError, match="measures allreduce, allgather, not alltoall"):
        read_measured_run(table, op="alltoall")


def _coll_with_tt_table(tmp_path, capsys, op: str) -> tuple[list[str], dict]:
    """``netsim coll OP`` (ring, 1 MiB on ring:8) compared with TT_TABLE: its arguments and
    its one record."""
    table = tmp_path / "SUMMARY.md"
    table.write_text(TT_TABLE)
    args = ["coll", op, "--topo", "ring:8,bw=25GB/s,links=2", "--algo", "ring",
            "--size", "1MiB", "--format", "json", "--measured", str(table)]
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    (record,) = json.loads(out)["records"]
    return args, record


def test_coll_compares_with_a_tt_metal_table(tmp_path, capsys):
    args, record = _coll_with_tt_table(tmp_path, capsys, "allgather")
    assert record["measured_time_s"] == pytest.approx(23.41e-6)
    assert record["error_pct"] == pytest.approx(100 * (record["time_s"] / 23.41e-6 - 1))
    code, _, err = run_main(["coll", "reducescatter", *args[2:]], capsys)
    assert code == 2 and "SUMMARY.md: measures allreduce, allgather, not reducescatter" in err


def test_an_annotation_says_what_a_csv_measured_and_must_agree(tmp_path, capsys):
    from netsim.errors import InputError
    from netsim.run.measured import read_measured_run

    curve = tmp_path / "curve.csv"
    curve.write_text("# netsim-validate: topo=dgx-h100 op=allgather ranks=4 "
                     "gpus_per_thread=4 summary=no\nsize_bytes,time_us\n1048576,20.0\n")
    run = read_measured_run(curve)
    assert (run.topo, run.op, run.ranks, run.gpus_per_thread, run.summary) == \
        ("dgx-h100", "allgather", 4, 4, False)
    code, _, err = run_main(["coll", "allreduce", "--topo", "dgx-h100", "--size", "1MiB",
                             "--measured", str(curve)], capsys)
    assert code == 2 and "curve.csv: measures allgather, not allreduce" in err
    curve.write_text("# netsim-validate: topo=dgx-h100 speed=fast\nsize_bytes,time_us\n1,2\n")
    with pytest.raises(InputError, match="curve.csv:1: netsim-validate: unknown key 'speed'"):
        read_measured_run(curve)
    log = tmp_path / "ag.log"
    log.write_text("# netsim-validate: op=allreduce\n" + _log("all_gather_perf", 4, 4, AG_ROWS))
    with pytest.raises(InputError, match="says op=allreduce but the file measures allgather"):
        read_measured_run(log)


def test_every_published_file_says_what_it_measured():
    """Each file of benchmarks/data says what it measured (a netsim-validate line, or the
    '# default command: netsim coll ...' it quotes): machine and op, the op agreeing with
    its file name. (Ranks may be left to the machine: all its endpoints.)"""
    from pathlib import Path

    from netsim.run.measured import read_measured_run

    data = Path(__file__).resolve().parent.parent / "benchmarks" / "data"
    for path in sorted(data.glob("*.csv")):
        run = read_measured_run(path)
        assert run.topo and run.op, path.name
        assert f"_{run.op}_" in path.name, path.name


def test_a_table_of_several_device_counts_follows_the_run(tmp_path, capsys):
    """No --ranks: the machine's own rank count (8 on ring:8) picks the table's n = 8 rows;
    --ranks 2 picks n = 2; --ranks 4 is not in the table."""
    args, record = _coll_with_tt_table(tmp_path, capsys, "allreduce")
    assert record["ranks"] == 8 and record["measured_time_s"] == pytest.approx(54.54e-6)
    code, out, err = run_main([*args, "--ranks", "2"], capsys)
    assert code == 0, err
    assert json.loads(out)["records"][0]["measured_time_s"] == pytest.approx(46.66e-6)
    code, _, err = run_main([*args, "--ranks", "4"], capsys)
    assert code == 2 and "allreduce measured on 2, 8 devices, not 4" in err


def test_place_in_place_reads_the_in_place_columns(tmp_path):
    from netsim.errors import InputError
    from netsim.run.measured import read_measured_run

    log = tmp_path / "ag.log"
    log.write_text("# netsim-validate: place=in-place\n" + _log("all_gather_perf", 4, 4,
                                                                AG_ROWS))
    run = read_measured_run(log)
    assert run.place == "in-place" and [r["time_s"] for r in run.rows] == [19e-6, 29e-6]
    curve = tmp_path / "c.csv"
    curve.write_text("# netsim-validate: place=in-place\nsize_bytes,time_s\n1,1\n")
    with pytest.raises(InputError, match="place= applies to nccl-tests logs"):
        read_measured_run(curve)


def test_the_zero_byte_rows_of_a_log_are_skipped(tmp_path):
    """nccl-tests -b 8 prints several 0 B rows (a count of 0 per rank) before the first
    size: no data, and not a repeated size."""
    from netsim.run.measured import read_measured_run

    zero = _row(0, 0, "none", us=0.9, inplace_us=0.98)
    log = tmp_path / "ag.log"
    log.write_text(_log("all_gather_perf", 4, 4, [zero, zero, *AG_ROWS]))
    assert [r["size_bytes"] for r in read_measured_run(log).rows] == [1 << 20, 2 << 20]


def test_a_default_command_comment_says_what_a_file_measured(tmp_path):
    """Without a netsim-validate line, '# default command: netsim coll ...' is read: op,
    --topo, --axis, --algo; --sizes and --measured are what the comparison does anyway;
    another option is refused in one line naming the file and line."""
    from netsim.errors import InputError
    from netsim.run.measured import read_measured_run

    curve = tmp_path / "bh.csv"
    curve.write_text("# default command (ring: 8 chips): netsim coll reducescatter --topo "
                     "galaxy-bh --axis 0 --algo tt_ring --sizes 16KiB:8GiB --measured bh.csv\n"
                     "size_bytes,time_s\n16384,1.23e-5\n")
    run = read_measured_run(curve)
    assert (run.op, run.topo, run.axis, run.algo) == ("reducescatter", "galaxy-bh", 0,
                                                      "tt_ring")
    curve.write_text("# default command: netsim coll allgather --topo t3000 --order snake "
                     "--measured bh.csv\nsize_bytes,time_s\n16384,1.23e-5\n")
    with pytest.raises(InputError, match="bh.csv:1: default command: --order is not an"):
        read_measured_run(curve)
    curve.write_text("# netsim-validate: topo=n300 op=allgather\n"
                     "# default command: netsim coll allgather --topo t3000 --order snake\n"
                     "size_bytes,time_s\n16384,1.23e-5\n")
    assert read_measured_run(curve).topo == "n300"          # the netsim-validate line wins


def test_format_nccl_is_a_whole_log_that_measured_reads_back(tmp_path, capsys):
    """coll --format nccl prints nccl-tests' whole output (program, nThread/nGpus, one Rank
    line per rank, the table, Out of bounds and Avg bus bandwidth, the closing line); read
    back with --measured it gives the op, the ranks and the simulated times."""
    log = tmp_path / "sim.log"
    code, _, err = run_main(["coll", "allgather", "--topo", "dgx-h100", "--sizes", "1MiB:4MiB",
                             "--format", "nccl", "-o", str(log)], capsys)
    assert code == 0, err
    text = log.read_text()
    assert text.startswith("# Collective test starting: all_gather_perf\n")
    assert text.count("#  Rank ") == 8 and "# Out of bounds values : 0 OK" in text
    assert text.rstrip().endswith("# Collective test concluded: all_gather_perf")
    code, out, err = run_main(["coll", "allgather", "--topo", "dgx-h100", "--sizes",
                               "1MiB:4MiB", "--measured", str(log), "--format", "json"],
                              capsys)
    assert code == 0, err
    for record in json.loads(out)["records"]:
        # the log prints times in us with 2 decimals
        assert abs(record["measured_time_s"] - record["time_s"]) <= 0.006e-6
    code, _, err = run_main(["coll", "allreduce", "--topo", "dgx-h100", "--measured",
                             str(log)], capsys)
    assert code == 2 and "allgather" in err
