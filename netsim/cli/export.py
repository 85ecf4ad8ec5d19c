"""``netsim export FORMAT OP --topo SPEC``: a collective's schedule as other tools' files.

* ``msccl``: MSCCL XML (``-o algo.xml``), which MSCCL and ``netsim coll --algo algo.xml``
  run;
* ``chakra``: one Chakra execution trace per rank (``-o 'trace.%d.et'``) of point-to-point
  sends and receives, which ASTRA-sim and ``netsim run --workload`` run.

The schedule is the one ``netsim coll`` simulates for the same options (``auto``: the
fastest algorithm). What the format cannot express is refused in one line.
"""

from __future__ import annotations

import click

from ..errors import InputError, unknown_name
from ..run import collective_schedule
from .options import check_outputs, chunks_option, emit, overwrite_option
from .options import engine_config, wrote
from .options import algo_option, ranks_option, size_option, topo_option
from .options import output_file_option

__all__ = ["command"]

FORMATS = ("msccl", "chakra")


@click.command("export")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(FORMATS))
@click.argument("op")
@topo_option(required=True,
             help="Machine: a spec, a preset or a YAML file (topology-aware algorithms and "
                  "auto use it).")
@algo_option(default="auto", help="Algorithm name (or auto for the fastest that applies).")
@size_option(default="64MiB",
             help="Message size (nccl-tests meaning); Chakra traces store bytes.")
@ranks_option()
@chunks_option
@output_file_option(required=True,
                    help="Output file (msccl) or pattern with %d for the rank (chakra).")
@overwrite_option
def command(fmt, op, topo_spec, algorithm, size, ranks, chunks, output, overwrite):
    """Write collective OP's schedule as FORMAT (msccl or chakra)."""
    from ..algorithms import AlgoOptions, OPS

    if op not in OPS:
        raise unknown_name("collective", op, OPS)
    if fmt == "chakra":
        from ..interop import have_chakra, CHAKRA_MISSING

        if not have_chakra():
            raise InputError(CHAKRA_MISSING)
        if "%d" not in output:
            raise InputError(f"-o {output!r}: a Chakra export is one file per rank: give a "
                             f"pattern with %d (e.g. trace.%d.et)")
    else:
        check_outputs([output], overwrite=overwrite)
    schedule = collective_schedule(op, topo_spec, algorithm, size, ranks=ranks,
                                   options=AlgoOptions(chunks=chunks), engine=engine_config())
    if fmt == "msccl":
        from ..interop import schedule_to_msccl

        emit(schedule_to_msccl(schedule), output, overwrite)
    else:
        from ..interop import write_workload

        paths = write_workload(schedule, output, overwrite=overwrite)
        wrote(f"{len(paths)} traces: {paths[0]} .. {paths[-1]}")
