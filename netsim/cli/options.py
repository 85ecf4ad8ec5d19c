"""Options and output helpers shared by the subcommands (one place, as in rasterio's rio)."""

from __future__ import annotations

import csv
import io
import json
import sys
from typing import Any, Callable, Sequence

import click

from ..outputs import check_outputs, check_writable, to_jsonable, write_atomic

__all__ = ["format_option", "output_option", "overwrite_option", "emit", "render_table",
           "records_csv", "progress_reporter", "to_jsonable", "fault_options", "fault_specs",
           "format_records", "check_writable", "check_outputs", "alpha_option", "alpha_seconds",
           "deprecated", "envelope", "chunks_option", "nccl_format_option", "model_option",
           "model_columns", "tolerance_option", "axis_option", "nodes_option"]

format_option = click.option("--format", "fmt",
                             type=click.Choice(["table", "json", "csv", "parquet"]),
                             default="table", show_default=True,
                             help="Output format (parquet: the records as a Parquet file, "
                                  "with -o or a redirected stdout; needs netsim[parquet]).")
# `coll` also prints nccl-tests' own table layout.
nccl_format_option = click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "csv", "parquet", "nccl"]),
    default="table", show_default=True,
    help="Output format (nccl: the table layout of nccl-tests; parquet: with -o or a "
         "redirected stdout, needs netsim[parquet]).")
output_option = click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
                             help="Write the output to this file instead of stdout.")
overwrite_option = click.option("--overwrite", is_flag=True,
                                help="Replace output files that already exist.")

# One meaning everywhere (coll, compare, place): without --alpha the machine's calibrated
# per-message overhead applies, so the same case gives the same time through every command.
alpha_option = click.option("--alpha", default=None,
                            help="Per-message overhead at the sender (e.g. 2us) [the "
                                 "machine's calibration, else 0].")


def alpha_seconds(alpha: str | None, option: str = "--alpha") -> float | None:
    """``--alpha`` in seconds, or None for the machine's calibrated value."""
    if alpha is None:
        return None
    from ..errors import InputError
    from ..units import parse_time

    seconds = parse_time(alpha, option)
    if seconds < 0:
        raise InputError(f"{option} must be a time >= 0 (e.g. 2us), got {alpha!r}")
    return seconds

# One meaning everywhere (coll, place): without --chunks each algorithm picks its own depth.
chunks_option = click.option(
    "--chunks", type=click.IntRange(min=1), default=None,
    help="Pipeline chunks per message [default: 1, or about sqrt(size/256KiB) up to 64 for "
         "pipelined algorithms: dbtree, chain, innetwork].")


def deprecated(old: str, new: str) -> None:
    """One line on stderr for an old spelling that still works for one release."""
    click.echo(f"netsim: note: {old} is deprecated and will go in the next release; "
               f"use {new}", err=True)


def fault_options(command: Callable) -> Callable:
    """``--fail-link LINK[@TIME]`` and ``--degrade-link LINK=FACTOR[@TIME]``, repeatable.

    LINK is a link (``0_0->0_1``), a cable's two directions (``1_1<->1_2``, plane k of a
    bundle: ``1_1<->1_2#k``) or every link of a node (``node:3_3``); TIME takes units.
    """
    command = click.option(
        "--degrade-link", "degrade_links", multiple=True, metavar="LINK=FACTOR[@TIME]",
        help="Multiply a link's bandwidth by FACTOR in (0, 1] from TIME on (repeatable).")(command)
    return click.option(
        "--fail-link", "fail_links", multiple=True, metavar="LINK[@TIME]",
        help="Fail a link ('A->B'), a cable ('A<->B') or a node ('node:NAME') from TIME on "
             "(default 0; repeatable).")(command)


def fault_specs(fail_links: Sequence[str] = (), degrade_links: Sequence[str] = ()) -> list:
    """The :class:`~netsim.run.faultspec.FaultSpec` of the fault options (syntax checked now)."""
    from ..run import parse_fault_option

    return ([parse_fault_option(text, "fail") for text in fail_links]
            + [parse_fault_option(text, "degrade") for text in degrade_links])


def records_csv(records: Sequence[dict[str, Any]]) -> str:
    columns: list[str] = []
    for row in records:
        columns += [k for k in row if k not in columns]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    for row in records:
        writer.writerow({k: to_jsonable(v) for k, v in row.items()})
    return out.getvalue()


def render_table(records: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str, Callable]]
                 | None = None, title: str | None = None) -> str:
    """A rich table as text. ``columns`` are (key, header, formatter) triples."""
    from rich.console import Console
    from rich.table import Table

    if columns is None:
        keys: list[str] = []
        for row in records:
            keys += [k for k in row if k not in keys]
        columns = [(k, k, _plain) for k in keys]
    table = Table(title=title, title_justify="left", header_style="bold")
    for key, header, _ in columns:
        numeric = all(isinstance(r.get(key), (int, float)) for r in records if key in r)
        table.add_column(header, justify="right" if numeric else "left")
    for row in records:
        table.add_row(*[fmt(row.get(key)) if row.get(key) is not None else "-"
                        for key, _, fmt in columns])
    console = Console(file=io.StringIO(), width=200, color_system=None, force_terminal=False)
    console.print(table)
    return console.file.getvalue()


def _plain(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def emit(text: str | bytes, output: str | None, overwrite: bool) -> None:
    """Print ``text`` or write it atomically to ``output`` (bytes, e.g. Parquet, go to a
    file or a redirected stdout, never to a terminal)."""
    if isinstance(text, bytes) and output is None:
        from ..errors import InputError

        if sys.stdout.isatty():
            raise InputError("--format parquet is binary: give -o FILE.parquet or redirect "
                             "the output to a file")
        sys.stdout.flush()
        sys.stdout.buffer.write(text)
        sys.stdout.buffer.flush()
        return
    if output is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        write_atomic(output, text, overwrite)
        wrote(output)


def envelope(records: Sequence[dict[str, Any]], **context: Any) -> dict[str, Any]:
    """Every command's JSON: ``{"netsim": version, "command": name, ...context, "records"}``.

    ``records`` is the list a table would show (one row per run, strategy, flow ...);
    ``context`` the command's other facts (the scenario's name, the links of a flow run).
    """
    from .. import __version__

    ctx = click.get_current_context(silent=True)
    command = ctx.info_name if ctx is not None else None
    return {"netsim": __version__, "command": command, **context, "records": list(records)}


def format_records(records: Sequence[dict[str, Any]], fmt: str, document: Any = None,
                   columns=None, title: str | None = None) -> str:
    """Records as a table, CSV, or JSON: the :func:`envelope` of the records, with the
    keys of ``document`` (a mapping) other than ``records`` as its context."""
    if fmt == "json":
        context = {k: v for k, v in (document or {}).items() if k != "records"}
        return json.dumps(to_jsonable(envelope(records, **context)), indent=1) + "\n"
    if fmt == "csv":
        return records_csv(records)
    if fmt == "parquet":
        from ..run import rows_to_parquet

        return rows_to_parquet(to_jsonable(list(records)))   # type: ignore[return-value]
    return render_table(records, columns, title)


def progress_reporter(label: str = "simulating"):
    """A callback drawing a progress line on stderr when it is a terminal, else None."""
    if not sys.stderr.isatty():
        return None
    from rich.console import Console

    console = Console(stderr=True)

    def report(events: int, sim_time: float) -> None:
        from ..units import format_time

        console.print(f"{label}: {events} events, t = {format_time(sim_time)}", end="\r")
    return report


# One meaning everywhere (flows, coll, compare): which network model runs the schedule.
model_option = click.option(
    "--model", type=click.Choice(["fluid", "packet", "both"]), default="fluid",
    show_default=True,
    help="Network model: fluid (max-min fair flows), packet (packets, buffers, credits, "
         "round-robin ports; small cases) or both (adds the fluid model's error).")


# Collectives on part of a machine (netsim.run.collective_groups), in coll and compare.
axis_option = click.option(
    "--axis", type=click.IntRange(min=0), default=None,
    help="Run on every line along grid axis N at once (tt-metal cluster_axis); shows each "
         "line's time, and the time is the slowest line's.")
nodes_option = click.option(
    "--nodes", default=None, metavar="A,B,...|@FILE",
    help="Run on these endpoints: rank i on the i-th (names, or @FILE of names); rings "
         "follow --order (auto keeps this order when it is already a ring of neighbours).")

# The fluid engine's approximate mode (netsim.engine.simulate's tolerance).
def _no_nan(ctx, param, value):
    # click's range check compares, and every comparison with nan is false: it lets nan in
    if value is not None and value != value:
        raise click.BadParameter(f"{value!r} is not a number in [0, 1)")
    return value


tolerance_option = click.option(
    "--tolerance", type=click.FloatRange(0.0, 1.0, max_open=True), default=0.0,
    show_default=True, metavar="REL", callback=_no_nan,
    help="Approximate mode: flows due within REL x t of a completion at time t complete "
         "together, at the last of them (fewer events when many flows end close together; "
         "late, never early). 0: exact.")


def model_columns(records: Sequence[dict[str, Any]]) -> list:
    """Table columns for what ``--model packet|both`` adds to records (none for fluid)."""
    from ..report import format_us

    def percent(value: Any) -> str:
        return "-" if value is None else f"{100 * value:+.2f}%"

    if any("makespan_error" in r for r in records):
        return [("packet_time_s", "packet (us)", format_us),
                ("makespan_error", "fluid err", percent),
                ("op_error_max", "worst op err", percent)]
    if any(r.get("model") == "packet" for r in records):
        return [("model", "model", str)]
    return []


class ProgressBar:
    """Counts ``total`` steps (``done``) and draws them as a rich bar on stderr, only when
    stderr is a terminal and there is more than one step (or on ``console``, for tests).
    Use it as a context manager; :meth:`each` ticks once per item, after the caller's
    work on it.

    >>> bar = ProgressBar(3, "sizes")            # no terminal here: counts, draws nothing
    >>> with bar:
    ...     seen = [item for item in bar.each("abc")]
    >>> bar.done, bar.drawn
    (3, False)
    """

    def __init__(self, total: int, label: str, *, console: Any = None) -> None:
        self.total, self.label, self.done = int(total), label, 0
        self.drawn = self.total > 1 and (console is not None or sys.stderr.isatty())
        self._console, self._bar, self._task = console, None, None

    def __enter__(self) -> "ProgressBar":
        if self.drawn:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeRemainingColumn)

            self._bar = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(),
                                 TimeRemainingColumn(), TextColumn("{task.fields[status]}"),
                                 console=self._console or Console(stderr=True),
                                 transient=True)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total, status="")
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def advance(self, steps: int = 1) -> None:
        self.done += steps
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)

    def each(self, items):
        """The items of ``items``, one tick as the next is asked for (after the work)."""
        for item in items:
            yield item
            self.advance()

    def reporter(self):
        """The engine's ``progress(events, sim_time)`` callback: the bar's status text
        while a bar is drawn (one line on screen), else :func:`progress_reporter`'s."""
        if not self.drawn:
            return progress_reporter(self.label)
        from ..units import format_time

        def report(events: int, sim_time: float) -> None:
            if self._bar is not None:
                self._bar.update(self._task, status=f"{events} events, "
                                                    f"t = {format_time(sim_time)}")
        return report


__all__ += ["ProgressBar"]


# -- shell completion (click's shell_complete= callbacks) -------------------------------------
def complete_op(ctx, param, incomplete: str) -> list:
    """Collective op names starting with ``incomplete`` (``netsim coll all<TAB>``).

    >>> [item.value for item in complete_op(None, None, "all")]
    ['allreduce', 'allgather', 'alltoall']
    """
    from click.shell_completion import CompletionItem

    from ..algorithms import OPS

    return [CompletionItem(op) for op in OPS if op.startswith(incomplete)]


def complete_topo(ctx, param, incomplete: str) -> list:
    """Preset names starting with ``incomplete``, then file names (a YAML machine).

    >>> [item.value for item in complete_topo(None, None, "dgx-h")]
    ['dgx-h100', 'dgx-h100-cluster', 'dgx-h']
    """
    from click.shell_completion import CompletionItem

    from ..topology import preset_names

    return ([CompletionItem(name) for name in preset_names() if name.startswith(incomplete)]
            + [CompletionItem(incomplete, type="file")])


def complete_algo(ctx, param, incomplete: str) -> list:
    """``auto`` and the algorithm names of the command's OP (every op's when the command
    line has none yet, or no OP: ``place``) starting with ``incomplete``.

    >>> [item.value for item in complete_algo(None, None, "auto")]
    ['auto']
    """
    from click.shell_completion import CompletionItem

    from ..algorithms import OPS, algorithms_for

    # While completing, click leaves the positional OP unparsed, in ctx.args.
    given = [] if ctx is None else [ctx.params.get("op"), *ctx.args]
    op = next((word for word in given if word in OPS), None)
    ops = [op] if op in OPS else list(OPS)
    names = dict.fromkeys(["auto", *(a.name for o in ops for a in algorithms_for(o))])
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


__all__ += ["complete_op", "complete_topo", "complete_algo"]


def wrote(what: Any) -> None:
    """``wrote WHAT`` on stderr after writing a file, unless ``netsim -q`` (errors only)."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root().obj if ctx is not None else None
    if not (isinstance(root, dict) and root.get("quiet")):
        click.echo(f"wrote {what}", err=True)


__all__ += ["wrote"]


def _packet_callback(ctx, param, value):
    if value is None:            # not given: the packet model's modules stay unloaded
        return None
    from ..run import parse_packet_option

    return parse_packet_option(value)


# The packet model's parameters (netsim.packet.options), with --model packet or both.
packet_option = click.option(
    "--packet", default=None, callback=_packet_callback,
    metavar="payload=SIZE,header=SIZE,buffers=N,switching=MODE",
    help="Packet model parameters (with --model packet|both), any of: payload and header "
         "(e.g. 4KiB, 48B; default the machine's calibration), buffers (packets per input "
         "buffer; default covers the credit round trip), switching (store-and-forward, "
         "cut-through).")


__all__ += ["packet_option"]
