"""Symmetry is beauty, before the schedule exists: a block schedule whose blocks are one
class each is simulated with one send per block.

A :class:`~netsim.schedule.BlockSchedule` is ``blocks`` copies of the same m sends, block
dependencies going member by member through permutations. Route one block and look for an
equitable partition of it alone (:func:`~netsim.engine.symmetry.find_classes`). If its m
sends form a single class, the partition of the full schedule into

* ops: one class per block;
* sub-flows: (block, sub-flow class of the one-block partition);
* links: the one-block link classes

is equitable too: every op of block b has the same kind, bytes and per-message overhead,
and exactly one dependency in block b' per block dependency (b, b', p) since p is a
permutation (one successor likewise); sub-flows and links inherit the one-block counts,
because every block puts the same sub-flows on the same links. So the run on one
representative per class (the module docstring of :mod:`.symmetry`) is exact, member by
member, and never needs the full schedule: a 16,384-rank ring all-reduce (268 million
sends) is 32,766 representative sends. When the one-block sends are not one class (a ring
laid over links of unequal capacity or unequal distances), :func:`simulate_blocks` returns
None and the caller runs the expanded schedule.

>>> import numpy as np
>>> from netsim.topology import ring
>>> from netsim.algorithms.rings import ring_blocks
>>> from netsim.algorithms.options import AlgoOptions
>>> topo = ring(8, bandwidth=1e9)
>>> options = AlgoOptions(chunks=1, topology=topo, extra={"annotate": False})
>>> blocks = ring_blocks("allreduce", 8, 8e9, options,
...                      reduce_scatter=True, all_gather=True)
>>> result = simulate_blocks(topo, blocks, topo.endpoints)
>>> round(result.makespan, 9), result.num_flows        # 2 (n-1)/n x 8 GB at 1 GB/s
(14.0, 112)
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..schedule import SEND, BlockSchedule, Schedule
from .config import EngineConfig
from .executor import _Execution, _make_result, symmetry_meta
from .result import PerBlock, Result
from .symmetry import QuotientRoutes, find_classes, quotient

__all__ = ["simulate_blocks", "BYTES_PER_BLOCK"]

#: Memory per block of the block schedule and its one-send-per-block run (dependency
#: arrays, the quotient's ops, sub-flows and event state; a generous figure).
BYTES_PER_BLOCK = 2048


def simulate_blocks(topology, blocks: BlockSchedule, placement: np.ndarray, *, router=None,
                    overhead: float = 0.0, progress=None, tolerance: float = 0.0,
                    config: EngineConfig | None = None) -> Result | None:
    """The :class:`Result` of the expanded schedule, computed on one send per block; None
    when one block's sends are not a single symmetry class (see the module docstring).

    ``placement`` maps ranks to topology nodes; ``overhead`` (s) is the per-message cost
    of every send (one value). Per-op arrays of the result are the full schedule's (op
    ``b * m + i``), kept per block until read (:class:`~netsim.engine.result.PerBlock`):
    the run needs memory per block, not per send; link loads are every link's.
    ``config`` is the engine's (:class:`~netsim.engine.config.EngineConfig`); None too
    when it turns the symmetry search off.
    """
    from . import route_schedule

    one = blocks.block()
    routes = route_schedule(topology, one, np.asarray(placement, dtype=np.int64), router)
    config = EngineConfig() if config is None else config
    if not config.searches_symmetry:          # the reference, or symmetry off
        return None
    classes = find_classes(one, routes, topology.bandwidth, overhead=float(overhead),
                           min_subflows=0, config=config)
    if classes is None or int(classes.op.max()) != 0:
        return None
    q1, r1, capacity, _, _ = quotient(one, routes, topology.bandwidth, classes, None,
                                      float(overhead))
    n_blocks, m = blocks.blocks, blocks.sends_per_block
    schedule = _block_quotient(blocks, q1)
    subs = len(r1.sub_req)
    lengths = np.tile(np.diff(np.asarray(r1.path_ptr, dtype=np.int64)), n_blocks)
    path_ptr = np.zeros(lengths.size + 1, np.int64)
    np.cumsum(lengths, out=path_ptr[1:])
    q_routes = QuotientRoutes(
        src=np.tile(r1.src, n_blocks), dst=np.tile(r1.dst, n_blocks),
        sub_req=np.repeat(np.arange(n_blocks, dtype=np.int64), subs),
        sub_frac=np.tile(r1.sub_frac, n_blocks), path_ptr=path_ptr,
        path_links=np.tile(r1.path_links, n_blocks),
        path_weight=np.tile(r1.path_weight, n_blocks),
        sub_latency=np.tile(r1.sub_latency, n_blocks))
    run = _Execution(topology, schedule, q_routes, overhead=float(overhead), not_before=None,
                     progress=progress, record_timeline=False, capacity=capacity,
                     weight=q_routes.path_weight, tolerance=tolerance, config=config).run()
    # every block puts one block's bytes on each link
    hops = np.diff(np.asarray(routes.path_ptr, dtype=np.int64))
    one_bytes = np.bincount(np.asarray(routes.path_links, dtype=np.intp),
                            weights=np.repeat(blocks.nbytes * np.asarray(routes.sub_frac), hops),
                            minlength=topology.num_links)
    # one tag for every op: a read-only view, not 8 bytes per op
    tags = SimpleNamespace(tag=np.broadcast_to(np.int64(blocks.tag), (n_blocks * m,)),
                           tags=blocks.tags)
    return _make_result(
        topology, tags,
        PerBlock(run.op_release, m), PerBlock(run.op_start, m), PerBlock(run.op_finish, m),
        one_bytes * n_blocks, run.link_busy[classes.link], run.link_peak[classes.link],
        run.events, n_blocks * len(routes.sub_req), None,
        {"symmetry_classes": {"ops": int(n_blocks), "flows": int(len(run.sub_op)),
                              "links": int(run.n_links)},
         "blocks": {"blocks": int(n_blocks), "sends_per_block": int(m)},
         "engine": {**run.engine_meta(),
                    "symmetry": {**symmetry_meta(n_blocks * len(routes.sub_req),
                                                 len(run.sub_op)), "blocks": int(n_blocks)}}})


def _block_quotient(blocks: BlockSchedule, q1: Schedule) -> Schedule:
    """One send per block (the one-block representative's), block dependencies each once."""
    n_blocks = blocks.blocks
    owner = np.repeat(np.arange(n_blocks, dtype=np.int64), np.diff(blocks.dep_ptr))
    pair = np.unique(owner * n_blocks + np.asarray(blocks.dep_idx, dtype=np.int64))
    dep_ptr = np.zeros(n_blocks + 1, np.int64)
    np.cumsum(np.bincount(pair // n_blocks, minlength=n_blocks), out=dep_ptr[1:])
    return Schedule(num_ranks=blocks.num_ranks, kind=np.full(n_blocks, SEND, np.int8),
                    src=np.full(n_blocks, int(q1.src[0]), np.int64),
                    dst=np.full(n_blocks, int(q1.dst[0]), np.int64),
                    nbytes=np.full(n_blocks, float(q1.nbytes[0])), seconds=np.zeros(n_blocks),
                    dep_ptr=dep_ptr, dep_idx=pair % n_blocks,
                    tag=np.full(n_blocks, blocks.tag, np.int64), tags=blocks.tags)
