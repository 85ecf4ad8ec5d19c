"""Tables fit the terminal: boxed when they fit, drawn without lines (texts wrapping at
spaces, numbers whole) when they do not, one block per row when even that does not fit;
files and pipes get one line per row."""

from __future__ import annotations

import json

from netsim.cli import cli as main
from netsim.cli.options import render_table

from click.testing import CliRunner


def _records():
    out = CliRunner().invoke(main, ["coll", "allreduce", "--topo", "dgx-h100", "--sizes",
                                    "1MiB:4MiB", "--format", "json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)["records"]


def test_a_wide_table_fits_a_100_column_terminal_with_numbers_whole():
    records = _records()
    wide = render_table(records, width=10**4)
    assert max(map(len, wide.splitlines())) > 100          # the case the terminal breaks
    text = render_table(records, width=100)
    assert max(map(len, text.splitlines())) <= 100
    for r in records:                                       # every number on one line
        assert f"{r['time_s'] * 1e6:.6g}" in text and r["nccl"] in text


def test_too_narrow_for_columns_gives_one_block_per_row():
    records = [{"job": "a", "time_s": 2.5e-6, "bound": "injection (in-network reduction)"},
               {"job": "b", "time_s": 1e-3, "bound": "latency"}]
    text = render_table(records, width=12, title="jobs")
    lines = text.splitlines()
    assert lines[0] == "jobs" and "-[ 1 ]" in lines[1] and "-[ 2 ]" in text
    assert "time (us)  2.5" in text and "time (us)  1000" in text


def test_piped_tables_keep_one_line_per_row():
    out = CliRunner().invoke(main, ["coll", "allreduce", "--topo", "dgx-h100", "--sizes",
                                    "1MiB:4MiB"])
    assert out.exit_code == 0
    rows = [line for line in out.output.splitlines() if "MiB" in line]
    assert len(rows) == 3 and all(line.startswith("│") for line in rows)
