"""``netsim coll OP --topo SPEC``: simulate a collective, print an nccl-tests-like table.

Examples::

    netsim coll allreduce --topo torus:8x8,bw=50GB/s --algo ring --size 64MiB
    netsim coll alltoall --topo mesh:4x4 --sizes 1KiB:1GiB --format csv -o a2a.csv
    netsim coll allreduce --topo galaxy-bh --axis 0 --algo tt_ring --sizes 1MiB:1GiB
    netsim coll --list

Other report options plug in with :func:`add_report_option` (a click option plus a hook
that sees the runs and records after the simulation), so e.g. ``--measured FILE.csv`` and
``--heatmap FILE`` are added without changing this command's body.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import click

from ..run import CollectiveRun, requirement_text, run_sweep, sweep_sizes
from ..run import candidates_text, nccl_tests_log
from ..run import ideal_links_note, ran_text, recording_timelines, resolve_default
from ..errors import InputError, unknown_name
from ..report import BUSBW_FACTOR, NCCL_COLUMNS
from ..topology import parse_topology
from ..units import format_size, format_time, parse_time
from .options import (alpha_option, alpha_seconds, check_outputs, check_writable,
                      chunks_option, emit, fault_options, fault_specs, nccl_format_option,
                      format_records, model_columns, model_option, output_option,
                      tolerance_option, axis_option, nodes_option, overwrite_option)
from .options import engine_config, log_engine, packet_option
from .options import ProgressBar, complete_op, wrote
from .options import algo_option, ranks_option, size_option, sizes_option, topo_option
from .options import gamma_option, gamma_rate, AT_OPTION, WINDOWS_OPTION
from .options import gpus_per_thread_option, nccl_option, nccl_settings

__all__ = ["command", "add_report_option", "ReportHook"]

Column = tuple[str, str, Callable[[Any], str]]


@dataclass(frozen=True)
class ReportHook:
    """What an extra report option does.

    ``check(value, overwrite)`` runs before any simulation (fail early, e.g. an output
    file that exists); ``apply(value, runs, records, overwrite, topology)`` runs after it,
    may add keys to the records in place and returns extra table columns (key, header,
    formatter). ``outputs(value, sizes)`` lists the files it will write, so that every
    output of the command is checked (and two on one path refused) before any is written.
    """

    apply: Callable[[Any, Sequence[CollectiveRun], list[dict], bool, Any], list[Column]]
    check: Callable[[Any, bool], None] | None = None
    outputs: Callable[[Any, int], list] | None = None


_HOOKS: dict[str, ReportHook] = {}


def add_report_option(option: click.Option, hook: ReportHook) -> None:
    """Add ``option`` to ``netsim coll``; ``hook`` handles its value when it is given."""
    command.params = [p for p in command.params if p.name != option.name] + [option]
    _HOOKS[option.name] = hook


def _list_algorithms(op: str | None, fmt: str, output, overwrite) -> None:
    from ..algorithms import OPS, algorithms_for

    ops = [op] if op else list(OPS)
    rows = [{"op": o, "algorithm": a.name, "needs": requirement_text(a) or "-",
             "summary": a.summary} for o in ops for a in algorithms_for(o)]
    if not rows and fmt == "table":
        emit("no collective algorithms registered\n", output, overwrite)
        return
    emit(format_records(rows, fmt, title="collective algorithms"), output, overwrite)


def _options(chunks: int | None, gamma: str | None, order: str, root: int,
             gpus_per_thread: int | None = None, nccl: dict | None = None):
    from ..algorithms import AlgoOptions

    rate = gamma_rate(gamma)
    extra = {} if gpus_per_thread is None else {"gpus_per_thread": gpus_per_thread}
    extra.update(nccl or {})
    return AlgoOptions(chunks=chunks, gamma=rate, order=order, root=root, extra=extra)


def _sizes(size: str | None, sizes: str | None) -> list[float]:
    """The message sizes of --size or --sizes; errors name the option and its text."""
    option, text = ("--sizes", sizes) if sizes is not None else ("--size", size or "64MiB")
    try:
        values = sweep_sizes(text)
    except InputError as err:
        raise InputError(f"{option} {text!r}: {err}") from None
    if any(value < 0 for value in values):
        raise InputError(f"{option} {text!r}: sizes must be >= 0 bytes")
    return values


def _title(runs: Sequence[CollectiveRun], alpha: float, axis: int | None = None) -> str:
    first = runs[0]
    extra = f", alpha {format_time(alpha)}" if alpha else ""
    library = first.record().get("library")
    extra += f", {library}" if library else ""
    note = ideal_links_note(first.machine, alpha)
    extra += f", {note}" if note else ""
    if first.groups:
        return (f"{first.op} on {first.topology}: {len(first.groups)} lines of {first.ranks} "
                f"ranks along axis {axis} at once ({', '.join(first.groups)}), time = the "
                f"slowest line{extra}")
    return f"{first.op} on {first.topology}: {first.ranks} ranks{extra}"


#: Extra table columns of a run on every line of an axis (--axis).
GROUP_COLUMNS: list[Column] = [("groups", "lines", str), ("slowest_group", "slowest", str),
                               ("group_times", "time per line (in title order)",
                                lambda text: ",".join(t.split("=")[-1]
                                                      for t in str(text).split(",")))]


@click.command("coll")
@click.argument("op", required=False, shell_complete=complete_op)
@topo_option(help="Machine: a spec (torus:8x8,bw=50GB/s), a preset or a YAML file.")
@algo_option(help="Algorithm name; default: what the machine's own library runs there "
                   "(the preset's library: NCCL's model on NVIDIA machines, tt-metal's "
                   "CCLs on Tenstorrent machines; auto where a machine has none); auto: "
                   "the fastest netsim knows (candidates whose lower bound exceeds the "
                   "fastest time are not simulated: listed as name>=bound).")
@click.option("--schedule", "schedule_file", type=click.Path(dir_okay=False), default=None,
              metavar="FILE",
              help="Run this schedule instead of an algorithm: an MSCCL .xml or a netsim "
                   ".json (e.g. from `netsim synth -o`); the same as --algo FILE.")
@size_option()
@sizes_option()
@ranks_option()
@axis_option
@nodes_option
@chunks_option
@alpha_option
@gamma_option
@click.option("--order", default="auto", show_default=True,
              help="Rank order for rings, lines and trees: auto (the machine's physical "
                   "ring/line), natural, row, snake, hilbert.")
@click.option("--root", type=click.IntRange(min=0), default=0, show_default=True,
              help="Root rank of broadcast and reduce.")
@gpus_per_thread_option(default_text="1: one process per GPU, or the nGpus of a "
                                     "--measured nccl-tests run")
@nccl_option(version_text="default 2.30.7, or the release a --measured nccl-tests log prints")
@click.option("--list", "list_algorithms", is_flag=True,
              help="List the algorithms of every op (or of OP) and exit.")
@fault_options
@model_option
@packet_option
@tolerance_option
@nccl_format_option
@output_option
@overwrite_option
def command(op, topo_spec, algorithm, schedule_file, size, sizes, ranks, axis, nodes, chunks,
            alpha, gamma, order, root, gpus_per_thread, nccl_env, list_algorithms, fail_links,
            degrade_links, model, packet, tolerance, fmt, output, overwrite, **extras):
    """Simulate collective OP (allreduce, allgather, reducescatter, alltoall, broadcast,
    reduce) and report time, algbw, busbw and efficiency against two lower bounds: the
    algorithm's (algo: what the links its run used allow its kind) and the machine's (the
    best any algorithm could do on the links these ranks can use)."""
    if op is not None and op not in BUSBW_FACTOR:
        raise unknown_name("collective", op, BUSBW_FACTOR)
    if schedule_file is not None:
        if algorithm != "default":
            raise InputError("give --algo or --schedule, not both")
        algorithm = schedule_file
    if output:
        check_writable(output, overwrite)
    if list_algorithms:
        _list_algorithms(op, fmt, output, overwrite)
        return
    if op is None or topo_spec is None:
        raise click.UsageError("give an OP and --topo SPEC (or --list)")
    if size is not None and sizes is not None:
        raise click.UsageError("give --size or --sizes, not both")
    if sum(x is not None for x in (ranks, axis, nodes)) > 1:
        raise click.UsageError("give one of --ranks, --axis and --nodes")
    hooks = {name: (hook, extras[name]) for name, hook in _HOOKS.items()
             if extras.get(name) is not None}
    message_sizes = _sizes(size, sizes)
    check_outputs([output] + [path for hook, value in hooks.values() if hook.outputs
                              for path in hook.outputs(value, message_sizes)],
                  overwrite=overwrite)
    for hook, value in hooks.values():
        if hook.check is not None:
            hook.check(value, overwrite)
    alpha_s = alpha_seconds(alpha)
    faults = fault_specs(fail_links, degrade_links)
    topology = parse_topology(topo_spec)
    runs_as = resolve_default(op, topology, algorithm).algorithm
    if gpus_per_thread is not None and runs_as != "nccl":
        raise click.UsageError("--gpus-per-thread applies to NCCL's model (--algo nccl: the "
                               "host side of nccl-tests), not to --algo " + str(runs_as))
    nccl = nccl_settings(nccl_env)
    if nccl and runs_as != "nccl":
        raise click.UsageError("--nccl applies to NCCL's model (--algo nccl), not to --algo "
                               + str(runs_as))
    if extras.get("measured") is not None:   # the measured run's op, ranks and -g (--measured)
        from ..run import measured_run_options

        ranks, gpus_per_thread, version = measured_run_options(
            extras["measured"], op, ranks=ranks, placed=axis is not None or nodes is not None,
            runs_as=runs_as, gpus_per_thread=gpus_per_thread)
        if version is not None and "nccl_version" not in nccl:   # the release it printed
            nccl["nccl_version"] = version
    timed = extras.get("at") is not None or extras.get("windows") is not None
    with ProgressBar(len(message_sizes), f"{op}") as bar, \
            (recording_timelines() if timed else nullcontext()):   # --at/--windows: over time
        # one sweep, not one per size: the sizes share its router and what it keeps
        runs = run_sweep(
            op, topology, algorithm, message_sizes, each=lambda _run: bar.advance(),
            ranks=ranks, options=_options(chunks, gamma, order, root, gpus_per_thread, nccl),
            alpha=alpha_s,
            progress=bar.reporter(), faults=faults, axis=axis,
            nodes=nodes, model=model, packet=packet, tolerance=tolerance,
            engine=engine_config())
    records = [run.record() for run in runs]
    _log_engine(runs)
    if runs and ideal_links_note(runs[0].machine, alpha_s):   # as compare marks its rows:
        for record in records:                                 # --plot's legend says so
            record["ideal_links"] = True
    columns = list(NCCL_COLUMNS) + model_columns(records)
    if axis is not None:
        columns += GROUP_COLUMNS
    if faults:
        columns += [("faults", "faults", str), ("rerouted", "rerouted", str)]
    from ..outputs import all_or_nothing

    with all_or_nothing():      # figures and -o: all written, or none (a full disk)
        for hook, value in hooks.values():
            columns += hook.apply(value, runs, records, overwrite, topology)
        if any(r.get("candidates") for r in records):
            columns.append(("candidates", "candidates", candidates_text))
        columns += [("nccl", "nccl choice", str)] if any("nccl" in r for r in records) else []
        columns += [("tt_metal", "tt-metal choice", str)] \
            if any("tt_metal" in r for r in records) else []
        if algorithm == "synth":    # hook: synthesised vs best fixed (netsim/cli/synth.py)
            from .synth import SYNTH_COLUMNS

            columns += SYNTH_COLUMNS
        if fmt == "nccl":
            emit(nccl_tests_log(records, root=root), output, overwrite)
            return
        emit(format_records(records, fmt, columns=columns,
                            title=_title(runs, alpha_s, axis)), output, overwrite)


def _log_engine(runs) -> None:
    """-v: what the engine ran for each size, one line each (Result.meta["engine"])."""
    for run in runs:
        log_engine(f"{run.op} {format_size(run.size_bytes)}", run.result.meta.get("engine"))


# --measured FILE.csv: measured rows beside the simulated ones (netsim/measured.py).
def _measured(path, runs, records, overwrite, topology):
    from ..run import compare_measured

    return compare_measured(path, records)


# The file is read (and refused: another op, another rank count) before any simulation,
# by measured_run_options in the command's body: its ranks and -g shape the run.
add_report_option(
    click.Option(["--measured"], metavar="FILE", default=None,
                 help="Measurements: an nccl-tests log, a tt-metal CCL result table or a "
                      "CSV (size_bytes and busbw_GBps or time_s): adds them and the error "
                      "per row. The file's rank count is used (or must match --ranks) and "
                      "its -g sets NCCL's host floor; a file of another op is refused."),
    ReportHook(apply=_measured))


# --heatmap FILE: the link heatmap of every size run (FILE-64MiB.png ... for several sizes).
def _heatmap(path, runs, records, overwrite, topology):
    from ..report import draw_heatmap, draw_time_heatmaps

    params = click.get_current_context().params
    at, windows = params.get("at"), params.get("windows")
    for run, target in zip(runs, _heatmap_outputs(path, [run.size_bytes for run in runs])):
        if at is not None or windows is not None:     # the links over time (--at/--windows)
            draw_time_heatmaps(run.machine or topology, run.result, target,
                               at=None if at is None else parse_time(at, "--at"),
                               windows=windows, overwrite=overwrite,
                               title=f"{run.op} {run.algorithm}, {format_size(run.size_bytes)}, "
                                     f"{run.topology}")
            wrote(target)
            continue
        # the machine the run used: a ring-fabric run's links carry less (fabric: auto)
        draw_heatmap(run.machine or topology, run.result, path=target, overwrite=overwrite,
                     title=f"{run.op} {run.algorithm}, {format_size(run.size_bytes)}, "
                           f"{run.topology}: link utilisation")
        wrote(target)
    return []


def _check_figure(path, overwrite) -> None:
    from ..report import figure_format

    figure_format(path)


def _heatmap_outputs(path, sizes) -> list:
    """``path`` for one size, else one file per size named by it (``hot-64MiB.png``)."""
    from ..report import labelled_paths

    if len(sizes) == 1:
        return [Path(path)]
    return labelled_paths(path, [format_size(s).replace(" ", "") for s in sizes])


# --save-result FILE.json: the largest size's result with the machine embedded, for
# `netsim heatmap FILE.json` later.
def _save_result(path, runs, records, overwrite, topology):
    from ..report import write_result_document

    largest = max(runs, key=lambda run: run.size_bytes)
    write_result_document(path, largest.result, topology, spec=None,
                          overwrite=overwrite)
    wrote(path)
    return []


# --plot FILE: busbw over message size (with the --measured points when given).
def _plot(path, runs, records, overwrite, topology):
    from ..report import draw_curves

    label = f"{runs[0].topology} {ran_text(records)}" if runs else "netsim"
    label += " (ideal links)" if records and records[0].get("ideal_links") else ""
    measured = [r for r in records if r.get("measured_busbw_GBps") is not None]
    points = {label: (([r["size_bytes"] for r in measured],
                       [r["measured_busbw_GBps"] for r in measured]))} if measured else None
    params = click.get_current_context().params
    source = Path(params["measured"]).name if measured and params.get("measured") else None
    if source and len(source) > 48:         # the legend names the file, not all of it
        source = source[:45] + "..."
    draw_curves({label: records}, path, y="busbw_GBps", measured=points, overwrite=overwrite,
                title=f"{runs[0].op} busbw over message size" if runs else None,
                log=True if params.get("log") else None,
                sources={label: source} if source else None)
    wrote(path)
    return []


add_report_option(
    click.Option(["--heatmap"], metavar="FILE", default=None,
                 help="Draw the link heatmap (.png/.svg/.pdf); FILE-64MiB ... per size."),
    ReportHook(apply=_heatmap, check=_check_figure, outputs=_heatmap_outputs))
add_report_option(
    click.Option(["--save-result"], metavar="FILE.json", default=None,
                 help="Write the (largest size's) result with its machine, for "
                      "`netsim heatmap`."),
    ReportHook(apply=_save_result, outputs=lambda path, sizes: [path]))
add_report_option(
    click.Option(["--plot"], metavar="FILE", default=None,
                 help="Draw busbw over message size (with --measured points, their source "
                      "and an error panel)."),
    ReportHook(apply=_plot, check=_check_figure,
               outputs=lambda path, sizes: [path]))


def _check_timed(option: str):
    """--at and --windows shape the --heatmap: refused without it, or with the packet
    model (it keeps no timeline)."""
    def check(value, overwrite) -> None:
        params = click.get_current_context().params
        if option == "--at":
            parse_time(value, "--at")
        if params.get("heatmap") is None:
            raise click.UsageError(f"{option} draws the --heatmap over time: give --heatmap FILE")
        if params.get("model") == "packet":
            raise click.UsageError(f"{option} needs the fluid model's timeline, not --model "
                                   f"{params.get('model')}")
    return check


# --at TIME / --windows N: the --heatmap at one instant, or in N windows over the run
add_report_option(
    click.Option(AT_OPTION[0], **AT_OPTION[1]),
    ReportHook(apply=lambda value, runs, records, overwrite, topology: [],
               check=_check_timed("--at")))
add_report_option(
    click.Option(WINDOWS_OPTION[0], **WINDOWS_OPTION[1]),
    ReportHook(apply=lambda value, runs, records, overwrite, topology: [],
               check=_check_timed("--windows")))
# --log: the --plot's busbw axis logarithmic (small sizes are not flattened against zero)
add_report_option(
    click.Option(["--log"], is_flag=True, default=False,
                 help="With --plot: a logarithmic busbw axis."),
    ReportHook(apply=lambda value, runs, records, overwrite, topology: []))
