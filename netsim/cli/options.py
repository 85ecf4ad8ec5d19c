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
           "envelope", "chunks_option", "nccl_format_option", "model_option",
           "model_columns", "tolerance_option", "axis_option", "nodes_option",
           "gpus_per_thread_option", "nccl_option", "nccl_settings"]

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
def output_file_option(*, required: bool = False,
                       help: str = "Write the output to this file instead of stdout."):
    """``-o/--output FILE``: where a command writes (stdout without it, unless required)."""
    return click.option("-o", "--output", type=click.Path(dir_okay=False), required=required,
                        default=None, help=help)


output_option = output_file_option()
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


def gpus_per_thread_option(*, default_text: str = "1: one process per GPU"):
    """``--gpus-per-thread N``: nccl-tests' ``-g N`` for NCCL's model."""
    return click.option(
        "--gpus-per-thread", type=click.IntRange(min=0), default=None, metavar="N",
        help="With NCCL's model: GPUs one host thread enqueues for, as nccl-tests -g N, "
             f"whose host time bounds small sizes [{default_text}]; 0: the GPU time alone.")


def nccl_option(*, version_text: str = "default 2.30.7"):
    """``--nccl KEY=VALUE,...``: NCCL's settings for its model (:func:`nccl_settings`)."""
    return click.option(
        "--nccl", "nccl_env", default=None, metavar="KEY=VALUE,...",
        help="With NCCL's model: force its choice as NCCL's environment variables do, e.g. "
             "ALGO=NVLS,PROTO=Simple (NCCL_ALGO, NCCL_PROTO); VERSION=2.26.2 picks with "
             f"that release's tuner (2.19-2.30; {version_text}).")


def nccl_settings(text: str | None) -> dict:
    """``--nccl ALGO=NVLS,PROTO=Simple`` (or ``NCCL_ALGO=...``) as NCCL's model options
    (:func:`netsim.algorithms.nccl_options`); one-line errors for text that is not
    KEY=VALUE and for keys and values the model does not take.

    >>> nccl_settings("NCCL_ALGO=Ring,proto=ll128")
    {'nccl_algorithm': 'ring', 'nccl_protocol': 'LL128'}
    >>> nccl_settings("VERSION=2.26.2")
    {'nccl_version': '2.26.2'}
    """
    from ..algorithms import nccl_options
    from ..errors import InputError

    pairs: dict = {}
    for part in filter(None, (text or "").split(",")):
        key, eq, value = part.partition("=")
        if not eq or not value.strip():
            raise InputError(f"--nccl: {part!r} is not KEY=VALUE (e.g. ALGO=NVLS,PROTO=Simple)")
        pairs[key] = value
    return nccl_options(pairs, where="--nccl")


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
    for row in records:           # lists and mappings (candidates, faults) as JSON text
        writer.writerow({k: json.dumps(to_jsonable(v)) if isinstance(v, (list, dict))
                         else to_jsonable(v) for k, v in row.items()})
    return out.getvalue()


def render_table(records: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str, Callable]]
                 | None = None, title: str | None = None, *, width: int | None = None) -> str:
    """A rich table as text. ``columns`` are (key, header, formatter) triples; without
    them every key is a column, and a time in seconds (a key ending in ``_s``) is shown in
    microseconds under ``name (us)``, as ``coll`` shows times.

    ``width`` (characters) defaults to the terminal's when stdout is one, else no limit (a
    file or a pipe gets one line per row). A table wider than that is drawn without lines,
    texts and headers wrapping at spaces; a number is never broken.

    >>> text = render_table([{"op": "allreduce", "time_s": 1.5e-3}], width=40)
    >>> "time (us)" in text and "1500" in text
    True
    """
    if columns is None:
        keys: list[str] = []
        for row in records:
            keys += [k for k in row if k not in keys]
        columns = [_default_column(k, records) for k in keys]
    cells = [[fmt(row.get(key)) if row.get(key) is not None else "-"
              for key, _, fmt in columns] for row in records]
    numeric = [all(isinstance(r.get(key), (int, float)) for r in records if key in r)
               for key, _, _ in columns]
    width = width or _table_width()
    # the boxed table; where it does not fit, one with spaces between columns (no lines),
    # where texts and headers wrap at spaces and a number is never broken
    text = _table_text(title, columns, cells, numeric, width=10**4, compact=False)
    if max(map(len, text.splitlines()), default=0) <= width:
        return text
    if sum(_least_widths(columns, cells)) + len(columns) - 1 <= width:
        return _table_text(title, columns, cells, numeric, width=width, compact=True)
    return _blocks(title, columns, cells, width)


def _blocks(title, columns, cells, width: int) -> str:
    """Rows too wide for the terminal even wrapped: one block of ``header  value`` lines
    per row, as psql's expanded display; long values wrap under themselves."""
    import textwrap

    headers = [" ".join(h.split()) for _, h, _ in columns]
    pad = max(map(len, headers), default=0)
    room = max(width - pad - 2, 10)
    lines = textwrap.wrap(title, width) if title else []
    for n, row in enumerate(cells, 1):
        lines.append(f"-[ {n} ]" + "-" * max(0, pad - 4))
        for h, v in zip(headers, row):
            parts = textwrap.wrap(v, room, break_long_words=True) or [""]
            lines.append(f"{h:<{pad}}  {parts[0]}")
            lines += [" " * (pad + 2) + part for part in parts[1:]]
    return "\n".join(lines) + "\n"


def _table_text(title, columns, cells, numeric, *, width: int, compact: bool) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(header_style="bold",
                  box=box.SIMPLE_HEAD if compact else box.HEAVY_HEAD,
                  padding=(0, 1) if not compact else (0, 0), collapse_padding=compact,
                  show_edge=not compact)
    widths = _fitted_widths(columns, cells, width) if compact else [None] * len(columns)
    for i, (_, header, _) in enumerate(columns):
        table.add_column(header, justify="right" if numeric[i] else "left", width=widths[i],
                         overflow="fold")
    for row in cells:
        table.add_row(*row)
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    if title:                       # above the table, never wrapped to the table's width
        console.print(title, overflow="fold", highlight=False, markup=False)
    console.print(table)
    return "\n".join(line.rstrip() for line in console.file.getvalue().split("\n"))


def _least_widths(columns, cells) -> list[int]:
    """Each column's longest word (header or cell): the narrowest it can be drawn."""
    return [max(len(w) for t in [header] + [row[i] for row in cells] for w in t.split() or [""])
            for i, (_, header, _) in enumerate(columns)]


def _fitted_widths(columns, cells, width: int) -> list[int]:
    """Column widths within ``width`` (one space between columns): each column gets its
    longest word (a number is one word), then the room left goes to the columns whose
    longest line is wider, narrowest need first."""
    texts = [[header] + [row[i] for row in cells] for i, (_, header, _) in enumerate(columns)]
    least = _least_widths(columns, cells)
    most = [max(len(line) for t in col for line in t.splitlines() or [""]) for col in texts]
    room = width - (len(columns) - 1) - sum(least)
    out = list(least)
    for i in sorted(range(len(columns)), key=lambda i: most[i] - least[i]):
        grow = min(max(room, 0), most[i] - least[i])
        out[i] += grow
        room -= grow
    return out


def _table_width() -> int:
    """The terminal's width when stdout is a terminal, else no limit (files and pipes)."""
    import shutil

    if sys.stdout.isatty():
        return max(60, shutil.get_terminal_size((200, 24)).columns)
    return 10**4


def _default_column(key: str, records) -> tuple[str, str, Callable]:
    values = [r[key] for r in records if r.get(key) is not None]
    seconds = key.endswith("_s") and values and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    if seconds:
        return key, f"{key[:-2].replace('_', ' ')} (us)", _microseconds
    return key, key, _plain


def _microseconds(value: Any) -> str:
    return f"{value * 1e6:.6g}"


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


# -- the options several commands share, each declared here once ------------------------------
# A command states only what differs (its default, whether it is required or repeatable, and
# its own help text); the name, type, metavar and completion are the same everywhere.
_TOPO_HELP = "Machine: a spec (mesh:8x4,bw=12.5GB/s,links=4), a preset or a YAML file."


def topo_option(*, dest: str = "topo_spec", required: bool = False, multiple: bool = False,
                default: Any = None, help: str = _TOPO_HELP):
    """``--topo SPEC``: the machine (a spec string, a preset name or a topology file)."""
    return click.option("--topo", dest, metavar="SPEC", required=required, multiple=multiple,
                        default=default, shell_complete=complete_topo, help=help)


def algo_option(*, dest: str = "algorithm", default: Any = "default", multiple: bool = False,
                help: str = "Algorithm name, default (what the machine's own library runs) "
                            "or auto (the fastest netsim knows)."):
    """``--algo NAME``: the collective algorithm (a name, ``default``, ``auto``, a file)."""
    return click.option("--algo", dest, default=default, multiple=multiple, show_default=True,
                        shell_complete=complete_algo, help=help)


def size_option(*, default: str | None = None,
                help: str = "Message size (nccl-tests meaning) [64MiB]."):
    """``--size SIZE``: one message size in bytes (units allowed: 64MiB), nccl-tests' meaning."""
    return click.option("--size", default=default, show_default=default is not None,
                        help=help)


def sizes_option(*, example: str = "1KiB:4GiB"):
    """``--sizes START:STOP[:FACTOR]``: a sweep of sizes (doubling by default)."""
    return click.option("--sizes", default=None, metavar="START:STOP",
                        help=f"Sweep sizes, doubling from START to STOP (e.g. {example}).")


def ranks_option(*, help: str = "Number of ranks (default: every endpoint)."):
    """``--ranks N``: how many ranks, on the machine's first endpoints."""
    return click.option("--ranks", type=click.IntRange(min=1), default=None, help=help)


def gamma_option(command):
    """``--gamma RATE``: the reduction rate at a rank (B/s; units allowed: 100GB/s)."""
    return click.option("--gamma", default=None,
                        help="Reduction rate at a rank (e.g. 100GB/s).")(command)


def gamma_rate(gamma: str | None) -> float | None:
    """``--gamma`` in B/s, or None for the machine's calibrated value."""
    if not gamma:
        return None
    from ..errors import InputError
    from ..units import parse_rate

    rate = parse_rate(gamma, "--gamma")
    if not rate > 0:
        raise InputError(f"--gamma must be a rate > 0 (e.g. 100GB/s), got {gamma!r}")
    return rate


def figure_option(name: str, *, help: str, dest: str | None = None):
    """An option that names a figure file to draw (``--plot``, ``--heatmap``)."""
    # a plain string: the command checks the figure's format and folder itself, so a
    # folder or an unknown suffix gets its one-line error before any work
    decls = [name] if dest is None else [name, dest]
    return click.option(*decls, metavar="FILE", default=None, help=help)


def executor_options(*, workers_default: int | None, workers_help: str):
    """``--workers N`` and ``--scheduler ADDRESS``: where many independent runs go (local
    processes, or a Dask cluster; netsim.run.sweep_executor), for ``sweep`` and ``plan``."""
    def decorate(command):
        command = click.option("--scheduler", default=None, metavar="tcp://HOST:PORT",
                               help="Run on this Dask distributed cluster instead (needs "
                                    "netsim[sweep]).")(command)
        return click.option("--workers", type=click.IntRange(min=1), default=workers_default,
                            show_default=workers_default is not None,
                            help=workers_help)(command)
    return decorate


#: ``--at TIME`` and ``--windows N`` shape a ``--heatmap`` over time (``coll``, ``run``):
#: their declarations, for ``click.option(*decls, **attrs)`` or ``click.Option``.
AT_OPTION = (["--at"], {"metavar": "TIME", "default": None,
                        "help": "With --heatmap: link utilisation at that instant (e.g. "
                                "1.2ms), or in the window of --windows N that holds it."})
WINDOWS_OPTION = (["--windows"], {"metavar": "N", "type": click.IntRange(1, 1000),
                                  "default": None,
                                  "help": "With --heatmap: N maps, one per equal time window "
                                          "of the run, on one colour scale."})


__all__ += ["output_file_option", "topo_option", "algo_option", "size_option", "sizes_option", "ranks_option",
            "gamma_option", "gamma_rate", "figure_option", "executor_options", "AT_OPTION", "WINDOWS_OPTION"]


def wrote(what: Any) -> None:
    """``wrote WHAT`` on stderr after writing a file, unless ``netsim -q`` (errors only)."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root().obj if ctx is not None else None
    if not (isinstance(root, dict) and root.get("quiet")):
        click.echo(f"wrote {what}", err=True)


__all__ += ["wrote"]


def engine_config():
    """The engine's :class:`~netsim.engine.EngineConfig` for this invocation: the engine's
    defaults, with ``netsim --max-memory`` as its memory budget. Commands pass it down to
    the engine with the request (no module global decides the engine's configuration)."""
    from ..engine import EngineConfig

    ctx = click.get_current_context(silent=True)
    root = ctx.find_root().obj if ctx is not None else None
    budget = root.get("max_memory") if isinstance(root, dict) else None
    return EngineConfig(memory_budget=budget)


def log_engine(label: str | None, engine: dict | None) -> None:
    """-v: what the engine ran (``Result.meta["engine"]``) in one line on stderr,
    ``label: `` in front when given; nothing without an engine record."""
    if not engine:
        return
    import logging

    from ..engine import describe

    text = describe(engine)
    logging.getLogger("netsim").info("%s", f"{label}: {text}" if label else text)


__all__ += ["engine_config", "log_engine"]


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
