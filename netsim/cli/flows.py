"""``netsim flows FILE``: simulate explicit flows on explicit links or a generated machine.

FILE is a JSON flow file or a flow table (``.npz``, ``.parquet``). With ``-o``, the
output's suffix picks the result format when ``--format`` is not given: ``.json``,
``.csv``, or the columns of ``.npz`` and ``.parquet`` (per-flow id, start, finish).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from pathlib import Path

import click

from ..errors import NetsimError
from ..outputs import write_atomic
from ..units import format_rate, format_size, format_time
from .options import (alpha_option, alpha_seconds, check_writable, emit,
                      envelope, fault_options, fault_specs, format_option, format_records,
                      model_option, tolerance_option,
                      output_option, overwrite_option, progress_reporter)
from .options import engine_config, log_engine, packet_option
from .options import wrote

__all__ = ["command"]


@click.command("flows")
@click.argument("flow_file", type=click.Path(dir_okay=False))  # .json, .npz, .parquet
@format_option
@output_option
@overwrite_option
@alpha_option
@fault_options
@model_option
@packet_option
@tolerance_option
def command(flow_file, fmt, output, overwrite, alpha, fail_links, degrade_links,
            model, packet, tolerance):
    """Simulate FLOW_FILE and print per-flow times and per-link loads."""
    # The engine, its solvers and the file readers load here, not for --help.
    from ..report import flow_records_fast, flow_result_csv, json_bytes, write_flow_result
    from ..run import (flow_records_with_model, link_records_with_queues, machine_costs,
                       resolve_faults, simulate_flows)
    from ..schedule import load_flow_file, require_pyarrow

    suffix = Path(output).suffix.lower() if output else ""
    if output:
        check_writable(output, overwrite)
        if suffix == ".parquet":
            require_pyarrow(output, "write")            # before the run, not after
        explicit = click.get_current_context().get_parameter_source("fmt")
        if suffix in (".json", ".csv") and explicit == click.core.ParameterSource.DEFAULT:
            fmt = suffix[1:]
    overhead_s = alpha_seconds(alpha)
    specs = fault_specs(fail_links, degrade_links)
    with _long_lived():
        flowset = load_flow_file(flow_file)
    overhead_s = machine_costs(flowset.topology, overhead_s, None)[0]
    try:
        result = simulate_flows(flowset, overhead=overhead_s, progress=progress_reporter(),
                                faults=resolve_faults(specs, flowset.topology), model=model,
                                packet=packet, tolerance=tolerance, engine=engine_config())
    except NetsimError as err:
        if str(err).startswith(("--", str(flow_file))):
            raise
        raise type(err)(f"{flow_file}: {err}") from None
    faults = _fault_records(specs, result)
    engine = result.meta.get("engine")
    log_engine(None, engine)        # -v: what the engine ran, in one line
    if suffix in (".npz", ".parquet"):
        write_flow_result(result, output, overwrite=overwrite)
        wrote(output)
        return
    error = result.meta.get("model_error")
    if fmt == "json" and model == "fluid":   # orjson: 65,280 flow records, fast
        with _long_lived():
            data = json_bytes(envelope(flow_records_fast(result), makespan=result.makespan,
                                       events=result.events, links=result.link_records(),
                                       **({"faults": faults} if faults else {}),
                                       **({"tolerance": tolerance} if tolerance else {}),
                                       **({"engine": engine} if engine else {})))
        if output is None:
            click.echo(data, nl=False)
        else:
            _emit_bytes(data, output, overwrite)
        return
    flow_rows = [] if fmt == "csv" and not error else flow_records_with_model(result)
    if fmt == "json":
        text = format_records(flow_rows, "json", document={
            "makespan": result.makespan, "events": result.events,
            "links": link_records_with_queues(result), **({"faults": faults} if faults else {}),
            **({"model": model} if model != "fluid" else {}),
            **({"engine": engine} if engine else {}),
            **({"model_error": error} if error else {})})
    elif fmt == "csv":
        text = flow_result_csv(result) if not error else format_records(flow_rows, "csv")
    elif fmt == "parquet":
        text = format_records(flow_rows, fmt)
    else:
        made = (f"{result.events} packet hops" if model == "packet"
                else f"{result.events} events")
        if error:
            made += (f"; packet model {format_time(error['packet_time_s'])}, fluid error "
                     f"{100 * error['makespan_error']:+.2f}%")
        flows = format_records(flow_rows[:50], "table", columns=_flow_columns(flow_rows),
                               title=f"flows ({_LABEL[model]}"
                                     f"makespan {format_time(result.makespan)}, {made})")
        links = sorted(link_records_with_queues(result, only_used=True),
                       key=lambda r: -r["utilization"])
        text = flows + format_records(links[:20], "table", columns=_link_columns(links),
                                      title="busiest links")
        if faults:
            text += format_records(faults, "table", title="faults")
    emit(text, output, overwrite)


@contextmanager
def _long_lived():
    """Build many acyclic objects (a flow file's records and columns, result records) with
    the cyclic garbage collector off, then move the survivors out of its scans for good
    (``gc.freeze``). Otherwise its passes over the half a million objects of a 65,280-flow
    file cost about 0.3 s of a 1.5 s run; the objects are still freed as usual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


_LABEL = {"fluid": "", "packet": "packet model, ", "both": "fluid "}


def _fault_records(specs, result) -> list[dict]:
    """One row per fault: as given, its time, links and the flows it re-routed."""
    applied = result.meta.get("faults", [])
    ordered = sorted(specs, key=lambda spec: spec.time)   # the engine's order of application
    return [{"fault": spec.label, "time_s": entry["time"], "links": len(entry["links"]),
             "rerouted_flows": entry["rerouted_flows"]}
            for spec, entry in zip(ordered, applied)]


def _emit_bytes(data: bytes, output: str, overwrite: bool) -> None:
    """Write ``data`` atomically to ``output`` (as :func:`emit` does text)."""
    write_atomic(output, data, overwrite)
    wrote(output)


def _us(value) -> str:
    return f"{value * 1e6:.6g}"


def _flow_columns(rows) -> list:
    """Flow table columns: times in us, the packet model's columns as they come."""
    keys = list(dict.fromkeys(k for row in rows[:50] for k in row))

    def column(k: str):
        if k.endswith("_s"):
            return k, f"{k.removesuffix('_s').replace('_', ' ')} (us)", _us
        if k == "error":                      # the packet model's relative error
            return k, "fluid error", lambda v: f"{100 * v:+.3g}%"
        return k, k, str
    return [column(k) for k in keys]


def _link_columns(rows) -> list:
    """Link table columns with units (JSON and CSV keep SI numbers)."""
    shown = {"bytes": ("bytes", lambda v: format_size(v)),
             "bandwidth_Bps": ("bandwidth", format_rate),
             "utilization": ("utilization", lambda v: f"{100 * v:.1f}%"),
             "busy_s": ("busy (us)", _us), "peak_flows": ("peak flows", str)}
    keys = list(dict.fromkeys(k for row in rows[:20] for k in row))
    return [(k, *shown.get(k, (k, lambda v: f"{v:.6g}" if isinstance(v, float) else str(v))))
            for k in keys]
