"""``netsim topo SPEC``: summarise a topology (generator spec, preset name or YAML file)."""

from __future__ import annotations

import click

from ..topology import parse_topology, summarize
from ..units import format_rate
from .options import emit, format_records, output_option, overwrite_option

__all__ = ["command"]


def _human(key: str, value):
    if isinstance(value, float) and ("bandwidth" in key or key.endswith("_Bps")):
        return format_rate(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


@click.command("topo")
@click.argument("spec", required=False)
@click.option("--list", "list_presets", is_flag=True, help="List the machine catalogue.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "parquet",
                                                    "astra-sim", "simgrid"]),
              default="table", show_default=True,
              help="Output format; astra-sim: the network YAML of ASTRA-sim's analytical "
                   "backend; simgrid: a SimGrid platform (XML) with netsim's routes. Both "
                   "are read back wherever a topology file is taken.")
@output_option
@overwrite_option
def command(spec, list_presets, fmt, output, overwrite):
    """Summarise SPEC: `mesh:8x4,bw=12.5GB/s,lat=711ns,links=4`, `fattree:k=8`, a preset, a file."""
    if list_presets:
        from ..topology import preset_table

        records = preset_table()
        emit(format_records(records, fmt, title="machine catalogue"), output, overwrite)
        return
    if spec is None:
        raise click.UsageError("give a topology SPEC (e.g. mesh:4x4) or --list")
    topology = parse_topology(spec)
    if fmt == "astra-sim":
        from ..interop import astra_network_yaml

        emit(astra_network_yaml(topology), output, overwrite)
        return
    if fmt == "simgrid":
        from ..interop import simgrid_platform

        text, notes = simgrid_platform(topology)
        for note in notes:
            click.echo(f"note: {note}", err=True)
        emit(text, output, overwrite)
        return
    for note in topology.meta.get("notes", ()):      # approximations made reading a file
        click.echo(f"note: {note}", err=True)
    summary = summarize(topology)
    if fmt == "table":
        rows = [{"field": k, "value": _human(k, v)} for k, v in summary.items()]
        text = format_records(rows, "table", title=f"topology {summary.get('name', spec)}")
    else:
        text = format_records([summary], fmt)
    emit(text, output, overwrite)
