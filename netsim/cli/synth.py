"""``netsim synth OP --topo SPEC -o schedule.json``: a collective synthesised for the machine.

Examples::

    netsim synth allreduce --topo torus:4x4,bw=50GB/s --size 1GiB -o ar.json
    netsim synth allgather --topo galaxy-wh --ranks 32 --seeds 3 --budget 20s -o ag.json
    netsim synth allreduce --topo torus:4x4,bw=50GB/s --schedule ar.json --size 64MiB

The table shows the synthesised time, the best fixed algorithm's and the lower bound; the
file holds the synthesised schedule (sizes as fractions of the size it was built for), with
the bound, its simulated time and the best fixed algorithm in its meta. ``--schedule FILE``
runs such a file instead (``netsim coll --algo synth`` synthesises and runs in one go).
"""

from __future__ import annotations

import click

from ..errors import InputError, unknown_name
from ..report import NCCL_COLUMNS, format_GBps
from ..run import (SYNTH_BUDGET_S, SYNTH_OPS, run_schedule_file, schedule_document,
                   synthesise)
from ..topology import parse_topology
from ..units import format_time, parse_size, parse_time
from .options import (alpha_option, alpha_seconds, check_outputs, chunks_option, emit,
                      format_option, format_records, overwrite_option, progress_reporter)
from .options import engine_config, wrote
from .options import ranks_option, size_option, topo_option
from .options import gamma_option, gamma_rate
from .options import output_file_option

__all__ = ["command", "SYNTH_COLUMNS"]


def _time(value) -> str:
    return format_time(value) if value is not None else "-"


#: Columns of ``coll --algo synth`` and ``synth``: synthesised vs best fixed vs bound.
SYNTH_COLUMNS = [("synth_s", "synth", _time), ("best_fixed", "best fixed", str),
                 ("best_fixed_s", "fixed time", _time), ("fallback", "fallback", str),
                 ("synth_chunks", "chunks", str), ("synth_waves", "waves", str)]


@click.command("synth")
@click.argument("op")
@topo_option(required=True,
             help="Machine: a spec (torus:4x4,bw=50GB/s), a preset or a YAML file.")
@ranks_option(help="Number of ranks (default: every endpoint), on the first endpoints.")
@size_option(help="Message size (nccl-tests meaning) [1GiB; a --schedule file: its own].")
@chunks_option
@click.option("--seeds", type=click.IntRange(min=1), default=1, show_default=True,
              help="Seeds tried per depth (random tie-breaks of the greedy).")
@click.option("--budget", default=None,
              help=f"Time budget of the search (e.g. 10s) [{SYNTH_BUDGET_S:g}s].")
@alpha_option
@gamma_option
@click.option("--schedule", "schedule_file", type=click.Path(dir_okay=False), default=None,
              help="Run this schedule file (from netsim synth -o) instead of synthesising.")
@format_option
@output_file_option(help="Write the synthesised schedule (JSON) to this file.")
@overwrite_option
def command(op, topo_spec, ranks, size, chunks, seeds, budget, alpha, gamma, schedule_file,
            fmt, output, overwrite):
    """Synthesise collective OP (allgather, reducescatter, allreduce) for the links the
    ranks have, compare it with the best fixed algorithm and the lower bound, and write it
    with -o; or run a file written so with --schedule."""
    from ..algorithms import AlgoOptions

    if op not in SYNTH_OPS:
        raise unknown_name("synthesised collective", op, SYNTH_OPS)
    if schedule_file is not None and output is not None:
        raise click.UsageError("give -o (synthesise) or --schedule (run a file), not both")
    check_outputs([output], overwrite=overwrite)
    alpha_s = alpha_seconds(alpha)
    topology = parse_topology(topo_spec)
    if schedule_file is not None:
        run = run_schedule_file(op, topology, schedule_file, size, alpha=alpha_s,
                                progress=progress_reporter(op), engine=engine_config())
        emit(format_records([run.record()], fmt, columns=NCCL_COLUMNS,
                            title=f"{op} on {run.topology} from {schedule_file}: {run.ranks} "
                                  f"ranks"), None, False)
        return
    budget_s = parse_time(budget, "--budget") if budget is not None else SYNTH_BUDGET_S
    if not budget_s > 0:
        raise InputError(f"--budget must be a time > 0 (e.g. 10s), got {budget!r}")
    rate = gamma_rate(gamma)
    message = parse_size(size if size is not None else "1GiB", "--size")
    if message <= 0:
        raise InputError(f"--size must be > 0 bytes, got {size!r}")
    count = ranks if ranks is not None else topology.num_endpoints
    if count < 2:       # nothing to send: no schedule, no bus bandwidth to report
        raise InputError(f"--ranks: {op} needs at least 2 ranks to synthesise, got {count}"
                         + ("" if ranks is not None else f" (the endpoints of "
                            f"{topology.name!r})"))
    schedule, run = synthesise(op, topology, message, ranks=ranks,
                               options=AlgoOptions(chunks=chunks, gamma=rate),
                               alpha=alpha_s, seeds=seeds, budget_s=budget_s,
                               engine=engine_config())
    record = run.record()
    if output is not None:
        import json

        from ..outputs import write_atomic

        write_atomic(output, json.dumps(schedule_document(schedule), indent=1), overwrite)
        wrote(f"{output} ({schedule.num_sends} sends)")
    note = (f"; fallback: {run.best_fixed} is faster" if run.fallback else "")
    emit(format_records([record], fmt, columns=NCCL_COLUMNS + SYNTH_COLUMNS,
                        title=f"{op} synthesised for {run.topology}: {run.ranks} ranks, "
                              f"{format_GBps(run.busbw_GBps)} GB/s busbw{note}"), None, False)
