"""``netsim validate [DIR]``: every published measurement against the default command.

Examples::

    netsim validate                          # benchmarks/data
    netsim validate --family dgx-h100 --quick
    netsim validate my-logs/ --format json -o fidelity.json
    netsim validate all_reduce_perf.log      # one file

Each measured file of DIR (CSVs, nccl-tests logs, tt-metal CCL result tables; see
``netsim coll --measured``) is run as ``netsim coll OP --topo MACHINE --measured FILE``
runs it, with the machine, op and ranks its ``# netsim-validate:`` line names (an
nccl-tests log without one: the machine of its GPUs). One row per measured size (file,
command, size, measured, simulated, error), then per machine family the median and worst
error and the share of sizes within 15% (from 1 MiB) / 30% (below), then the files whose
``# note:`` lines say why they differ for a reason outside the model (or that are kept out
of the summary with ``summary=no``). CSV output holds the rows (with their file's note);
JSON the rows and, under ``summary`` and ``notes``, the families and the notes. Files left
out (machine not known) are named on stderr.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import InputError, SimulationError
from ..run import file_notes, run_validation, summarize_validation, validation_cases
from ..units import format_size
from .options import (ProgressBar, check_outputs, emit, engine_config, format_records,
                      output_option, overwrite_option, render_table)

__all__ = ["command", "default_directory", "markdown_table"]


def _maybe(fmt):
    return lambda v: "-" if v is None else fmt(v)


ROW_COLUMNS = [
    ("file", "file", str),
    ("command", "command (+ --measured FILE)", lambda v: v.split(" --measured ")[0]),
    ("size_bytes", "size", lambda v: format_size(v).replace(" ", "")),
    ("measured_time_s", "measured (us)", lambda v: f"{v * 1e6:.2f}"),
    ("time_s", "simulated (us)", lambda v: f"{v * 1e6:.2f}"),
    ("error_pct", "error", lambda v: f"{v:+.1f}%"),
    ("within", "within", lambda v: "yes" if v else "NO"),
    ("counted", "counted", lambda v: "yes" if v else "no (summary=no)"),
    ("ran", "ran", str),
]
SUMMARY_COLUMNS = [
    ("family", "family", str), ("files", "files", str), ("sizes", "sizes", str),
    ("median_abs_error_pct", "median abs error", _maybe(lambda v: f"{v:.1f}%")),
    ("worst_error_pct", "worst", _maybe(lambda v: f"{v:+.1f}%")),
    ("worst_at", "worst at", _maybe(str)),
    ("within_pct", "within tolerance", _maybe(lambda v: f"{v:.0f}%")),
    ("within_large_pct", ">= 1 MiB within 15%", _maybe(lambda v: f"{v:.0f}%")),
    ("within_small_pct", "< 1 MiB within 30%", _maybe(lambda v: f"{v:.0f}%")),
    ("left_out", "left out", str),
]
NOTE_COLUMNS = [
    ("file", "file", str), ("family", "family", str),
    ("outside", "outside tolerance", lambda v: str(v)),
    ("sizes", "sizes", str),
    ("counted", "in summary", lambda v: "yes" if v else "no"),
    ("note", "why (the file's note)", str),
]
_NOTES_TITLE = "notes: files that differ for a reason outside the model, or kept out"


def default_directory() -> Path:
    """``benchmarks/data`` of the working folder, else of the source tree netsim runs from
    (an editable install); the published measurements are not installed with the package."""
    here = Path("benchmarks") / "data"
    if here.is_dir():
        return here
    tree = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
    if tree.is_dir():
        return tree
    raise InputError("no benchmarks/data folder here or beside netsim's sources: give DIR")


@click.command("validate")
@click.argument("directory", required=False, metavar="[DIR|FILE]", type=click.Path())
@click.option("--family", default=None, metavar="NAME",
              help="Only this machine family (the preset's name, e.g. dgx-h100, or the "
                   "file's family=).")
@click.option("--format", "fmt",
              type=click.Choice(["table", "csv", "json", "markdown", "parquet"]),
              default="table", show_default=True,
              help="Output format (csv, parquet: the rows; json: the rows and the summary; "
                   "markdown: both tables, as docs/fidelity.md shows them).")
@output_option
@overwrite_option
@click.option("--quick", is_flag=True,
              help="Three sizes per file (smallest, middle, largest up to 1 GiB).")
def command(directory, family, fmt, output, overwrite, quick):
    """Run every published measurement in DIR [benchmarks/data] (or the one FILE) with the
    default command and report the error per size and per machine family."""
    check_outputs([output], overwrite=overwrite)
    folder = Path(directory) if directory is not None else default_directory()
    skipped: list[str] = []
    cases = validation_cases(folder, family=family, skipped=skipped)
    for reason in skipped:
        click.echo(f"netsim: left out {reason}", err=True)
    if not cases:
        what = f" of family {family!r}" if family else ""
        raise InputError(f"{folder}: no measured files{what} to validate")
    sizes = sum(len(case.rows(quick)) for case in cases)
    failed: list[str] = []
    with ProgressBar(sizes, "validate") as bar:
        records = run_validation(cases, quick=quick, each=bar.advance,
                                 progress=bar.reporter(), failed=failed,
                                 engine=engine_config())
    for reason in failed:
        click.echo(f"netsim: could not simulate {reason}", err=True)
    if not records:
        raise SimulationError(f"{folder}: no measured run could be simulated")
    _emit(records, fmt, folder, quick, len(cases), output, overwrite)
    if failed:                  # the tables are out; the exit code says some are missing
        raise SimulationError(f"{len(failed)} of {len(cases)} measured runs could not be "
                               f"simulated (listed above)")


def _emit(records, fmt, folder, quick, num_cases, output, overwrite) -> None:
    summary = summarize_validation(records)
    notes = file_notes(records)
    if fmt == "json":
        emit(format_records(records, "json", document={"directory": str(folder),
                                                       "summary": summary, "notes": notes}),
             output, overwrite)
        return
    if fmt in ("csv", "parquet"):
        emit(format_records(records, fmt), output, overwrite)
        return
    if fmt == "markdown":
        emit(markdown_table(summary, SUMMARY_COLUMNS) + "\n"
             + (markdown_table(notes, NOTE_COLUMNS) + "\n" if notes else "")
             + markdown_table(records, ROW_COLUMNS), output, overwrite)
        return
    title = f"{num_cases} measured runs in {folder}" + (" (--quick)" if quick else "")
    text = render_table(records, ROW_COLUMNS, title)
    text += "\n" + render_table(summary, SUMMARY_COLUMNS,
                                "per family: within 15% from 1 MiB, 30% below")
    if notes:
        text += "\n" + render_table(notes, NOTE_COLUMNS, _NOTES_TITLE)
    emit(text, output, overwrite)


def markdown_table(records, columns) -> str:
    """``records`` as a Markdown pipe table of ``columns`` (key, header, formatter)."""
    lines = ["| " + " | ".join(header for _, header, _ in columns) + " |",
             "|" + "|".join("---" for _ in columns) + "|"]
    for record in records:
        cells = [fmt(record.get(key)) if record.get(key) is not None else "-"
                 for key, _, fmt in columns]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"
