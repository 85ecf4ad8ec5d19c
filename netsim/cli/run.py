"""``netsim run [SCENARIO.yaml]``: run a scenario (the built-in default without an argument)."""

from __future__ import annotations

import click

from ..scenario import default_scenario_path, load_scenario, run_scenario
from ..units import format_size, format_time
from .options import (check_writable, emit, fault_options, fault_specs, format_option,
                      format_records, output_option, overwrite_option, progress_reporter,
                      to_jsonable)

__all__ = ["command"]

_COLUMNS = None


@click.command("run")
@click.argument("scenario", required=False, type=click.Path(dir_okay=False))
@format_option
@output_option
@overwrite_option
@fault_options
def command(scenario, fmt, output, overwrite, fail_links, degrade_links):
    """Run SCENARIO (default: the built-in scenarios/default.yaml) and print its results.
    Fault options apply to every job, as a `faults:` list in the scenario's header does."""
    if output:
        check_writable(output, overwrite)
    faults = fault_specs(fail_links, degrade_links)
    path = scenario or default_scenario_path()
    loaded = load_scenario(path)
    outcome = run_scenario(loaded, progress=progress_reporter(), faults=faults)
    records = outcome.records
    if fmt == "table":
        shown = [{**r, **({"time": format_time(r["time_s"])} if "time_s" in r else {}),
                  **({"size": format_size(r["bytes"])} if "bytes" in r else {})}
                 for r in records]
        title = f"scenario {loaded.name}" + (f": {loaded.description}" if loaded.description
                                               else "")
        text = format_records([{k: v for k, v in r.items() if k not in ("time_s", "bytes")}
                               for r in shown], "table", title=title)
    else:
        doc = {"scenario": loaded.name, "description": loaded.description,
               "records": to_jsonable(records)}
        text = format_records(records, fmt, document=doc)
    emit(text, output, overwrite)
