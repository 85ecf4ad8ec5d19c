"""``netsim sweep SCENARIO --out DIR``: run every point of a scenario's ``sweep:`` grid.

Points run in local processes (``--workers``, default: every CPU) or on a Dask cluster
(``--scheduler tcp://HOST:PORT``). Each point's outcome is kept in ``DIR/points/``, so the
same command after a crash or Ctrl-C computes only the points that are missing. The table
of every point is written to ``DIR/results.csv`` and ``DIR/results.json`` and printed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import InputError
from ..run import load_sweep, rows_to_parquet, run_sweep_points, sweep_executor
from .options import (check_outputs, emit, format_records, output_option, overwrite_option,
                      render_table, to_jsonable)
from .options import engine_config, wrote
from ..outputs import write_atomic
from ..report import draw_curves, figure_format
from .options import figure_option
from .options import executor_options

__all__ = ["command"]

# The printed table shows the point, its swept values, its error and these columns of its
# records when they have them (every column stays in CSV, JSON and Parquet).
_SHOWN = ("job", "time_s", "busbw_GBps", "bound", "efficiency", "machine_efficiency",
          "max_link_util", "strategy",
          "step_s")


@click.command("sweep")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Folder of the sweep: each point's outcome (points/) and the tables "
                   "(results.csv, results.json). Rerun with the same folder to resume.")
@executor_options(workers_default=None,
                  workers_help="Local worker processes [default: the CPUs available; 1 runs "
                               "in this process].")
@click.option("--retry-failed", is_flag=True,
              help="Compute again the points that failed in an earlier run.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "parquet"]),
              default="table", show_default=True,
              help="Output format (parquet needs -o and netsim[parquet]).")
@figure_option("--plot",
               help="Draw busbw against message size (.png/.svg/.pdf), one line per "
                    "combination of the other swept values (collective jobs).")
@output_option
@overwrite_option
def command(scenario, out, workers, scheduler, retry_failed, fmt, plot, output, overwrite):
    """Run every point of SCENARIO's `sweep:` grid and print one table of their results."""
    if scheduler is not None and workers is not None:
        raise InputError("give --workers or --scheduler, not both")
    if fmt == "parquet" and output is None:
        raise InputError("--format parquet writes binary data: give -o FILE.parquet")
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--out {out}: is a file, not a folder")
    if plot:
        figure_format(plot)
    check_outputs([output, plot], overwrite=overwrite)
    sweep = load_sweep(scenario)
    with _progress(len(sweep.points)) as progress, \
            sweep_executor(workers, scheduler) as executor:
        result = run_sweep_points(sweep, folder, executor, progress=progress,
                                  retry_failed=retry_failed, engine=engine_config())
    rows = result.rows
    context = {"scenario": sweep.name, "points": len(sweep.points), "failed": result.failed}
    tables = {"results.csv": format_records(rows, "csv"),
              "results.json": format_records(rows, "json", document=context)}
    for name, text in tables.items():
        write_atomic(folder / name, text, overwrite=True)     # the folder's own files
    click.echo(f"{len(sweep.points)} points: {result.computed} computed, {result.reused} "
               f"from {out}, {result.failed} failed; tables in {out}/results.csv and "
               f"results.json", err=True)
    if plot:
        _plot(rows, sweep.spec.keys(), plot, overwrite)
    if fmt == "parquet":
        write_atomic(output, rows_to_parquet(rows), overwrite)
        wrote(output)
    elif fmt == "table":
        keep = {"point", *sweep.spec.keys(), "error", *_SHOWN}
        shown = [{k: v for k, v in row.items() if k in keep} for row in rows]
        emit(render_table(to_jsonable(shown), title=f"sweep {sweep.name}"), output, overwrite)
    else:
        emit(tables["results.csv"] if fmt == "csv" else tables["results.json"], output,
             overwrite)


def _plot(rows, keys, path, overwrite: bool) -> None:
    """busbw over size, a line per combination of the swept values other than sizes."""
    series: dict[str, list[dict]] = {}
    labels = [k for k in keys if not k.rsplit(".", 1)[-1] in ("size", "sizes")]
    for row in rows:
        if row.get("error") is None and row.get("busbw_GBps") is not None \
                and row.get("size_bytes"):
            label = ", ".join(str(row[k]) for k in labels) or str(row.get("job", "run"))
            series.setdefault(label, []).append(row)
    if not series:
        raise InputError("--plot: no point has a size and a busbw to draw (collective "
                         "jobs have them)")
    draw_curves({label: sorted(points, key=lambda r: r["size_bytes"])
                 for label, points in series.items()}, path, overwrite=overwrite)
    wrote(path)


class _progress:
    """A rich progress bar on stderr (points done, failed, time left), on a terminal only;
    otherwise the callback is None."""

    def __init__(self, total: int) -> None:
        self.total, self.bar = total, None

    def __enter__(self):
        if not sys.stderr.isatty():
            return None
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeRemainingColumn)

        self.bar = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[failed]} failed"), TimeRemainingColumn(),
                            console=Console(stderr=True), transient=True)
        self.bar.start()
        task = self.bar.add_task("sweep", total=self.total, failed=0)

        def report(done: int, failed: int, total: int) -> None:
            self.bar.update(task, completed=done, failed=failed)
        return report

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()
