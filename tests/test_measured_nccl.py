"""``--measured`` reads nccl-tests logs as they are: a log written from simulated times
compares at 0% error, and a malformed row is a one-line error naming file and line."""

from __future__ import annotations

import json

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
