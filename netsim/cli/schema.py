"""``netsim schema [KIND]``: the JSON Schema of scenario, topology, flow or schedule files;
``netsim schema --records COMMAND``: that of a command's JSON output, every field with its
unit."""

from __future__ import annotations

import json

import click

from ..run import FILE_KINDS, RECORD_FIELDS, file_schema, record_schema
from .options import emit, output_option, overwrite_option

__all__ = ["command"]


@click.command("schema")
@click.argument("kind", required=False, default="scenario",
                type=click.Choice(sorted(FILE_KINDS)))
@click.option("--records", "records", default=None, type=click.Choice(sorted(RECORD_FIELDS)),
              help="Print the schema of this command's --format json output instead: every "
                   "record field with its unit and meaning (CSV and Parquet hold the same "
                   "fields as columns).")
@output_option
@overwrite_option
def command(kind, records, output, overwrite):
    """Print the JSON Schema of KIND files (default: scenario), for editors and
    validators; unit fields take numbers in SI units or strings such as "450GB/s"."""
    schema = record_schema(records) if records else file_schema(kind)
    emit(json.dumps(schema, indent=1) + "\n", output, overwrite)
