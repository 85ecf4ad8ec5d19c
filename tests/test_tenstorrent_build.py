"""The tt-metal CCL builders (algorithms.tenstorrent): what every send of a phase waits for.

The builder adds a step's hops as one block of sends per slice; these tests state, from
the hop list alone, what each send must wait for, so the block arithmetic is checked
against the hop-by-hop definition in the module docstring."""

from __future__ import annotations

import numpy as np
import pytest

from netsim.algorithms import AlgoOptions, build_schedule
from netsim.algorithms.tenstorrent import hop_paths
from netsim.schedule import SEND
from netsim.topology import ring


def _deps(schedule, op: int) -> set[int]:
    return set(schedule.dep_idx[schedule.dep_ptr[op]:schedule.dep_ptr[op + 1]].tolist())


@pytest.mark.parametrize("name", ["tt_ring", "tt_line"])
@pytest.mark.parametrize("n", [2, 3, 4, 5])
@pytest.mark.parametrize("chunks", [1, 3])
def test_an_all_gather_send_waits_for_its_link_and_for_the_slice_it_forwards(name, n, chunks):
    """Sends go step by step, slice by slice, a step's hops in hop order. A send waits for
    the latest send over its link in an earlier block (two hops of a 2-rank ring share
    one) and for the send that brought its sender the slice it forwards."""
    schedule = build_schedule("allgather", name, n, 3e6,
                              AlgoOptions(topology=ring(n), chunks=chunks,
                                          extra={"annotate": False}))
    sends = np.flatnonzero(schedule.kind == SEND)
    hops = hop_paths(n, name == "tt_ring")
    steps = max(h[0] for h in hops)
    blocks = [[h for h in hops if h[0] == k] for k in range(1, steps + 1)
              for _ in range(chunks)]
    assert sends.size == sum(len(b) for b in blocks)
    link_last: dict[tuple[int, int], int] = {}
    held: dict[tuple[int, int, int, int], int] = {}      # (rank, owner, half, slice) -> op
    at = 0
    for b, block in enumerate(blocks):
        j = b % chunks
        ops = sends[at:at + len(block)]
        at += len(block)
        for (_, src, dst, owner, halves), op in zip(block, ops.tolist()):
            assert (schedule.src[op], schedule.dst[op]) == (src, dst)
            assert schedule.nbytes[op] == pytest.approx(len(halves) * 3e6 / (n * 2 * chunks))
            deps = _deps(schedule, op)
            if (src, dst) in link_last:
                assert link_last[(src, dst)] in deps
            for h in halves:
                if (src, owner, h, j) in held:
                    assert held[(src, owner, h, j)] in deps
        for (_, src, dst, owner, halves), op in zip(block, ops.tolist()):
            link_last[(src, dst)] = op
            for h in halves:
                held[(dst, owner, h, j)] = op
