"""``netsim plugins``: the installed plugins, what they add and where they come from."""

from __future__ import annotations

import click

from ..run import PLUGIN_GROUPS, load_plugins
from .options import emit, format_option, format_records, output_option, overwrite_option

__all__ = ["command"]


@click.command("plugins")
@format_option
@output_option
@overwrite_option
def command(fmt, output, overwrite):
    """List installed plugins (entry points in the groups netsim.topologies,
    netsim.algorithms, netsim.placements, netsim.jobs): name, package, version, where
    the code lives, and whether it loaded."""
    records = [plugin.record() for plugin in load_plugins()]
    if not records and fmt == "table":
        groups = "\n".join(f"  {group}: {what}" for group, what in PLUGIN_GROUPS.items())
        emit(f"no plugins installed; a package adds them with entry points in:\n{groups}\n",
             output, overwrite)
        return
    emit(format_records(records, fmt, title="plugins"), output, overwrite)
