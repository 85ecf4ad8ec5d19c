"""``netsim run [SCENARIO.yaml]``: run a scenario (the built-in default without an argument)."""

from __future__ import annotations

from contextlib import nullcontext

import click

from ..report import interactive_report
from ..run import default_scenario_path, load_scenario, run_scenario, workload_scenario
from ..run import recording_timelines
from ..units import format_size, format_time, parse_time
from .options import (check_outputs, check_writable, emit,
                      fault_options, fault_specs, format_option,
                      format_records, output_option, overwrite_option, progress_reporter,
                      to_jsonable)
from .options import engine_config, log_engine, wrote
from .options import algo_option, topo_option
from .options import figure_option, AT_OPTION, WINDOWS_OPTION

__all__ = ["command"]


@click.command("run")
@click.argument("scenario", required=False, type=click.Path(dir_okay=False))
@format_option
@output_option
@overwrite_option
@click.option("--report", type=click.Path(dir_okay=False), default=None,
              help="Also write a self-contained HTML report: interactive (links over time, "
                   "hover, zoom) with pip install 'netsim[report]', else tables and figures.")
@figure_option("--heatmap",
               help="Also draw each job's link heatmap (.png/.svg/.pdf); FILE-1.png, "
                    "FILE-2.png ... when there are several jobs.")
@click.option(*AT_OPTION[0], **AT_OPTION[1])
@click.option(*WINDOWS_OPTION[0], **WINDOWS_OPTION[1])
@fault_options
@click.option("--workload", metavar="PATTERN", default=None,
              help="Run Chakra traces, one per rank (trace.%d.et), instead of a scenario; "
                   "needs --topo (and pip install 'netsim[chakra]').")
@topo_option(help="Machine of --workload: a spec, a preset or a YAML file.")
@algo_option(help="Collective algorithm of --workload: a name, an MSCCL .xml, default (what "
                   "the machine's own library runs), auto (the fastest), or "
                   "one per op (allreduce=ring,alltoall=direct).")
@click.option("--comm-groups", type=click.Path(dir_okay=False), default=None,
              help="Process groups of --workload: ASTRA-sim's communicator-group JSON "
                   "({\"1\": [0, 1, 2, 3], ...}).")
def command(scenario, fmt, output, overwrite, report, heatmap, at, windows, fail_links,
            degrade_links, workload, topo_spec, algorithm, comm_groups):
    """Run SCENARIO (default: the built-in scenarios/default.yaml) and print its results.
    Fault options apply to every job, as a `faults:` list in the scenario's header does."""
    if output:
        check_writable(output, overwrite)
    faults = fault_specs(fail_links, degrade_links)
    if workload is not None and (scenario is not None or topo_spec is None):
        raise click.UsageError("--workload needs --topo SPEC and no SCENARIO")
    path = scenario or default_scenario_path()
    loaded = (workload_scenario(workload, topo_spec, algorithm=algorithm,
                                comm_groups=comm_groups) if workload
              else load_scenario(path))
    _check_figures(output, report, heatmap, len(loaded.jobs), overwrite)
    at_s = parse_time(at, "--at") if at is not None else None
    if (at is not None or windows is not None) and not heatmap:
        raise click.UsageError("--at and --windows draw the --heatmap over time: give "
                               "--heatmap FILE")
    timed = at is not None or windows is not None or (report and interactive_report())
    with recording_timelines() if timed else nullcontext():     # figures over time
        outcome = run_scenario(loaded, progress=progress_reporter(), faults=faults,
                               engine=engine_config())
    records = outcome.records
    for job in outcome.jobs:        # -v: what the engine ran for each run, one line each
        for key, result in job.results.items():
            log_engine(key, result.meta.get("engine"))
    if fmt == "table":
        title = f"scenario {loaded.name}" + (f": {loaded.description}" if loaded.description
                                               else "")
        text = _tables(outcome, title)
    else:
        doc = {"scenario": loaded.name, "description": loaded.description,
               "records": to_jsonable(records)}
        text = format_records(records, fmt, document=doc)
    emit(text, output, overwrite)
    _write_figures(outcome, report, heatmap, overwrite, at_s, windows)


# Long texts and NCCL's parts left out of the table (they stay in JSON and CSV: ``nccl``
# says algorithm/protocol/channels in one cell; -v prints the engine's path in one line),
# and units for the rest.
_HIDDEN = ("bound_detail", "machine_bound_detail", "candidates", "events", "flows",
           "library", "nccl_algorithm", "protocol", "channels", "nccl_model_s",
           "gpus_per_thread", "host_s", "ideal_links", "engine")
_PERCENT = lambda v: f"{100 * v:.1f}%"       # noqa: E731
_FORMATS = {"time_s": ("time", format_time), "bound_s": ("algo bound time", format_time),
            "machine_bound_s": ("machine bound time", format_time),
            # which bound is which: the algorithm's (efficiency) and the machine's
            "bound": ("algo bound by", None), "efficiency": ("algo eff.", _PERCENT),
            "machine_bound": ("machine bound by", None),
            "machine_efficiency": ("machine eff.", _PERCENT),
            "bytes": ("size", format_size), "size_bytes": ("size", format_size),
            "compute_s": ("compute", format_time), "exposed_comm_s": ("exposed comm",
                                                                      format_time),
            "total_s": ("total", format_time),     # --workload rows, per rank
            "algbw_GBps": ("algbw (GB/s)", None), "busbw_GBps": ("busbw (GB/s)", None),
            "max_link_util": ("max link util", _PERCENT),
            "nccl": ("nccl choice", None), "tt_metal": ("tt-metal choice", None)}


def _tables(outcome, title: str) -> str:
    """One table per job kind (their records have different columns), numbers with units."""
    groups: dict[str, list[dict]] = {}
    for job in outcome.jobs:
        groups.setdefault(job.kind, []).extend(job.records)
    parts = []
    for n, (kind, rows) in enumerate(groups.items()):
        keys: list[str] = []
        for row in rows:
            keys += [k for k in row if k not in keys and k not in _HIDDEN]
        columns = [(k, *_column(k)) for k in keys]
        heading = title if n == 0 else None
        if len(groups) > 1:
            heading = f"{heading}\n{kind} jobs" if heading else f"{kind} jobs"
        parts.append(format_records(rows, "table", columns=columns, title=heading))
    return "".join(parts)


def _column(key: str):
    header, unit = _FORMATS.get(key, (key, None))

    def show(value) -> str:
        if unit is not None and isinstance(value, (int, float)):
            return unit(value)
        return f"{value:.4g}" if isinstance(value, float) else str(value)
    return header, show


def _check_figures(output, report, heatmap, num_jobs: int, overwrite: bool) -> None:
    """Fail before simulating if any output (-o, --report, the --heatmap series) cannot
    be written or two of them land on one file."""
    from ..report import figure_format, heatmap_paths

    if heatmap:
        figure_format(heatmap)
    check_outputs([output, report, *(heatmap_paths(heatmap, num_jobs) if heatmap else [])],
                  overwrite=overwrite)


def _write_figures(outcome, report, heatmap, overwrite: bool, at=None, windows=None) -> None:
    from ..report import draw_scenario_heatmaps
    from ..report import write_scenario_report

    if heatmap:
        for target in draw_scenario_heatmaps(outcome, heatmap, overwrite=overwrite, at=at,
                                             windows=windows):
            wrote(target)
    if report and interactive_report():     # the links over time, hover and zoom
        from ..report import write_interactive_report

        write_interactive_report(report, outcome, overwrite=overwrite)
        wrote(report)
    elif report:
        write_scenario_report(report, outcome, overwrite=overwrite)
        wrote(report)
