"""Collective records printed in the exact table layout of nccl-tests (``all_reduce_perf``
and friends), so that simulated and measured output can be laid side by side, diffed, and
read back by the tools that parse nccl-tests logs (``netsim coll --measured`` included).

The widths are those of nccl-tests' ``writeResultHeader`` and result rows (``%12li  %12li
%8s  %6s  %6i`` then, out-of-place and in-place, ``%7s  %6.2f  %6.2f  %6s``; times in us
with 2, 1 or 0 decimals below 100 us, below 10 ms, above). A simulation has one time per
size: it is printed in both the out-of-place and in-place columns; ``#wrong`` is ``N/A``
(nccl-tests' output without data checks). Counts are elements of 4-byte floats: per rank
for all-gather, reduce-scatter and all-to-all (per peer), as nccl-tests prints them.

>>> print(nccl_tests_table([{"op": "allreduce", "ranks": 8, "size_bytes": 1048576,
...                          "time_s": 2.5e-05, "algbw_GBps": 41.94, "busbw_GBps": 73.4}]),
...       end="")  # doctest: +NORMALIZE_WHITESPACE
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
     1048576        262144     float     sum      -1    25.00   41.94   73.40     N/A    25.00   41.94   73.40     N/A
# Avg bus bandwidth    : 73.4
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["nccl_tests_table", "nccl_tests_log", "PROGRAMS"]

_PER_RANK = {"allgather": True, "reducescatter": True, "alltoall": True}
_REDOP = {"allreduce": "sum", "reduce": "sum", "reducescatter": "sum"}
_ROOTED = ("broadcast", "reduce")


def _time_us(seconds: float) -> str:
    us = seconds * 1e6
    return f"{us:7.0f}" if us >= 10000.0 else f"{us:7.1f}" if us >= 100.0 else f"{us:7.2f}"


#: nccl-tests' program of each op (its ``# Collective test starting:`` line).
PROGRAMS = {"allreduce": "all_reduce_perf", "allgather": "all_gather_perf",
            "reducescatter": "reduce_scatter_perf", "alltoall": "alltoall_perf",
            "broadcast": "broadcast_perf", "reduce": "reduce_perf"}


def nccl_tests_log(records: Sequence[dict[str, Any]], *, root: int = 0) -> str:
    """``records`` as a whole nccl-tests log: its header (the program, ``nThread 1 nGpus
    G`` with G the records' ``gpus_per_thread``, one ``Rank`` line per rank naming the
    machine as the device), :func:`nccl_tests_table`, then the ``Out of bounds values``
    and ``Avg bus bandwidth`` lines and the closing line, so that the tools reading
    nccl-tests logs (``netsim coll --measured`` too) read it as one.

    >>> log = nccl_tests_log([{"op": "allreduce", "ranks": 2, "size_bytes": 1024,
    ...                        "time_s": 1e-05, "algbw_GBps": 0.1, "busbw_GBps": 0.1,
    ...                        "topology": "dgx-h100"}])
    >>> log.splitlines()[0], log.splitlines()[-1]
    ('# Collective test starting: all_reduce_perf', '# Collective test concluded: all_reduce_perf')
    """
    op = records[0]["op"] if records else "allreduce"
    program = PROGRAMS.get(op, op)
    ranks = int(records[0]["ranks"]) if records else 1
    gpus = max(1, int(records[0].get("gpus_per_thread") or 1)) if records else 1
    sizes = [int(r["size_bytes"]) for r in records] or [0]
    machine = records[0].get("topology", "netsim") if records else "netsim"
    head = [f"# Collective test starting: {program}\n",
            f"# nThread 1 nGpus {gpus} minBytes {min(sizes)} maxBytes {max(sizes)} step: "
            f"2(factor) warmup iters: 0 iters: 1 agg iters: 1 validation: 0 graph: 0\n",
            "#\n", "# Using devices\n"]
    head += [f"#  Rank {r:2d} Group  0 Pid      0 on     netsim device {r % max(gpus, 1):2d} "
             f"[simulated] {machine}\n" for r in range(ranks)]
    head.append("#\n")
    table = nccl_tests_table(records, root=root)
    body, avg = table[:table.rindex("# Avg bus bandwidth")], \
        table[table.rindex("# Avg bus bandwidth"):]
    return ("".join(head) + body + "# Out of bounds values : 0 OK\n" + avg + "#\n"
            + f"# Collective test concluded: {program}\n")


def nccl_tests_table(records: Sequence[dict[str, Any]], *, root: int = 0) -> str:
    """``records`` (``CollectiveRun.record()`` rows of one op) as nccl-tests prints them,
    ending with its ``# Avg bus bandwidth`` line (the mean busbw of the rows)."""
    lines = [
        "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
        "          \n" % ("", "", "", "", ""),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n"
        % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
           "time", "algbw", "busbw", "#wrong"),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n"
        % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
           "(GB/s)", ""),
    ]
    busbws = []
    for record in records:
        op, ranks, size = record["op"], int(record["ranks"]), int(record["size_bytes"])
        count = size // 4 // (ranks if _PER_RANK.get(op) else 1)
        head = "%12i  %12i  %8s  %6s  %6i" % (size, count, "float", _REDOP.get(op, "none"),
                                               root if op in _ROOTED else -1)
        algbw, busbw = record.get("algbw_GBps") or 0.0, record.get("busbw_GBps") or 0.0
        place = "  %7s  %6.2f  %6.2f  %6s" % (_time_us(record["time_s"]), algbw, busbw, "N/A")
        lines.append(head + place + place + "\n")
        busbws.append(busbw)
    mean = sum(busbws) / len(busbws) if busbws else 0.0
    lines.append("# %-20s : %g \n" % ("Avg bus bandwidth", mean))
    return "".join(lines)
