"""``netsim schema [KIND]``: print the JSON Schema of scenario, topology, flow or schedule files."""

from __future__ import annotations

import json

import click

from ..run import FILE_KINDS, file_schema
from .options import emit, output_option, overwrite_option

__all__ = ["command"]


@click.command("schema")
@click.argument("kind", required=False, default="scenario",
                type=click.Choice(sorted(FILE_KINDS)))
@output_option
@overwrite_option
def command(kind, output, overwrite):
    """Print the JSON Schema of KIND files (default: scenario), for editors and
    validators; unit fields take numbers in SI units or strings such as "450GB/s"."""
    emit(json.dumps(file_schema(kind), indent=1) + "\n", output, overwrite)
