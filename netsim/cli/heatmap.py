"""``netsim heatmap RESULT.json -o FILE.png``: draw every link of a result coloured by load.

The figure goes to ``-o``; stdout gets what was drawn (``--format table|json|csv``): the
file, the quantity, the links drawn, the largest value and its link.
"""

from __future__ import annotations

import click

from .options import check_writable, emit, format_option, format_records, overwrite_option
from .options import wrote
from .options import topo_option
from .options import output_file_option

__all__ = ["command"]


@click.command("heatmap")
@click.argument("result_file", type=click.Path(dir_okay=False))
@output_file_option(required=True, help="Figure to write: .png, .svg or .pdf.")
@click.option("--quantity", type=click.Choice(["utilization", "bytes", "busy"]),
              default="utilization", show_default=True,
              help="Utilisation (0..1), bytes carried, or busy time per link.")
@click.option("--minus", "minus", type=click.Path(dir_okay=False), default=None,
              help="Another result on the same links: draw RESULT minus this one.")
@topo_option(dest="spec", help="Topology spec to draw on (default: the one saved in "
                               "RESULT.json).")
@click.option("--title", default=None, help="Figure title.")
@click.option("--label-top", default=3, show_default=True, type=click.IntRange(min=0),
              help="Write the value beside this many of the hottest links.")
@format_option
@overwrite_option
def command(result_file, output, quantity, minus, spec, title, label_top, fmt, overwrite):
    """Draw the links of RESULT_FILE (a result JSON) coloured by QUANTITY into OUTPUT.

    RESULT_FILE is a result saved with its topology (``topology_spec`` and ``nodes``), or
    any result JSON with ``--topo SPEC``. With ``--minus B.json`` the colours show
    RESULT minus B on a diverging scale centred at zero.
    """
    from ..report import figure_format
    from ..report import (document_difference, document_topology, document_values,
                                  draw_heatmap, read_result_document)

    figure_format(output)
    check_writable(output, overwrite)
    doc = read_result_document(result_file)
    topology = document_topology(doc, spec, source=result_file)
    if minus is None:
        values = document_values(doc, topology, quantity, source=result_file)
    else:
        other = read_result_document(minus)
        values = document_difference(doc, other, topology, quantity, (result_file, minus))
    caption = f"A = {result_file}, B = {minus}" if minus else None
    drawn = draw_heatmap(topology, values, quantity=quantity, path=output, title=title,
                         diverging=minus is not None, label_top=label_top, caption=caption,
                         overwrite=overwrite,
                         faults=((doc.get("meta") or {}).get("faults") or ()) if minus is None
                         else ())
    wrote(output)
    record = {"topology": topology.name, **drawn.record()}
    emit(format_records([record], fmt, title=f"{result_file} on {topology.name}"),
         None, overwrite)
