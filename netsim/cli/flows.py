"""``netsim flows FILE.json``: simulate explicit flows on explicit links or a generated machine."""

from __future__ import annotations

import json

import click

from ..flowfile import load_flow_file, simulate_flows
from ..units import format_time
from .options import (check_writable, emit, format_option, format_records, output_option,
                      overwrite_option, progress_reporter, to_jsonable)

__all__ = ["command"]


@click.command("flows")
@click.argument("flow_file", type=click.Path(dir_okay=False))
@format_option
@output_option
@overwrite_option
@click.option("--overhead", default="0", help="Per-message software overhead (e.g. 2us).")
def command(flow_file, fmt, output, overwrite, overhead):
    """Simulate FLOW_FILE and print per-flow times and per-link loads."""
    from ..units import parse_time

    if output:
        check_writable(output, overwrite)
    flowset = load_flow_file(flow_file)
    result = simulate_flows(flowset, overhead=parse_time(overhead, "--overhead"),
                            progress=progress_reporter())
    if fmt == "json":
        doc = {"makespan": result.makespan, "flows": result.flow_records(),
               "links": result.link_records(), "events": result.events}
        text = json.dumps(to_jsonable(doc), indent=1) + "\n"
    elif fmt == "csv":
        text = result.flows_csv()
    else:
        flows = format_records(result.flow_records()[:50], "table",
                               title=f"flows (makespan {format_time(result.makespan)}, "
                                     f"{result.events} events)")
        links = sorted(result.link_records(only_used=True), key=lambda r: -r["utilization"])
        text = flows + format_records(links[:20], "table", title="busiest links")
    emit(text, output, overwrite)
