"""``netsim compare OP --topo A --topo B ...``: one collective on several machines, side by side.

Examples::

    netsim compare allreduce --topo torus:4x4 --topo mesh:4x4 --topo nvswitch:16 --size 64MiB
    netsim compare alltoall --topo mesh:8x4 --topo fattree:k=4 --sizes 1KiB:1GiB \\
        --normalize injection --plot a2a.png

A row per topology and algorithm: time, busbw, the algorithm's bound and efficiency (what
the links its run used allow its kind), the machine's bound and efficiency (the best any
algorithm could do there), the most utilised link, and the number of links and switches.
``--normalize injection`` scales every link of each machine by one factor so that its
endpoints inject, on average, as many bytes/s as the first machine's: the comparison is then
of shapes, not of link speeds.
"""

from __future__ import annotations

import click

from ..run import ideal_links_note, ran_text, resolve_default, run_collective, sweep_sizes
from ..errors import InputError, unknown_name
from ..report import BUSBW_FACTOR, format_efficiency, format_GBps, format_us
from ..topology import normalize_injection, parse_topology
from ..units import format_rate, format_size
from .options import (alpha_option, alpha_seconds, check_outputs, emit, format_option,
                      format_records, model_columns, model_option, output_option,
                      tolerance_option, axis_option, nodes_option,
                      overwrite_option, progress_reporter)
from .options import engine_config, log_engine, packet_option
from .options import gpus_per_thread_option, nccl_option, nccl_settings
from .options import complete_op, wrote
from .options import algo_option, ranks_option, size_option, sizes_option, topo_option
from .options import figure_option

__all__ = ["command"]


def _size(nbytes: float) -> str:
    return format_size(nbytes).replace(" ", "")


def _maybe(fmt):
    return lambda v: "-" if v is None else fmt(v)


_COLUMNS = [
    ("topology", "topology", str), ("algorithm", "algorithm", str),
    ("size_bytes", "size", _size), ("ranks", "ranks", str),
    ("time_s", "time (us)", _maybe(format_us)),
    ("busbw_GBps", "busbw (GB/s)", _maybe(format_GBps)),
    ("bound_s", "algo bound (us)", _maybe(format_us)), ("bound", "algo bound by", str),
    ("efficiency", "algo eff.", _maybe(format_efficiency)),
    ("machine_bound_s", "machine bound (us)", _maybe(format_us)),
    ("machine_efficiency", "machine eff.", _maybe(format_efficiency)),
    ("max_link_util", "max link util", _maybe(lambda v: f"{v:.2f}")),
    ("links", "links", str), ("switches", "switches", str),
]


def _row(spec: str, topo, requested: str, size: float, ranks, options) -> dict:
    """One comparison row; an algorithm that does not apply gives a row with a note."""
    base = {"topology": spec, "requested": requested,
            "size_bytes": int(size) if float(size).is_integer() else size,
            "links": topo.num_links, "switches": topo.num_switches}
    try:
        run = run_collective(options["op"], topo, requested, size, ranks=ranks,
                             options=_nccl_options(options, topo, requested),
                             alpha=options["alpha"], progress=options["progress"],
                             axis=options["axis"], nodes=options["nodes"],
                             model=options["model"], packet=options["packet"],
                             tolerance=options["tolerance"], engine=options["engine"])
    except InputError as err:
        return {**base, "algorithm": requested, "ranks": ranks or topo.num_endpoints,
                "time_s": None, "busbw_GBps": None, "bound_s": None, "bound": None,
                "efficiency": None, "machine_bound_s": None, "machine_bound": None,
                "machine_efficiency": None, "max_link_util": None, "note": str(err)}
    record = run.record()
    log_engine(f"{spec} {requested} {format_size(size)}", record.get("engine"))   # -v
    keep = ("algorithm", "ranks", "time_s", "algbw_GBps", "busbw_GBps", "bound_s", "bound",
            "efficiency", "machine_bound_s", "machine_bound", "machine_efficiency",
            "max_link_util", "groups", "slowest_group", "group_times",
            "library", "nccl", "candidates", "engine")
    ideal = ideal_links_note(run.machine or topo, options["alpha"])
    return {**base, **{k: record[k] for k in keep if k in record}, **(run.model or {}),
            **({"ideal_links": True} if ideal else {})}


def _runs_nccl(op: str, topo, requested: str) -> bool:
    """Whether ``requested`` on ``topo`` is NCCL's model (``default`` on an NVIDIA preset)."""
    try:
        return resolve_default(op, topo, requested).algorithm == "nccl"
    except InputError:           # an unknown name: its row says so
        return False


def _nccl_options(options: dict, topo, requested: str):
    """--gpus-per-thread and --nccl as algorithm options where NCCL's model runs (as coll
    passes them), else None: the other machines of a comparison run as they would alone."""
    if not options["nccl"] or not _runs_nccl(options["op"], topo, requested):
        return None
    from ..algorithms import AlgoOptions

    return AlgoOptions(extra=options["nccl"])


@click.command("compare")
@click.argument("op", shell_complete=complete_op)
@topo_option(dest="specs", multiple=True,
             help="A machine to compare (repeat: --topo A --topo B ...).")
@size_option()
@sizes_option(example="1KiB:1GiB")
@algo_option(dest="algorithms", multiple=True, default=("default",),
             help="Algorithm name, default (what each machine's own library runs; auto "
                   "where it has none) or auto (the fastest netsim knows); repeat for "
                   "several.")
@ranks_option(help="Number of ranks (default: every endpoint of each machine).")
@axis_option
@nodes_option
@alpha_option
@click.option("--normalize", type=click.Choice(["injection"]), default=None,
              help="Scale link bandwidths so every machine's endpoints inject as much as "
                   "the first's.")
@figure_option("--plot",
               help="Also draw busbw (.png/.svg/.pdf): curves over size, or bars for one size.")
@gpus_per_thread_option()
@nccl_option()
@model_option
@packet_option
@tolerance_option
@format_option
@output_option
@overwrite_option
def command(op, specs, size, sizes, algorithms, ranks, axis, nodes, alpha, normalize, plot,
            gpus_per_thread, nccl_env, model, packet, tolerance, fmt, output, overwrite):
    """Run collective OP on every --topo machine and compare time, busbw and efficiency."""
    if op not in BUSBW_FACTOR:
        raise unknown_name("collective", op, BUSBW_FACTOR)
    if not specs:
        raise InputError("give at least one --topo SPEC")
    if size is not None and sizes is not None:
        raise InputError("give --size or --sizes, not both")
    if sum(x is not None for x in (ranks, axis, nodes)) > 1:
        raise InputError("give one of --ranks, --axis and --nodes")
    check_outputs([output, plot], overwrite=overwrite)
    if plot:
        from ..report import figure_format

        figure_format(plot)
    points = sweep_sizes(sizes if sizes is not None else (size or "64MiB"))
    topologies = [parse_topology(spec) for spec in specs]
    factors, target = [1.0] * len(specs), None
    if normalize == "injection":
        topologies, factors, target = normalize_injection(topologies)
    nccl = nccl_settings(nccl_env)
    if gpus_per_thread is not None:
        nccl["gpus_per_thread"] = gpus_per_thread
    if nccl and not any(_runs_nccl(op, topo, algo) for topo in topologies
                        for algo in algorithms):
        raise click.UsageError("--gpus-per-thread and --nccl apply to NCCL's model (--algo "
                               "nccl, or default on an NVIDIA machine); no machine here runs it")
    options = {"op": op, "alpha": alpha_seconds(alpha), "nccl": nccl,
               "progress": progress_reporter(op), "axis": axis, "nodes": nodes,
               "model": model, "packet": packet, "tolerance": tolerance,
               "engine": engine_config()}
    records = []
    for spec, topo, factor in zip(specs, topologies, factors):
        for algo in algorithms:
            for nbytes in points:
                row = _row(spec, topo, algo, nbytes, ranks, options)
                if normalize:
                    row["bw_scale"] = factor
                records.append(row)
    if all(r["time_s"] is None for r in records):
        raise InputError(records[0]["note"])
    title = _title(op, specs, target)
    ideal = sorted({r["topology"] for r in records if r.get("ideal_links")},
                   key=list(specs).index)
    if ideal:       # generic specs: flat curves from small sizes up, and the title says why
        title += f"; ideal links (no latency, no per-message cost): {', '.join(ideal)}"
    columns = list(_COLUMNS) + ([("bw_scale", "bw scale", lambda v: f"{v:.3g}")]
                                if normalize else []) + model_columns(records)
    if any(r.get("groups") for r in records):
        columns += [("groups", "lines", _maybe(str)), ("slowest_group", "slowest", _maybe(str)),
                    ("group_times", "time per line", _maybe(str))]
    if any(r.get("nccl") for r in records):
        columns.append(("nccl", "nccl choice", _maybe(str)))
    if any(r.get("note") for r in records):
        columns.append(("note", "note", str))
    doc = {"op": op, "normalize": normalize, "injection_Bps": target, "title": title,
           "records": records}
    emit(format_records(records, fmt, document=doc, columns=columns, title=title), output,
         overwrite)
    if plot:
        _plot(records, plot, len(points) > 1, title, overwrite)


def _title(op: str, specs, target: float | None) -> str:
    title = f"{op} on {len(specs)} machine{'s' if len(specs) > 1 else ''}"
    if target is not None:
        title += (f"; link bandwidths scaled so every endpoint injects {format_rate(target)} "
                  f"in total, as on {specs[0]}")
    return title


def _plot(records: list[dict], path: str, sweep: bool, title: str, overwrite: bool) -> None:
    from ..report import draw_bars, draw_curves

    if sweep:
        groups: dict[tuple, list[dict]] = {}
        for r in records:
            if r["busbw_GBps"] is not None:
                groups.setdefault((r["topology"], r["requested"]), []).append(r)
        if not groups:
            raise InputError("nothing to plot: no algorithm applied")
        # the legend names what ran at each size, not what was asked ("auto", "default")
        series = {_legend(rows[0], ran_text(rows)): rows for rows in groups.values()}
        draw_curves(series, path, title=title, overwrite=overwrite)
    else:
        draw_bars({_legend(r, ran_text([r])): r["busbw_GBps"] for r in records},
                  path, title=title, overwrite=overwrite)
    wrote(path)


def _legend(record: dict, ran: str) -> str:
    """A legend entry: the machine, what ran, and "(ideal links)" for a machine whose links
    have no latency and no per-message cost (its curve is flat from small sizes up)."""
    return f"{record['topology']} {ran}" + (" (ideal links)" if record.get("ideal_links")
                                            else "")
